"""`sdylog interpret` and `sdylog simulate`."""
import sys

import click

from sdylog.cli import engine_option, reports_errors
from sdylog.mpmd.command import mpmd_options


@click.command()
@click.argument("path")
@click.option("--entry", default="main", show_default=True, help="Function to run.")
@click.option("--print-results", is_flag=True, help="Print the entry function's results.")
@reports_errors
def interpret(path, entry, print_results):
    """Run @main of FILE.mlir as `stablehlo-translate --interpret` does.

    Supports `interpreter.run_parallel` (programs on simulated devices) and
    the `check.expect_*` ops; exits 1 at the first failing check.
    """
    from sdylog.simulate.interpret import interpret_main
    results, _ = interpret_main(path, entry)
    if print_results:
        import numpy as np
        for r in results:
            click.echo(np.array2string(np.asarray(r), threshold=1000))


@click.command()
@click.argument("path")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0), help="Seed of the random inputs.")
@click.option("--entry", default="main", show_default=True, help="Function to run.")
@click.option("--rtol", default=1e-4, show_default=True, type=click.FloatRange(min=0), help="Relative tolerance for floats.")
@click.option("--atol", default=1e-5, show_default=True, type=click.FloatRange(min=0), help="Absolute tolerance for floats.")
@click.option("--pass-options", default=None,
              help="Options of -sdy-convert-global-to-local, e.g. 'per-dim-all-gather=true'.")
@click.option("--pipeline", default=None,
              help="sdylog opt flags to run first on the sharded side, e.g. "
                   "'-sdy-propagation-pipeline -sdy-reshard-to-collectives' (space separated).")
@click.option("--channel-mode", type=click.Choice(["buffered", "rendezvous"]), default="buffered",
              show_default=True, help="MPMD: a send goes on at once, or waits for its recv.")
@click.option("--json", "as_json", is_flag=True, help="MPMD: print the report as JSON.")
@mpmd_options
@engine_option
@reports_errors
def simulate(path, seed, entry, rtol, atol, pass_options, pipeline, channel_mode, as_json, engine, **mpmd):
    """Run a sharded module on its simulated mesh and compare with the unsharded run.

    The module's shardings and collectives must be explicit (as after
    propagation and reshard insertion). Random inputs (from --seed) are cut
    into each device's shards, the per-device program (from
    -sdy-convert-global-to-local) runs on every device, and the reassembled
    results are compared with the whole program run on one device. Prints the
    collectives (count, bytes); exits 1 on a mismatch.

    A module whose ops are placed on devices (maximal shardings, --assign)
    runs as its MPMD partition (`sdylog mpmd`): a program per device, joined
    by channels; results compared bitwise with the unpartitioned program,
    bytes per channel and per device, deadlocks reported.
    """
    from sdylog.simulate.mpmd import wants_mpmd
    if wants_mpmd(path, mpmd):
        return _simulate_mpmd(path, seed, entry, channel_mode, as_json, mpmd)
    from sdylog.simulate.simulate import simulate_main
    from sdylog.progress import Progress
    report = simulate_main(path, seed=seed, entry=entry, rtol=rtol, atol=atol, pass_options=pass_options,
                           pipeline=pipeline.split() if pipeline else None, engine=engine,
                           progress=Progress())
    click.echo(report.text())
    if not report.ok:
        sys.exit(1)


def _simulate_mpmd(path, seed, entry, channel_mode, as_json, mpmd):
    import json

    from sdylog.mpmd.command import options_from
    from sdylog.simulate.mpmd import simulate_mpmd_main
    options = options_from(**mpmd, entry=entry if entry != "main" else None)
    report = simulate_mpmd_main(path, options=options, seed=seed, mode=channel_mode)
    click.echo(json.dumps(report.json(), indent=1) if as_json else report.text())
    if not report.match:
        sys.exit(1)
