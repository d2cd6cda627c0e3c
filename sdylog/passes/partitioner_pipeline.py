"""-sdy-partitioner-pipeline: from a propagated global program (closed
shardings, as -sdy-propagation-pipeline leaves it) to the program each
device runs. sdylog's name for the sequence Shardy's executable
partitioner tests run (run_sdy_interpreter_test.sh; partitioning.md 1.2):

    sdy-insert-explicit-reshards{enable-full-version=true}
    sdy-resolve-permutation-factors{enable-halo-exchange, replica-count, partition-count}
    sdy-reshard-to-collectives
    sdy-pad-for-divisibility
    sdy-resolve-single-device-sharding{replica-count, partition-count}
    sdy-convert-global-to-local{replica-count, partition-count}
    sdy-drop-sharding-and-mesh

`sdylog run --partition` and `sdylog simulate` run it after propagation.
Passes sdylog does not have yet are left out, with a warning.
"""
from __future__ import annotations

from sdylog.passes.census import FOLLOWED, shared_census
from sdylog.passes.pipelines import PartitionerOptions, partitioner_steps, registered_steps, run_steps


def run(module, options: dict, ctx):
    steps = partitioner_steps(PartitionerOptions.from_flags(options))
    with shared_census(ctx):
        run_steps(module, ctx, registered_steps(steps, ctx))
    return FOLLOWED
