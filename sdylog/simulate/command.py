"""`sdylog interpret` and `sdylog simulate`."""
import sys

import click

from sdylog.cli import reports_errors
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
@click.option("--rtol", default=None, type=click.FloatRange(min=0),
              show_default="1e-4, or 4 eps of the result's dtype where larger: f16 0.0039, bf16 0.031",
              help="Relative tolerance for floats (of each result's largest magnitude).")
@click.option("--atol", default=1e-5, show_default=True, type=click.FloatRange(min=0), help="Absolute tolerance for floats.")
@click.option("--as-written", is_flag=True,
              help="Take the module's shardings and collectives as written (no propagation, no reshards "
                   "inserted; only what the partitioner runs after them: windows resolved, padding).")
@click.option("--halo-exchange/--no-halo-exchange", default=True, show_default=True,
              help="Halo exchanges for windowed ops (else their windows are replicated).")
@click.option("--pass-options", default=None,
              help="Options of -sdy-convert-global-to-local, e.g. 'per-dim-all-gather=true'.")
@click.option("--pipeline", default=None,
              help="sdylog opt flags to run instead of sdylog's pipeline, e.g. "
                   "'-sdy-propagation-pipeline -sdy-reshard-to-collectives' (space separated).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--channel-mode", type=click.Choice(["buffered", "rendezvous"]), default="buffered",
              show_default=True, help="MPMD: a send goes on at once, or waits for its recv.")
@mpmd_options
@reports_errors
def simulate(path, seed, entry, rtol, atol, as_written, halo_exchange, pass_options, pipeline, as_json,
             channel_mode, **mpmd):
    """Run FILE partitioned on its simulated mesh and compare with the unpartitioned run.

    FILE may be a JAX export (Shardy's, or GSPMD's `mhlo.sharding`s, read as
    `sdylog run` reads them), a propagated module or an explicit one (whose
    sdy collectives say how it is partitioned; --as-written takes any module
    so). All but explicit ones go through sdylog's pipeline first:
    propagation, explicit reshards, collectives, padding
    (-sdy-propagation-pipeline, then -sdy-partitioner-pipeline); explicit
    ones only through what the partitioner runs after the reshards
    (windows resolved, padding: a note says which changed it). Random
    inputs (from --seed) are cut into each device's shards, the per-device
    program runs on every device, and the results are compared with the
    whole program run on one device: floats agree within --atol + --rtol
    times the largest magnitude of the result (partial sums rounded on
    each device and then added differ by a few ulps of the dtype).

    Prints the collectives of the partitioned program with the bytes one
    device sends (ring model, rules/collectives.dl) and, on a mismatch, the
    first op whose per-device values differ and why (a partial sum never
    reduced, shards read out of place); exits 1 on a mismatch.

    Host callbacks cannot run here (their Python functions are not in the
    module): one without results (jax.debug.print) is skipped, the results
    not depending on it, and the report lists it ("not executed", --json
    "skipped"); one with results (jax.pure_callback) is an error at its
    location. The per-device program runs each callback once, on device 0,
    with its operands gathered, as XLA does.

    A module whose ops are placed on devices (maximal shardings, --assign)
    runs as its MPMD partition (`sdylog mpmd`): a program per device, joined
    by channels; results compared bitwise with the unpartitioned program,
    bytes per channel and per device, deadlocks reported. Its options
    (--channel-mode, --recv-policy, ...) on a module that runs as SPMD are
    a usage error: they would change nothing; so are the SPMD run's
    (--rtol, --atol, --as-written, --no-halo-exchange, --pass-options,
    --pipeline) on a module that runs as MPMD, and any of them or --entry on
    a module `sdylog mpmd` already wrote (its per-device functions run as
    written: only --seed, --channel-mode and --json apply).

    \b
    sdylog simulate model.mlir
    sdylog simulate model.mlir --json
    sdylog simulate explicit.mlir --pipeline '-sdy-reshard-to-collectives'
    """
    from sdylog.simulate.mpmd import wants_mpmd
    if wants_mpmd(path, mpmd):
        spmd = dict(rtol=rtol, atol=atol, as_written=as_written, halo_exchange=halo_exchange,
                    pass_options=pass_options, pipeline=pipeline)
        if _already_partitioned(path):
            _refuse_partition_options(path, dict(spmd, entry=entry, **mpmd))
        _refuse_spmd_options(path, spmd)
        return _simulate_mpmd(path, seed, entry, channel_mode, as_json, mpmd)
    _refuse_mpmd_options(path, dict(mpmd, channel_mode=channel_mode))
    from sdylog.simulate.simulate import simulate_main
    from sdylog.progress import Progress
    report = simulate_main(path, seed=seed, entry=entry, rtol=rtol, atol=atol, pass_options=pass_options,
                           pipeline=pipeline.split() if pipeline else None, explicit=True if as_written else None,
                           halo_exchange=halo_exchange, progress=Progress())
    if as_json:
        import json
        click.echo(json.dumps(report.json(), indent=1))
    else:
        click.echo(report.text())
    if not report.ok:
        sys.exit(1)


