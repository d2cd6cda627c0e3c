"""The `sdylog` command line.

Each subcommand is a click command defined beside the code it drives; this
table names where, so `sdylog --help` lists them and only the one run is
imported (start-up time matters: benchmarks run whole processes).
"""
from __future__ import annotations

import functools
import importlib
import sys

import click

from sdylog.ir.diagnostics import SdylogError

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


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)


def reports_errors(fn):
    """Print SdylogError as `file:line:col: error: ...` and exit 1."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except SdylogError as e:
            click.echo(str(e), err=True)
            sys.exit(1)
    return wrapper


@click.group(cls=LazyGroup)
@click.version_option(package_name="sdylog")
def main():
    """Shardy-style sharding propagation for StableHLO, decided by Datalog rules."""


if __name__ == "__main__":
    main()
