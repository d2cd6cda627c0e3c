"""The `sdylog` command line.

Each subcommand is a click command defined beside the code it drives; this
table names where, so that only the one run is imported, and `sdylog
--help` lists them from SUMMARIES without importing any (start-up time
matters: benchmarks run whole processes; MLIR's bindings take 0.4 s).

Exit status: 0 done, 1 bad input (a diagnostic `file:line:col: error: ...`
where there is a location) or an output that cannot be written (stdout too:
a full disk, `> /dev/full`), 2 bad usage (click's), 3 an internal error: one
line asking for a report; the traceback with `--debug` or SDYLOG_DEBUG=1.
"""
from __future__ import annotations

import errno
import functools
import gc
import importlib
import os
import sys

import click

from sdylog.errors import SdylogError, UsageError

# subcommand -> "module:click_command". Keep alphabetical.
COMMANDS = {
    "datalog": "sdylog.datalog.command:datalog",
    "explain": "sdylog.commands.explain:explain",
    "facts": "sdylog.facts.command:facts",
    "interpret": "sdylog.simulate.command:interpret",
    "mpmd": "sdylog.mpmd.command:mpmd",
    "opt": "sdylog.passes.command:opt",
    "query": "sdylog.commands.query:query",
    "run": "sdylog.commands.run:run",
    "show": "sdylog.commands.show:show",
    "simulate": "sdylog.simulate.command:simulate",
}

# subcommand -> what `sdylog --help` says of it: read from here, so that the
# list imports no command (they load MLIR's bindings, 0.4 s). Keep alphabetical.
SUMMARIES = {
    "datalog": "Run a Datalog program in Soufflé's language.",
    "explain": "Why a value gets its sharding, back to the annotations.",
    "facts": "Write a module's input relations as Soufflé .facts files.",
    "interpret": "Run a module as the StableHLO reference interpreter does.",
    "mpmd": "Partition a module into one program per device.",
    "opt": "Run passes by their sdy_opt flags and print the module.",
    "query": "Print a relation of a run, with names beside its ids.",
    "run": "Propagate shardings: the module, and a report.",
    "show": "Draw how a value lies over the devices.",
    "simulate": "Run a sharded module on a simulated mesh of devices.",
}

INTERNAL_ERROR = 3
# A write that failed for want of room: the machine's state, not a bug.
FULL_DISK = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_debug = False          # --debug


def debugging() -> bool:
    return _debug or os.environ.get("SDYLOG_DEBUG", "") not in ("", "0")


def report_error(e: BaseException) -> int:
    """Print an exception raised by a command as the user should see it;
    return the exit status (click's own exceptions are not for here)."""
    if isinstance(e, UsageError):
        click.echo(str(e), err=True)
        return 2
    if isinstance(e, SdylogError):
        click.echo(str(e), err=True)
        return 1
    if isinstance(e, MemoryError):          # (the machine's limit, not a bug)
        click.echo(f"error: out of memory{': ' + str(e) if str(e) else ''}", err=True)
        return 1
    if isinstance(e, BrokenPipeError):      # (stdout closed early: `sdylog query ... | head`)
        _drop_stdout()
        return 1
    if isinstance(e, OSError) and e.errno in FULL_DISK:   # (`sdylog run F > /dev/full`; -o files say so themselves)
        click.echo(f"error: cannot write {e.filename or 'stdout'}: {e.strerror}", err=True)
        _drop_stdout()
        return 1
    if debugging():
        import traceback
        traceback.print_exception(e)
    message = " ".join(str(e).split()) or "(no message)"
    hint = "" if debugging() else " (--debug shows where)"
    click.echo(f"internal error: {type(e).__name__}: {message}, please report{hint}", err=True)
    return INTERNAL_ERROR


def _drop_stdout() -> None:
    """What is left to write on stdout goes to /dev/null (so that Python's
    own flush at exit does not fail on it again)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _settle_stdout() -> None:
    """After an error: what stdout still holds is written now, or dropped
    if it cannot be (`sdylog run F > /dev/full`, whose -o said so already)."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        _drop_stdout()


def reports_errors(fn):
    """Commands run through this: SdylogError -> its diagnostic, exit 1;
    an error writing stdout -> `error: cannot write stdout: ...`, exit 1;
    anything unexpected -> one 'internal error' line, exit 3."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            result = fn(*args, **kwargs)
            sys.stdout.flush()   # (what is left to write fails here, not in Python's flush at exit)
            return result
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as e:              # (KeyboardInterrupt: click's "Aborted!")
            status = report_error(e)
            _settle_stdout()
            sys.exit(status)
    return wrapper


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)

    def format_commands(self, ctx, formatter):
        """The command list of `sdylog --help`, from SUMMARIES (click's own
        would import every command to read its docstring)."""
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [(name, click.utils.make_default_short_help(SUMMARIES[name], limit))
                for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(self, ctx, args):
        # an unknown command: click's message, with the closest names
        name = args[0] if args else None
        if name and not name.startswith("-") and name not in COMMANDS:
            from sdylog.suggest import did_you_mean
            raise click.UsageError(f"no such command '{name}'{did_you_mean(name, COMMANDS)}", ctx)
        return super().resolve_command(ctx, args)

    def main(self, *args, **kwargs):
        try:
            return super().main(*args, **kwargs)
        except OSError as e:   # (`sdylog --help > /dev/full`: click's own output, before any command)
            status = report_error(e)
            _settle_stdout()
            sys.exit(status)

    def invoke(self, ctx):
        try:
            return reports_errors(super().invoke)(ctx)
        finally:
            # The interpreter's collections at exit would traverse every
            # object the run built; frozen, they are skipped (atexit handlers,
            # the rule cache's save among them, still run). ~7% of a process.
            gc.freeze()


@click.group(cls=LazyGroup)
@click.version_option(package_name="sdylog")
@click.option("--debug", is_flag=True, help="On an internal error, print the traceback (also: SDYLOG_DEBUG=1).")
def main(debug):
    """Shardy-style sharding propagation for StableHLO, decided by Datalog rules."""
    global _debug
    _debug = debug


if __name__ == "__main__":
    main()
