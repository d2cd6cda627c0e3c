"""-sdy-convert-global-to-local: the per-device program computes what the global one does.

Each module below runs through `simulate_text`: random inputs, the global
program on one device, the converted program on every device of the mesh,
every device's results compared with its shard of the global results.
"""
from __future__ import annotations

import pytest

from sdylog.ir import parse_module
from sdylog.ir.diagnostics import SdylogError
from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.simulate import simulate_text

M24 = 'sdy.mesh @mesh = <["x"=2, "y"=4]>\n'
M22 = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'


def sh(*dims, mesh="mesh"):
    body = ", ".join("{" + ", ".join(f'"{a}"' if ":" not in a else a for a in d) + "}" for d in dims)
    return f"#sdy.sharding<@{mesh}, [{body}]>"


def pv(*dims):
    return "{sdy.sharding = #sdy.sharding_per_value<[" + sh(*dims)[len("#sdy.sharding"):] + "]>}"


MODULES = {
    "dot-all-reduce-gather": M24 + f"""
func.func @main(%a: tensor<8x16xf32> {{sdy.sharding = {sh(["x"], ["y"])}}}, %b: tensor<16x12xf32> {{sdy.sharding = {sh(["y"], [])}}})
    -> (tensor<8x12xf32> {{sdy.sharding = {sh([], [])}}}) {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] {pv(["x"], [])} : (tensor<8x16xf32>, tensor<16x12xf32>) -> tensor<8x12xf32>
  %1 = sdy.all_reduce {{"y"}} %0 out_sharding=<@mesh, [{{"x"}}, {{}}]> : tensor<8x12xf32>
  %2 = stablehlo.tanh %1 {pv(["x"], [])} : tensor<8x12xf32>
  %3 = sdy.all_gather [{{"x"}}, {{}}] %2 out_sharding=<@mesh, [{{}}, {{}}]> : tensor<8x12xf32>
  return %3 : tensor<8x12xf32>
}}""",
    # Contracting dimensions sharded on different axes, the all-reduce naming
    # them (in mesh order) in another order than the dimensions (Shardy's
    # check rejects that; the sum is the same).
    "dot-two-contracting-dims": M24 + f"""
func.func @main(%a: tensor<2x4x8x6xf32> {{sdy.sharding = {sh([], ["y"], ["x"], [])}}}, %b: tensor<2x4x8x5xf32> {{sdy.sharding = {sh([], ["y"], ["x"], [])}}})
    -> (tensor<2x6x5xf32> {{sdy.sharding = {sh([], [], [])}}}) {{
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [1, 2] x [1, 2] {pv([], [], [])} : (tensor<2x4x8x6xf32>, tensor<2x4x8x5xf32>) -> tensor<2x6x5xf32>
  %1 = sdy.all_reduce {{"x", "y"}} %0 out_sharding=<@mesh, [{{}}, {{}}, {{}}]> : tensor<2x6x5xf32>
  return %1 : tensor<2x6x5xf32>
}}""",
    "reduce-scatter-one-dim": M24 + f"""
func.func @main(%a: tensor<8x16xf32> {{sdy.sharding = {sh(["x"], ["y"])}}}, %b: tensor<16x12xf32> {{sdy.sharding = {sh(["y"], [])}}})
    -> (tensor<8x12xf32> {{sdy.sharding = {sh(["x"], ["y"])}}}) {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] {pv(["x"], [])} : (tensor<8x16xf32>, tensor<16x12xf32>) -> tensor<8x12xf32>
  %1 = sdy.reduce_scatter [{{}}, {{"y"}}] %0 out_sharding=<@mesh, [{{"x"}}, {{"y"}}]> : tensor<8x12xf32>
  return %1 : tensor<8x12xf32>
}}""",
    "all-gather-two-dims": M24 + f"""
func.func @main(%a: tensor<8x16xf32> {{sdy.sharding = {sh(["x"], ["y"])}}}) -> (tensor<8x16xf32> {{sdy.sharding = {sh([], [])}}}) {{
  %0 = sdy.all_gather [{{"x"}}, {{"y"}}] %a out_sharding=<@mesh, [{{}}, {{}}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}}""",
    "reduce-scatter-two-dims": M24 + f"""
func.func @main(%a: tensor<8x16xf32> {{sdy.sharding = {sh([], ["x", "y"])}}}, %b: tensor<16x16xf32> {{sdy.sharding = {sh(["x", "y"], [])}}})
    -> (tensor<8x16xf32> {{sdy.sharding = {sh(["x"], ["y"])}}}) {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] {pv([], [])} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %1 = sdy.reduce_scatter [{{"x"}}, {{"y"}}] %0 out_sharding=<@mesh, [{{"x"}}, {{"y"}}]> : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}}""",
    "all-to-all-two-params": M22 + f"""
func.func @main(%a: tensor<4x4x4x4xf32> {{sdy.sharding = {sh(["x"], [], ["y"], [])}}}) -> (tensor<4x4x4x4xf32> {{sdy.sharding = {sh([], ["x"], [], ["y"])}}}) {{
  %0 = sdy.all_to_all [{{"x"}}: 0->1, {{"y"}}: 2->3] %a out_sharding=<@mesh, [{{}}, {{"x"}}, {{}}, {{"y"}}]> : tensor<4x4x4x4xf32>
  return %0 : tensor<4x4x4x4xf32>
}}""",
    "collective-permute-subaxes": M24 + f"""
func.func @main(%a: tensor<4x8xf32> {{sdy.sharding = {sh(["x"], ['"y":(2)2'])}}}) -> (tensor<4x8xf32> {{sdy.sharding = {sh(['"y":(2)2'], ["x"])}}}) {{
  %0 = sdy.collective_permute %a out_sharding=<@mesh, [{{"y":(2)2}}, {{"x"}}]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}}""",
    "iota-constant-pad-slice": M22 + f"""
func.func @main(%a: tensor<8x6xf32> {{sdy.sharding = {sh(["x"], [])}}}) -> (tensor<8x6xi32> {{sdy.sharding = {sh(["x"], [])}}}, tensor<8x6xf32> {{sdy.sharding = {sh(["x"], [])}}}, tensor<16x6xf32> {{sdy.sharding = {sh(["x"], [])}}}, tensor<8x3xf32> {{sdy.sharding = {sh(["x"], [])}}}) {{
  %0 = stablehlo.iota dim = 0 {pv(["x"], [])} : tensor<8x6xi32>
  %c = sdy.constant {pv(["x"], [])} dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [7.0, 8.0, 9.0, 1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0, 5.0, 5.0], [6.0, 6.0, 6.0, 6.0, 6.0, 6.0]]> : tensor<8x6xf32>
  %1 = stablehlo.add %a, %c {pv(["x"], [])} : tensor<8x6xf32>
  %z = stablehlo.constant dense<0.5> : tensor<f32>
  %2 = stablehlo.pad %a, %z, low = [1, 0], high = [0, 0], interior = [1, 0] {pv(["x"], [])} : (tensor<8x6xf32>, tensor<f32>) -> tensor<16x6xf32>
  %3 = stablehlo.slice %a [0:8, 1:6:2] {pv(["x"], [])} : (tensor<8x6xf32>) -> tensor<8x3xf32>
  return %0, %1, %2, %3 : tensor<8x6xi32>, tensor<8x6xf32>, tensor<16x6xf32>, tensor<8x3xf32>
}}""",
    "pad-non-uniform": 'sdy.mesh @mesh = <["x"=2]>\n' + f"""
func.func @main(%a: tensor<4xf32> {{sdy.sharding = {sh(["x"])}}}) -> (tensor<12xf32> {{sdy.sharding = {sh(["x"])}}}) {{
  %z = stablehlo.constant dense<9.0> : tensor<f32>
  %0 = stablehlo.pad %a, %z, low = [2], high = [3], interior = [1] {pv(["x"])} : (tensor<4xf32>, tensor<f32>) -> tensor<12xf32>
  return %0 : tensor<12xf32>
}}""",
    "gather-sharded-collapsed-dim": 'sdy.mesh @mesh = <["x"=2]>\n' + f"""
func.func @main(%a: tensor<8x3xf32> {{sdy.sharding = {sh(["x"], [])}}}, %i: tensor<5xi32>) -> (tensor<5x3xf32> {{sdy.sharding = {sh([], [])}}}) {{
  %0 = "stablehlo.gather"(%a, %i) {{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
      start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>}} : (tensor<8x3xf32>, tensor<5xi32>) -> tensor<5x3xf32>
  %1 = sdy.all_reduce {{"x"}} %0 out_sharding=<@mesh, [{{}}, {{}}]> : tensor<5x3xf32>
  return %1 : tensor<5x3xf32>
}}""",
    "scatter-sharded-updates": 'sdy.mesh @mesh = <["x"=2]>\n' + f"""
func.func @main(%a: tensor<6x2xf32> {{sdy.sharding = {sh([], [])}}}, %i: tensor<4x1xi32> {{sdy.sharding = {sh(["x"], [])}}}, %u: tensor<4x2xf32> {{sdy.sharding = {sh(["x"], [])}}})
    -> (tensor<6x2xf32> {{sdy.sharding = {sh([], [])}}}) {{
  %0 = "stablehlo.scatter"(%a, %i, %u) ({{
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }}) {{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],
      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}} : (tensor<6x2xf32>, tensor<4x1xi32>, tensor<4x2xf32>) -> tensor<6x2xf32>
  %1 = sdy.all_reduce {{"x"}} %0 out_sharding=<@mesh, [{{}}, {{}}]> : tensor<6x2xf32>
  return %1 : tensor<6x2xf32>
}}""",
    # lax.scan's dynamic_index_in_dim / dynamic_update_index_in_dim (corpus
    # scan_rnn): the dimension the window keeps whole stays sharded.
    "dynamic-slice-and-update-kept-dim": M22 + f"""
func.func @main(%a: tensor<6x8x4xf32> {{sdy.sharding = {sh([], ["x"], [])}}}, %u: tensor<1x8x4xf32> {{sdy.sharding = {sh([], ["x"], ["y"])}}}, %i: tensor<i32>)
    -> (tensor<1x8x4xf32> {{sdy.sharding = {sh([], ["x"], [])}}}, tensor<6x8x4xf32> {{sdy.sharding = {sh([], ["x"], ["y"])}}}) {{
  %z = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_slice %a, %i, %z, %z, sizes = [1, 8, 4] {pv([], ["x"], [])} : (tensor<6x8x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x8x4xf32>
  %1 = sdy.all_slice [{{}}, {{}}, {{"y"}}] %a out_sharding=<@mesh, [{{}}, {{"x"}}, {{"y"}}]> : tensor<6x8x4xf32>
  %2 = stablehlo.dynamic_update_slice %1, %u, %i, %i, %i {pv([], ["x"], ["y"])} : (tensor<6x8x4xf32>, tensor<1x8x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<6x8x4xf32>
  return %0, %2 : tensor<1x8x4xf32>, tensor<6x8x4xf32>
}}""",
    "manual-computation-psum-while": M22 + f"""
func.func @main(%a: tensor<8x4xf32> {{sdy.sharding = {sh(["x"], ["y"])}}}) -> (tensor<8x4xf32> {{sdy.sharding = {sh(["x"], ["y"])}}}) {{
  %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{{"x"}}, {{"y"}}]>] out_shardings=[<@mesh, [{{"x"}}, {{"y"}}]>]
      manual_axes={{"x"}} (%b: tensor<4x4xf32>) {{
    %s = "stablehlo.all_reduce"(%b) ({{
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %r = stablehlo.add %p, %q : tensor<f32>
        stablehlo.return %r : tensor<f32>
    }}) {{replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        use_global_device_ids, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{}}, {{"y"}}]>]>}} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    sdy.return %s : tensor<4x4xf32>
  }} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %1:2 = stablehlo.while(%i = %z, %x = %0) : tensor<i32>, tensor<8x4xf32>
      attributes {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{{"x"}}, {{"y"}}]>]>}}
    cond {{
      %n = stablehlo.constant dense<3> : tensor<i32>
      %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    }} do {{
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      %y = stablehlo.sine %x {pv(["x"], ["y"])} : tensor<8x4xf32>
      stablehlo.return %j, %y : tensor<i32>, tensor<8x4xf32>
    }}
  return %1#1 : tensor<8x4xf32>
}}""",
}


