"""`sdylog run FILE [-o OUT] [--db OUT.duckdb]`: the full pipeline."""
import click

from sdylog.cli import engine_option, reports_errors


@click.command()
@click.argument("file")
@click.option("-o", "--output", help="Write the propagated module here instead of stdout.")
@click.option("--db", help="Save every input and derived relation in this DuckDB file.")
@engine_option
@click.option("--quiet", "-q", is_flag=True, help="No report on stderr.")
@click.option("--verbose", "-v", is_flag=True, help="List the conflicts in the report, with their locations.")
@reports_errors
def run(file, output, db, engine, quiet, verbose):
    """Propagate shardings through FILE as -sdy-propagation-pipeline does;
    print the module and a short report on stderr (values sharded, conflicts
    propagation left, time per phase)."""
    from sdylog import outputs
    from sdylog.commands.pipeline import Progress, report, run_pipeline

    if db == "-":
        raise click.BadParameter("a DuckDB file, not stdout", param_hint="--db")
    module_out = outputs.plan(output or "-", "-o")
    db_out = outputs.plan(db, "--db") if db else None
    result = run_pipeline(file, engine=engine, progress=Progress())
    written = [(module_out, result.text())]
    if db_out:
        written.append((db_out, result.result.engine.save))
    outputs.write_all(written)
    if not quiet:
        click.echo(report(result, verbose=verbose), err=True)

