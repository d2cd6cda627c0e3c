"""`sdylog datalog PROGRAM.dl [-F FACTS_DIR] [-D OUT_DIR] [--engine E]`."""
import click

from sdylog.cli import reports_errors


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("program", type=click.Path(dir_okay=False))
@click.option("-F", "--fact-dir", "facts_dir", default=".", show_default=True,
              help="Folder of the input relations' NAME.facts files.")
@click.option("-D", "--output-dir", "out_dir", default=".", show_default=True,
              help="Folder for the output relations' NAME.csv files; '-' prints them.")
@click.option("-I", "--include-dir", "include_dirs", multiple=True, help="Where #include looks too.")
@click.option("--engine", type=click.Choice(["duckdb", "souffle"]), default=None,
              help="Default: souffle when it is on PATH, else the embedded duckdb engine.")
@reports_errors
def datalog(program, facts_dir, out_dir, include_dirs, engine):
    """Run a Datalog program in Soufflé's language the way `souffle` does."""
    from sdylog.datalog.program import load_program
    from sdylog.datalog.runner import run_like_souffle

    prog = load_program(program, list(include_dirs))
    run_like_souffle(prog, facts_dir, out_dir, engine)