@pytest.mark.parametrize("name", sorted(MODULES))
@pytest.mark.parametrize("options", [None, "per-dim-all-gather=true combine-multi-dimension-reduce-scatter=true"])
def test_sharded_program_matches_global(name, options):
    report = simulate_text(MODULES[name], f"{name}.mlir", seed=7, pass_options=options, explicit=True)
    assert report.ok, report.text()
    assert report.outputs


def test_missing_all_reduce_is_refused():
    """The tanh reads the partial sums, not the all-reduce's: the dot's
    result has another use than the all-reduce, so convert-global-to-local
    refuses it (as Shardy's convert does) rather than make a wrong program."""
    text = MODULES["dot-all-reduce-gather"].replace("%2 = stablehlo.tanh %1", "%2 = stablehlo.tanh %0")
    with pytest.raises(SdylogError) as e:
        simulate_text(text, "bad.mlir", seed=1, explicit=True)
    assert "'stablehlo.dot_general' op needs an all-reduce of result 0" in str(e.value)


def convert(text, flags=("--sdy-convert-global-to-local",)):
    return optimize_text(text, "t.mlir", parse_flags(list(flags)))


def test_replica_groups_follow_axis_order():
    text = 'sdy.mesh @m = <["x"=2, "y"=4, "z"=2]>\n' + """
func.func @f(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{"y", "x"}, {"z"}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {"z"}]>}) {
  %0 = sdy.all_gather [{"y", "x"}, {}] %a out_sharding=<@m, [{}, {"z"}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}"""
    out = convert(text)
    assert "replica_groups = dense<[[0, 8, 2, 10, 4, 12, 6, 14], [1, 9, 3, 11, 5, 13, 7, 15]]>" in out
    assert "(tensor<1x8xf32>) -> tensor<8x8xf32>" in out
    assert "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>" in out


