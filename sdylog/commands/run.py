"""`sdylog run FILE [-o OUT] [--db OUT.duckdb]`: the full pipeline."""
import click

from sdylog.cli import engine_option, reports_errors


@click.command()
@click.argument("file")
@click.option("-o", "--output", help="Write the propagated module here instead of stdout.")
@click.option("--db", help="Save every input and derived relation in this DuckDB file.")
@click.option("--report", "report_path", metavar="FILE.json",
              help="Write the whole report as JSON: values, sharded values, conflicts, the reshards and "
                   "collectives the module needs (op, location, shardings, bytes per device), times.")
@engine_option
@click.option("--quiet", "-q", is_flag=True, help="No report on stderr.")
@click.option("--verbose", "-v", is_flag=True, help="List the conflicts and the needed reshards and collectives in the report, with their locations.")
@reports_errors
def run(file, output, db, report_path, engine, quiet, verbose):
    """Propagate shardings through FILE as -sdy-propagation-pipeline does;
    print the module and a short report on stderr (values sharded, conflicts
    propagation left, the reshards and all-reduces the module needs to be
    partitioned with their bytes per device, time per phase)."""
    from sdylog import outputs
    from sdylog.commands.pipeline import Progress, report, report_json, run_pipeline

    if db == "-":
        raise click.BadParameter("a DuckDB file, not stdout", param_hint="--db")
    module_out = outputs.plan(output or "-", "-o")
    db_out = outputs.plan(db, "--db") if db else None
    report_out = outputs.plan(report_path, "--report") if report_path else None
    result = run_pipeline(file, engine=engine, progress=Progress())
    written = [(module_out, result.text())]
    if db_out:
        written.append((db_out, result.result.engine.save))
    text = None if quiet else report(result, verbose=verbose)
    if report_out:
        written.append((report_out, report_json(result)))
    outputs.write_all(written)
    if text is not None:
        click.echo(text, err=True)

