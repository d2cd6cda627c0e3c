"""`sdylog opt FILE [sdy_opt flags...] [-o OUT] [--engine E]`."""
import click

from sdylog.cli import reports_errors
from sdylog.ir import SdylogError


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False,
                                 "help_option_names": ["--help"]})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@reports_errors
def opt(args):
    """Run passes by their sdy_opt flags and print the module as sdy_opt does.

    \b
    sdylog opt FILE -sdy-basic-propagate
    sdylog opt FILE -sdy-basic-propagate='conservative-propagation=true' -o OUT
    FILE may be '-' for stdin. --engine {duckdb,souffle} picks the Datalog engine.
    """
    from sdylog.passes.driver import opt_main

    path, output, engine, flags = None, None, None, []
    it = iter(args)
    for a in it:
        if a == "-o":
            output = next(it, None)
            if output is None:
                raise SdylogError("-o needs a file name")
        elif a.startswith("--engine"):
            engine = a.split("=", 1)[1] if "=" in a else next(it, None)
        elif path is None and (a == "-" or not a.startswith("-")):
            path = a
        else:
            flags.append(a)
    if path is None:
        raise SdylogError("no input file (use '-' for stdin)")
    opt_main(path, flags, output, engine)