def test_replica_id_with_replica_count():
    text = M24 + """
func.func @f() -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}"""
    out = convert(text, ["--sdy-convert-global-to-local=replica-count=8 partition-count=1"])
    assert "stablehlo.replica_id" in out and "stablehlo.partition_id" not in out
    assert "dense<[0, 0, 0, 0, 2, 2, 2, 2]> : tensor<8xi64>" in out


def test_drop_sharding_and_mesh():
    out = convert(MODULES["dot-all-reduce-gather"].replace("sdy.all_reduce", "sdy.all_reduce").split("%1 =")[0]
                  + "return %0 : tensor<8x12xf32>\n}", ["--sdy-drop-sharding-and-mesh"])
    assert "sdy.sharding" not in out and "sdy.mesh" not in out


@pytest.mark.parametrize("body,message", [
    ("""%0 = stablehlo.concatenate %a, %a, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>""",
     "dimension 0 is sharded but the concatenation is on this dimension"),
    ("""%0 = stablehlo.slice %a [2:8, 0:4] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x4xf32>) -> tensor<6x4xf32>""",
     "is sharded but the slice is not a full slice"),
    ("""%i = stablehlo.constant dense<1> : tensor<i32>
  %0 = stablehlo.dynamic_slice %a, %i, %i, sizes = [2, 4] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>""",
     "dimension 0 is sharded but the stablehlo.dynamic_slice window of size 2 cuts it"),
    ("""%i = stablehlo.constant dense<1> : tensor<i32>
  %u = stablehlo.constant dense<1.0> : tensor<1x4xf32>
  %0 = stablehlo.dynamic_update_slice %a, %u, %i, %i {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<8x4xf32>""",
     "dimension 0 is sharded but the stablehlo.dynamic_update_slice window of size 1 cuts it"),
    ("""%i = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_slice %a, %i, %i, sizes = [8, 2] : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<8x2xf32>""",
     "dimension 0 has mismatched sharding axes"),
    # (what -sdy-pad-for-divisibility makes of an all_slice whose sharded
    # operand it pads: see that pass' docstring)
    ("""%z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.pad %a, %z, low = [0, 0], high = [2, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x4xf32>, tensor<f32>) -> tensor<10x4xf32>""",
     "dimension 0 is sharded and the pad moves elements across shards (shard 0 of the result"),
])
def test_unsupported_sharded_ops_are_located_errors(body, message):
    result_type = body.rsplit("-> ", 1)[1]
    text = M22 + f"""func.func @f(%a: tensor<8x4xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) -> {result_type} {{
  {body}
  return %0 : {result_type}
}}"""
    with pytest.raises(SdylogError) as e:
        convert(text)
    assert message in str(e.value)
    line = next(n for n, l in enumerate(text.splitlines(), 1) if "%0 = " in l)
    assert str(e.value).startswith(f"t.mlir:{line}:")


def test_non_divisible_sharding_is_an_error():
    text = M22 + """func.func @f(%a: tensor<7x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<7x4xf32> {
  return %a : tensor<7x4xf32>
}"""
    with pytest.raises(SdylogError, match="not divisible"):
        convert(text)


def test_parse_of_converted_module_verifies():
    out = convert(MODULES["iota-constant-pad-slice"])
    parse_module(out)
