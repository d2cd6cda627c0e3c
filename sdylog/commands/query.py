"""`sdylog query FILE RELATION [--where COL=VAL ...]`: a relation as a table."""
import click

from sdylog.cli import engine_option, reports_errors


@click.command()
@click.argument("file")
@click.argument("relation")
@click.option("--where", "-w", multiple=True, help="Keep tuples whose COLUMN equals VALUE.")
@click.option("--limit", type=click.IntRange(min=0), help="Print at most this many tuples.")
@engine_option
@reports_errors
def query(file, relation, where, limit, engine):
    """Run the pipeline on FILE and print RELATION (an input fact relation of
    rules/schema.dl or one the propagation rules derive)."""
    from sdylog.commands.pipeline import run_pipeline
    from sdylog.datalog.table import format_relation

    result = run_pipeline(file, engine=engine)
    click.echo(format_relation(result.result.engine, relation, list(where), limit).rstrip("\n"))
