"""`sdylog query FILE RELATION [--where COL=VAL ...]`: a relation as a table,
with names, ops and locations beside the ids; `sdylog query [FILE] --list`:
the relations with their columns and documentation."""
import click

from sdylog.cli import reports_errors
from sdylog.datalog.table import FORMATS
from sdylog.mpmd.command import mpmd_options


@click.command()
@click.argument("file", required=False)
@click.argument("relation", required=False)
@click.option("--where", "-w", multiple=True,
              help="Keep tuples whose COLUMN equals VALUE (COL=VAL; VAL may be quoted: axis='model'). "
                   "Any column shown may be filtered on, names too: t_name=%3.")
@click.option("--limit", type=click.IntRange(min=0), help="Print at most this many tuples.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="A table for people, CSV or JSON for programs.")
@click.option("--list", "list_", is_flag=True,
              help="List the relations (input facts and derived) with their columns and what they mean "
                   "(with FILE: and their sizes for it).")
@click.option("--entry", default=None, help="MPMD: the partitioned function (default: @main).")
@mpmd_options
@reports_errors
def query(file, relation, where, limit, fmt, list_, entry, **mpmd):
    """Run the pipeline on FILE and print RELATION (an input fact relation of
    rules/schema.dl or one the propagation rules derive; one the reshard
    rules, rules/reshard/*.dl, derive with Shardy's full version on the
    module the pipeline leaves: needed (every reshard and collective it
    inserts), needed_bytes, needed_kind_bytes, why_route, why_pick,
    reshard_operand, greedy_choice, ...; or one of the MPMD rules, rules/mpmd/*.dl: placed,
    xfer, channel, ..., with the options of `sdylog mpmd`; `--list` names
    them all). A value id column (a Value or Tensor) gets its value's name
    beside it (`t_name`: `%3`, `x`, `@relu:%1`), an op id column its op and
    location (`op_kind`, `op_loc`). An MPMD relation's ids are the MPMD
    run's (the module with its calls inlined), named from that run: they are
    not the ids of propagation's relations (`op`, `op_operand`, ...)."""
    from sdylog.commands.relations import format_list, relation_list
    from sdylog.datalog.table import render, select
    from sdylog.propagation.driver import propagation_program
    from sdylog.reshard.costs import costs_program
    from sdylog.reshard.driver import reshard_program

    if list_:
        if relation is not None:
            raise click.UsageError("--list takes no RELATION")
        run = _run(file) if file else None
        rows = relation_list(propagation_program(), run.result.engine if run else None)
        listed = {r["relation"] for r in rows}
        for program in (reshard_program(), costs_program()):
            rows += [r for r in relation_list(program, run.needed.inventory.engine if run else None)
                     if r["relation"] not in listed]
            listed |= {r["relation"] for r in rows}
        click.echo(format_list(rows, fmt), nl=False)
        return
    if file is None or relation is None:
        raise click.UsageError("give FILE and RELATION (or --list)")
    from sdylog.mpmd.explain import mpmd_relations

    if relation in mpmd_relations() and relation not in propagation_program().relations:
        from sdylog.commands.relations import FactNames, extras
        from sdylog.mpmd.command import options_from
        from sdylog.mpmd.driver import mpmd_program
        from sdylog.mpmd.explain import mpmd_engine
        mpmd_rules, facts, names, _, filename = mpmd_engine(file, options_from(**mpmd, entry=entry))
        sel = select(mpmd_rules, relation, list(where), limit,
                     extras(mpmd_program(), mpmd_rules.decl(relation), FactNames(facts, names, filename)))
        click.echo(render(sel, fmt), nl=False)
        return
    from sdylog.commands.relations import extras

    run = _run(file)
    reshard_rules = next((p for p in (reshard_program(), costs_program()) if relation in p.relations), None)
    if reshard_rules is not None and relation not in propagation_program().relations:
        program, eng, names = reshard_rules, run.needed.inventory.engine, run.reshard_names
    else:
        program, eng, names = propagation_program(), run.result.engine, run.names
    sel = select(eng, relation, list(where), limit, extras(program, eng.decl(relation), names))
    click.echo(render(sel, fmt), nl=False)


def _run(file):
    from sdylog.commands.pipeline import run_pipeline
    from sdylog.progress import Progress
    return run_pipeline(file, name_ids=True, progress=Progress())
