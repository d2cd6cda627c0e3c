"""`sdylog run FILE [-o OUT] [--db OUT.duckdb]`: the full pipeline."""
import click

from sdylog.cli import reports_errors


@click.command()
@click.argument("file")
@click.option("-o", "--output", help="Write the propagated module here instead of stdout.")
@click.option("--db", help="Save every input and derived relation in this DuckDB file (each a view named as "
                           "the relation, with value names and op locations beside their ids; the table "
                           "`relations` says what each is).")
@click.option("--report", "report_path", metavar="FILE.json",
              help="Write the whole report here as JSON: every value and its sharding, why values are not "
                   "sharded, the conflicts, every reshard and collective the module needs (op, location, "
                   "shardings, bytes per device), the time of each phase.")
@click.option("--quiet", "-q", is_flag=True, help="No report on stderr.")
@click.option("--verbose", "-v", is_flag=True,
              help="List the conflicts in the report, with their locations, and the values left unsharded.")
@click.option("--partition", is_flag=True,
              help="Go on to the per-device program (-sdy-partitioner-pipeline); the report lists its collectives.")
@click.option("--halo-exchange/--no-halo-exchange", default=True, show_default=True,
              help="With --partition: halo exchanges for windowed ops (else their windows are replicated).")
@reports_errors
def run(file, output, db, report_path, quiet, verbose, partition, halo_exchange):
    """Propagate shardings through FILE as -sdy-propagation-pipeline does;
    print the module and a short report on stderr (values sharded and, in a
    word, why the others are not: closed, conflict, unreached, scalar;
    conflicts propagation left; the reshards and all-reduces the module
    needs to be partitioned, with their bytes per device; time per phase).

    With --partition, print the program each device runs instead: explicit
    reshards, collectives, padding, global-to-local; the report lists every
    collective (where, kind, axes, bytes one device sends in a ring). A
    module that holds sdy collectives already (and no reshard or sharding
    constraint) is taken as written, as `sdylog simulate` takes it: not
    propagated, only made local; the report lists its collectives."""
    import json

    from sdylog import outputs
    from sdylog.commands.pipeline import database_parts, report, report_data, run_pipeline
    from sdylog.commands.relations import save_database
    from sdylog.progress import Progress

    if db == "-":
        raise click.BadParameter("a DuckDB file, not stdout", param_hint="--db")
    module_out = outputs.plan(output or "-", "-o")
    db_out = outputs.plan(db, "--db") if db else None
    report_out = outputs.plan(report_path, "--report") if report_path else None
    outputs.check_distinct(module_out, db_out, report_out)
    options = None
    if partition:
        from sdylog.passes.pipelines import PartitionerOptions
        options = PartitionerOptions(enable_halo_exchange=halo_exchange)
    progress = Progress()
    db_file = outputs.Background(db_out) if db_out else None

    def start_db():
        # the database is written on a thread from the end of the import: its tables and views
        # declared while the module is propagated; propagation's rows from the end of propagation,
        # while its ids are named; their names while the module is exported (which changes
        # neither propagation's relations nor their names) and the reshard rules run; then the
        # reshard rules' rows and names while the module is printed and written
        parts = database_parts(partitioned=partition)
        db_file.start(lambda path, handed: save_database(path, parts, handed))

    def add_propagation(propagated, _named):
        db_file.add(propagated.engine)
    try:
        result = run_pipeline(file, progress=progress, name_ids=bool(db or verbose or report_path),
                              keep_values=bool(report_path or db), partition=options, reshards=not partition,
                              on_imported=start_db if db_file else None,
                              on_propagated=add_propagation if db_file else None,
                              on_named=db_file.add if db_file else None)
        # (the reshards needed were decided in run_pipeline: a module Shardy's reshard pass rejects
        # is an error there, and nothing is written)
        if db_file and result.explicit:
            from sdylog.errors import SdylogError
            raise SdylogError("--db: the module holds its collectives already (explicit): --partition takes it "
                              "as written and propagates nothing, so there is no relation to save", file)
        if db_file and not partition:
            from sdylog.reshard.explain import load_written_origins
            load_written_origins(result)   # (why_written*, as query reads them)
            db_file.add(result.needed.inventory.engine)
            db_file.add(result.reshard_names)
        written = [(module_out, result.text())]
        if report_out:
            progress.step("report")
            written.append((report_out, json.dumps(report_data(result), indent=1) + "\n"))
        if db_file:
            progress.step(f"writing {db}")
            written.append((db_out, db_file.finish))
        outputs.write_all(written)
    finally:
        if db_file:
            db_file.discard()
    progress.done()
    if not quiet:
        click.echo(report(result, verbose=verbose), err=True)

