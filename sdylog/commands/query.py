"""`sdylog query FILE RELATION [--where COL=VAL ...]`: a relation as a table,
with names, ops and locations beside the ids; `sdylog query [FILE] --list`:
the relations with their columns and documentation."""
import click

from sdylog.cli import reports_errors
from sdylog.errors import SdylogError, UsageError
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
    not the ids of propagation's relations (`op`, `op_operand`, ...). On a
    module that places ops on devices (which propagation refuses), the input
    relations (`op`, `value`, ...) are the MPMD run's, and `--list FILE`
    lists that run's relations."""
    from sdylog.commands.relations import RUNS, every_relation, extras, format_list, relation_run
    from sdylog.datalog.table import render, select
    from sdylog.mpmd.command import options_from

    options = options_from(**mpmd, entry=entry)
    if list_:
        if relation is not None:
            raise click.UsageError("--list takes no RELATION")
        if file is None:
            click.echo(format_list(every_relation(), fmt), nl=False)
            return
        if _is_mpmd(file, mpmd):   # (propagation refuses it: the MPMD run's relations only)
            click.echo(format_list(every_relation({"mpmd": _mpmd_run(file, options)[0]}, ("mpmd",)), fmt), nl=False)
            return
        run = _run(file, keep_values=True)
        engines = {"propagation": run.result.engine, "reshard": _reshard_engine(run)}
        try:
            engines["mpmd"] = _mpmd_run(file, options)[0]
        except UsageError:
            raise
        except SdylogError:   # (a module the MPMD rules cannot take, a shard_map: its relations without sizes)
            pass
        click.echo(format_list(every_relation(engines, RUNS), fmt), nl=False)
        return
    if file is None or relation is None:
        raise click.UsageError("give FILE and RELATION (or --list)")
    which = relation_run(relation, lambda: _is_mpmd(file, mpmd))
    if which == "mpmd":
        from sdylog.mpmd.driver import mpmd_program
        engine, names = _mpmd_run(file, options)
        program = mpmd_program()
    else:
        run = _run(file, keep_values=which == "reshard")
        if which == "reshard":
            engine, names = _reshard_engine(run), run.reshard_names
            program = next(p for p in _reshard_programs() if relation in p.relations)
        else:   # (propagation's, and an unknown relation: its error names propagation's)
            from sdylog.propagation.driver import propagation_program
            engine, names, program = run.result.engine, run.names, propagation_program()
    sel = select(engine, relation, list(where), limit, extras(program, engine.decl(relation), names))
    click.echo(render(sel, fmt), nl=False)


def _is_mpmd(file, mpmd: dict) -> bool:
    from sdylog.simulate.mpmd import wants_mpmd
    return wants_mpmd(file, mpmd)


def _mpmd_run(file, options):
    """(engine, names for its ids) of the MPMD rules on FILE. The input's
    errors are rows to read; an option `sdylog mpmd` refuses (an --assign
    device beyond the device count) is bad usage here too."""
    from sdylog.commands.relations import FactNames
    from sdylog.mpmd.driver import check_assign_devices
    from sdylog.mpmd.explain import mpmd_engine
    engine, facts, names, _, filename = mpmd_engine(file, options)
    check_assign_devices(engine)
    return engine, FactNames(facts, names, filename)


def _reshard_programs() -> tuple:
    from sdylog.commands.relations import run_programs
    return run_programs("reshard")


def _reshard_engine(run):
    """The reshard rules' engine of the run, with the facts that tell the
    reshards the export wrote apart loaded (rules/reshard/why.dl's
    why_written*, as `sdylog explain` reads them)."""
    from sdylog.reshard.explain import load_written_origins
    load_written_origins(run)
    return run.needed.inventory.engine


def _run(file, keep_values: bool = False):
    """The pipeline on FILE, its ids named; `keep_values`: the input's
    values described too (their locations: what load_written_origins reads
    for the reshard rules' why_written*)."""
    from sdylog.commands.pipeline import run_pipeline
    from sdylog.progress import Progress
    return run_pipeline(file, name_ids=True, keep_values=keep_values, progress=Progress())
