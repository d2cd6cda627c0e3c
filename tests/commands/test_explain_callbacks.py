"""`sdylog explain` of a value a host callback without results reads
(jax.debug.print): the full version of insert-explicit-reshards gathers it
onto the device the callback's sharding names, because sdylog runs the
callback once there, as XLA does; Shardy's passes do not (they leave it on
every device with its shard). explain says so (rules/reshard/why.dl
why_single_device "callback") instead of crediting Shardy's full version;
an op with a result on one device keeps Shardy's words."""
from __future__ import annotations

from tests.commands.test_explain import partitioning, run_explain, write

MESHES = 'sdy.mesh @mesh = <["a"=2]>\nsdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>\n'

CALLBACK = MESHES + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x4xf32>
  stablehlo.custom_call @xla_ffi_python_cpu_callback(%0) {has_side_effect = true, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<8x4xf32>) -> ()
  return %0 : tensor<8x4xf32>
}
"""

# The same operand read by a callback with a result (jax.pure_callback): an op with a result on
# device 0, which Shardy's full version puts there.
RESULT = MESHES + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x4xf32>
  %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%0) {sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
"""


def test_a_host_callbacks_operand_is_gathered_because_sdylog_runs_it_on_device_0(tmp_path):
    path = write(tmp_path, CALLBACK)
    code, out, _ = run_explain(path, "%0")
    assert code == 0, out
    lines = partitioning(out)
    assert lines[0] == (" (what the pipeline's export step wrote, then what the full version of "
                        "-sdy-insert-explicit-reshards adds: Shardy's, and the gather of a host callback's operands "
                        "onto the device sdylog runs it on, as XLA does):")
    assert lines[1] == f'  {path}:5:3: stablehlo.custom_call operand 0: reshard [{{"a"}}, {{}}] -> [{{}}, {{}}], ' \
        '64 B per device'
    assert lines[2].startswith(f"  {path}:5:3: stablehlo.custom_call operand 0: reshard [{{}}, {{}}] -> [{{}}, {{}}] "
                               "(@mesh -> @maximal_mesh_0)")
    assert lines[3] == (f"  stablehlo.custom_call at {path}:5:3 is a host callback (no results) placed on device 0: "
                        "sdylog runs it once there, as XLA does, so its operand 0 is gathered there (through fully "
                        "replicated on the global mesh unless it is so already); Shardy's passes leave it on every "
                        "device with its shard")
    assert "Shardy's full version" not in out


def test_an_op_with_a_result_on_one_device_keeps_shardys_words(tmp_path):
    # (the export's insert-explicit-reshards, the non-full version, writes its reshards already)
    path = write(tmp_path, RESULT)
    code, out, _ = run_explain(path, "%0")
    assert code == 0, out
    lines = partitioning(out)
    assert lines[0] == (" (what the pipeline's export step wrote, then what Shardy's full version of "
                        "-sdy-insert-explicit-reshards adds):")
    assert lines[1] == f'  {path}:5:8: written by the export step: reshard [{{"a"}}, {{}}] -> [{{}}, {{}}], 64 B per device'
    assert "host callback" not in out


def test_why_single_device_tells_the_two_apart(tmp_path):
    from sdylog.commands.pipeline import run_pipeline

    def reasons(text):
        run = run_pipeline(write(tmp_path, text), keep_values=True)
        engine, facts = run.needed.inventory.engine, run.needed.inventory.facts
        kinds = {o: k for o, k, *_ in facts.rows("op")}
        return sorted((kinds[o], k, why) for o, k, why in engine.select("why_single_device", "o", "k", "why"))

    assert reasons(CALLBACK) == [("stablehlo.custom_call", 0, "callback")]
    assert reasons(RESULT) == [("stablehlo.custom_call", 0, "result")]
