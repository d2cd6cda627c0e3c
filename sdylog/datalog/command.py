"""`sdylog datalog PROGRAM.dl [-F FACTS_DIR] [-D OUT_DIR] [--engine E]`."""
import os

import click

from sdylog import ENGINES
from sdylog.cli import reports_errors


def program_path(program: str) -> str:
    """PROGRAM as given; or, where no such file exists, one of sdylog's own
    rule files named as in the repository (`rules/propagation.dl`), found in
    the installed package data wherever sdylog is installed."""
    from sdylog import RULES_DIR
    if os.path.exists(program) or os.path.isabs(program):
        return program
    own = RULES_DIR / (program[len("rules/"):] if program.startswith("rules/") else program)
    return str(own) if own.is_file() else program


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("program", type=click.Path(dir_okay=False))
@click.option("-F", "--fact-dir", "facts_dir", default=".", show_default=True,
              help="Folder of the input relations' NAME.facts files.")
@click.option("-D", "--output-dir", "out_dir", default=".", show_default=True,
              help="Folder for the output relations' NAME.csv files; '-' prints them.")
@click.option("-I", "--include-dir", "include_dirs", multiple=True,
              help="Where #include looks too (before sdylog's own rules, which it finds last).")
@click.option("--engine", type=click.Choice(ENGINES), default=None,
              help="Datalog engine (default: $SDYLOG_ENGINE, else memory); souffle runs a `souffle` "
                   "binary on PATH, a cross-check of sdylog's own.")
@reports_errors
def datalog(program, facts_dir, out_dir, include_dirs, engine):
    """Run a Datalog program in Soufflé's language the way `souffle` does.
    sdylog's own rules can be named as in its repository
    (`rules/propagation.dl`) wherever sdylog is installed."""
    from sdylog import RULES_DIR
    from sdylog.datalog.program import load_program
    from sdylog.datalog.runner import run_like_souffle

    prog = load_program(program_path(program), [*include_dirs, str(RULES_DIR)])
    run_like_souffle(prog, facts_dir, out_dir, engine)