def _refuse_mpmd_options(path, mpmd):
    """A usage error when options of the MPMD run (--channel-mode, --recv-policy,
    --reduce-locally, ...: any given another value than its default) meet a
    module that runs as SPMD (nothing placed on devices, no --assign): they
    would change nothing, and options that do not go together are usage
    errors (as --recv-policy lazy with --channel-mode rendezvous)."""
    _refuse(_given({name: value for name, value in mpmd.items() if name != "assign"}),   # (--assign: MPMD)
            f"of the MPMD run, but {path} places no op on a device (no maximal sharding, no --assign): it runs as "
            "SPMD, where they change nothing")


def _refuse_spmd_options(path, spmd):
    """The mirror: options of the SPMD run (--rtol, --atol, --as-written,
    --no-halo-exchange, --pass-options, --pipeline) on a module that runs as
    MPMD (ops placed on devices, or --assign), which compares bitwise and
    runs no SPMD pipeline: they would change nothing."""
    _refuse(_given(spmd), f"of the SPMD run, but {path} places ops on devices (maximal shardings or --assign): it "
            "runs as MPMD, where they change nothing")


def _already_partitioned(path):
    """Whether FILE is a module `sdylog mpmd` wrote (functions marked sdylog.device)."""
    from sdylog.ir.module import read_source
    from sdylog.simulate.mpmd import is_emitted
    return is_emitted(read_source(path))


def _refuse_partition_options(path, options):
    """On a module `sdylog mpmd` already wrote, its per-device functions run
    as written (sdylog.simulate.mpmd.simulate_emitted_text: random inputs,
    --seed and --channel-mode only, no comparison): --entry, the options of
    the MPMD partition (--assign, --devices, --fanout, --recv-policy, ...)
    and of the SPMD run (--rtol, --atol, --pipeline, ...) would change nothing."""
    import shlex
    _refuse([f"--assign {shlex.quote(a)}" for a in options.pop("assign")] + _given(options),
            f"of a run that partitions, but {path} is partitioned already (functions marked sdylog.device, as "
            "`sdylog mpmd` writes them): its per-device programs run as written, where they change nothing")


def _refuse(given: list[str], why: str) -> None:
    """A usage error naming the options `given` (none: nothing), then why."""
    from sdylog.errors import UsageError
    if given:
        raise UsageError(f"{', '.join(given)}: {'options' if len(given) > 1 else 'an option'} {why}")


def _given(values):
    """The options among `values` (parameter name -> value) given another value
    than their default, as they are spelled on the command line, in --help's order."""
    import shlex
    ctx = click.get_current_context()

    def spelled(p):   # (a flag pair switched off: its --no- form)
        if p.is_flag:
            return p.opts[0] if values[p.name] else p.secondary_opts[0]
        return f"{p.opts[0]} {shlex.quote(str(values[p.name]))}"
    return [spelled(p) for p in ctx.command.params if p.name in values and values[p.name] != p.get_default(ctx)]


def _simulate_mpmd(path, seed, entry, channel_mode, as_json, mpmd):
    import json

    from sdylog.mpmd.command import options_from
    from sdylog.simulate.mpmd import simulate_mpmd_main
    options = options_from(**mpmd, entry=entry if entry != "main" else None)
    report = simulate_mpmd_main(path, options=options, seed=seed, mode=channel_mode)
    click.echo(json.dumps(report.json(), indent=1) if as_json else report.text())
    if not report.match:
        sys.exit(1)
