"""`sdylog query FILE RELATION [--where COL=VAL ...]`: a relation as a table."""
import click

from sdylog.cli import engine_option, reports_errors
from sdylog.mpmd.command import mpmd_options


@click.command()
@click.argument("file")
@click.argument("relation")
@click.option("--where", "-w", multiple=True, help="Keep tuples whose COLUMN equals VALUE.")
@click.option("--limit", type=click.IntRange(min=0), help="Print at most this many tuples.")
@engine_option
@click.option("--entry", default=None, help="MPMD: the partitioned function (default: @main).")
@mpmd_options
@reports_errors
def query(file, relation, where, limit, engine, entry, **mpmd):
    """Run the pipeline on FILE and print RELATION (an input fact relation of
    rules/schema.dl or one the propagation rules derive; or one of the MPMD
    rules, rules/mpmd/*.dl: placed, xfer, channel, ..., with the options of
    `sdylog mpmd`)."""
    from sdylog.commands.pipeline import run_pipeline
    from sdylog.datalog.table import format_relation
    from sdylog.mpmd.explain import mpmd_relations

    if relation in mpmd_relations() and relation not in _propagation_relations():
        from sdylog.mpmd.command import options_from
        from sdylog.mpmd.explain import mpmd_engine
        mpmd_rules = mpmd_engine(file, options_from(**mpmd, entry=entry))[0]
        click.echo(format_relation(mpmd_rules, relation, list(where), limit).rstrip("\n"))
        return

    result = run_pipeline(file, engine=engine)
    click.echo(format_relation(result.result.engine, relation, list(where), limit).rstrip("\n"))


def _propagation_relations() -> set:
    from sdylog.propagation.driver import propagation_program
    return set(propagation_program().relations)
