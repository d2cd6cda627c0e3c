"""-sdy-partitioner-pipeline: the passes of Shardy's executable partitioner
tests (run_sdy_interpreter_test.sh), in their order, with their options."""
from __future__ import annotations

from sdylog.passes import parse_options
from sdylog.passes.pipelines import PartitionerOptions, partitioner_steps, per_instruction_steps

EXECUTABLE_TESTS = ["sdy-insert-explicit-reshards", "sdy-resolve-permutation-factors", "sdy-reshard-to-collectives",
                    "sdy-pad-for-divisibility", "sdy-resolve-single-device-sharding",
                    "sdy-convert-global-to-local", "sdy-drop-sharding-and-mesh"]


def test_steps_are_the_executable_tests_passes():
    options = PartitionerOptions.from_flags(parse_options(
        "sdy-partitioner-pipeline", "enable-halo-exchange=false partition-count=4"))
    steps = partitioner_steps(options)
    assert [s.name for s in steps] == EXECUTABLE_TESTS
    by_name = {s.name: s.options for s in steps}
    assert by_name["sdy-insert-explicit-reshards"] == {"enable-full-version": True}
    assert by_name["sdy-resolve-permutation-factors"] == {"enable-halo-exchange": False, "replica-count": 1,
                                                          "partition-count": 4}
    assert by_name["sdy-convert-global-to-local"] == {"replica-count": 1, "partition-count": 4}
    assert [s.name for s in partitioner_steps(options, global_to_local=False)] == EXECUTABLE_TESTS[:-2]


def test_per_instruction_sub_pipeline_resolves_permutation_factors_first():
    names = [s.name for s in per_instruction_steps(PartitionerOptions())]
    assert names == ["sdy-resolve-permutation-factors", "sdy-insert-explicit-reshards",
                     "sdy-reshard-to-collectives", "sdy-pad-for-divisibility",
                     "sdy-convert-global-to-local", "sdy-drop-sharding-and-mesh"]
