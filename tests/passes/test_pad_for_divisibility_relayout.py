"""Non-divisible values whose padded size changes on a dimension they stay
sharded on (issue 18; r32 items 5): an all_gather or all_to_all to fewer
shards than its operand was padded for, an all_slice of an operand padded
on a dimension it is sharded on (what the halo path makes of a slice whose
result takes more axes). Padding or cutting each device's block in place
would move the shard boundaries over the data (was: refused, "would move
elements across shards" / "the pad moves elements across shards");
-sdy-pad-for-divisibility lays such a value out again (all_gather, slice,
pad, all_slice). Also: an element-wise chlo op on padded values (jnp.var),
a gather (x[idx]) and chlo.top_k of padded rows, a scatter's padded
updates (masked with its combiner's identity).

Generated programs (hypothesis: sizes, meshes, chains of shardings, the
op reading the value) partitioned and simulated equal the unpartitioned
run."""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdylog.ir.diagnostics import SdylogError
from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.simulate import simulate_text
from test_pad_for_divisibility import pad_after_collectives

M4 = 'sdy.mesh @mesh = <["x"=4]>\n'

# (r32 halo_fail_1_6_True.mlir) the slice's result takes {"y", "x"}: the
# halo path slices on {"y"}, and the all_slice adding "x" pads a value of 1
# row padded to 2 on {"y"} to 4.
SLICE_MORE_AXES = '''sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<6x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x"}, {}]>}) -> (tensor<1x3xf32>) {
  %v0 = stablehlo.slice %arg0 [3:4, 1:4] : (tensor<6x5xf32>) -> tensor<1x3xf32>
  return %v0 : tensor<1x3xf32>
}'''

# (r32 halo_fail_1_28_True.mlir)
SLICE_3D = '''sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<6x9x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>}) -> (tensor<5x1x9xf32>) {
  %v0 = stablehlo.slice %arg0 [0:5, 8:9, 2:11] : (tensor<6x9x16xf32>) -> tensor<5x1x9xf32>
  return %v0 : tensor<5x1x9xf32>
}'''

# 6 of 8 elements on 4 shards (padded to 8), then on 2 shards (6 divides):
# blocks of 2 become blocks of 3, and the sort takes them whole.
GATHER_TO_FEWER = M4 + '''
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<6xf32> {
  %s = stablehlo.slice %a [0:6] : (tensor<8xf32>) -> tensor<6xf32>
  %c = sdy.sharding_constraint %s <@mesh, [{"x"}]> : tensor<6xf32>
  %e = stablehlo.exponential %c : tensor<6xf32>
  %d = sdy.sharding_constraint %e <@mesh, [{"x":(1)2}]> : tensor<6xf32>
  %n = stablehlo.negate %d : tensor<6xf32>
  return %n : tensor<6xf32>
}'''

# A chlo op on a padded value: left as it was, its operand would be cut back
# to 6 rows on 4 shards.
CHLO = M4 + '''
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<4xf32> {
  %s = stablehlo.slice %a [0:6, 0:4] : (tensor<8x4xf32>) -> tensor<6x4xf32>
  %c = sdy.sharding_constraint %s <@mesh, [{"x"}, {}]> : tensor<6x4xf32>
  %q = chlo.square %c : tensor<6x4xf32> -> tensor<6x4xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%q init: %z) applies stablehlo.add across dimensions = [0] : (tensor<6x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}'''

# An embedding lookup (x[idx]): rows of 7 indices on "x"=4 (padded to 8),
# columns of 5 on "y"=2 (padded to 6). The gather's result takes its batch
# rows from the indices and its whole-row slice grows with the table (was:
# invalid IR, the gather's inferred type).
GATHER = '''sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%e: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %i: tensor<8x1xi32>) -> tensor<7x5xf32> {
  %e6 = stablehlo.slice %e [0:6, 0:5] : (tensor<8x6xf32>) -> tensor<6x5xf32>
  %ec = sdy.sharding_constraint %e6 <@mesh, [{}, {"y"}]> : tensor<6x5xf32>
  %i7 = stablehlo.slice %i [0:7, 0:1] : (tensor<8x1xi32>) -> tensor<7x1xi32>
  %ic = sdy.sharding_constraint %i7 <@mesh, [{"x"}, {}]> : tensor<7x1xi32>
  %g = "stablehlo.gather"(%ec, %ic) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 5>} : (tensor<6x5xf32>, tensor<7x1xi32>) -> tensor<7x5xf32>
  %gc = sdy.sharding_constraint %g <@mesh, [{"x"}, {"y"}]> : tensor<7x5xf32>
  %t = stablehlo.tanh %gc : tensor<7x5xf32>
  return %t : tensor<7x5xf32>
}'''

# chlo.top_k of rows padded to 8 on "x"=4 (was: its operand cut back to 6
# rows, then invalid IR).
TOP_K = M4 + '''
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<6x3xf32> {
  %s = stablehlo.slice %a [0:6, 0:7] : (tensor<8x8xf32>) -> tensor<6x7xf32>
  %c = sdy.sharding_constraint %s <@mesh, [{"x"}, {}]> : tensor<6x7xf32>
  %v, %i = chlo.top_k(%c, k = 3) : tensor<6x7xf32> -> (tensor<6x3xf32>, tensor<6x3xi32>)
  %f = stablehlo.convert %i : (tensor<6x3xi32>) -> tensor<6x3xf32>
  %r = stablehlo.add %v, %f : tensor<6x3xf32>
  return %r : tensor<6x3xf32>
}'''

# jax.ops.segment_sum / x.at[i].max of 7 updates padded to 8 on "x"=4: the
# padded update lands at whatever index the indices' padding holds (was:
# added into the result, a silent mismatch); masked with the combiner's
# identity (0, -inf).
SCATTER = M4 + '''
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<3xf32> {
  %u = stablehlo.slice %a [0:7] : (tensor<8xf32>) -> tensor<7xf32>
  %uc = sdy.sharding_constraint %u <@mesh, [{"x"}]> : tensor<7xf32>
  %z = stablehlo.constant dense<0.0> : tensor<3xf32>
  %i = stablehlo.iota dim = 0 : tensor<7x1xi32>
  %three = stablehlo.constant dense<3> : tensor<7x1xi32>
  %ii = stablehlo.remainder %i, %three : tensor<7x1xi32>
  %r = "stablehlo.scatter"(%z, %ii, %uc) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %m = stablehlo.COMBINER %p, %q : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<3xf32>, tensor<7x1xi32>, tensor<7xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}'''

CASES = {"scatter_add": SCATTER.replace("COMBINER", "add"), "scatter_max": SCATTER.replace("COMBINER", "maximum"),
         "slice_more_axes": SLICE_MORE_AXES, "slice_3d": SLICE_3D, "gather_to_fewer": GATHER_TO_FEWER, "chlo": CHLO,
         "gather": GATHER, "top_k": TOP_K}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("halo", [True, False])
def test_partitioned_program_computes_the_global_result(name, halo):
    report = simulate_text(CASES[name], f"{name}.mlir", seed=7, halo_exchange=halo)
    assert report.ok, report.text()


def test_a_gather_to_fewer_shards_is_laid_out_again():
    out = pad_after_collectives(GATHER_TO_FEWER)
    # (gathered from {"x"} to {"x":(1)2} padded 8, then fully, cut to 6 and sliced again)
    assert 'sdy.all_gather [{"x":(1)2}] %' in out and "out_sharding=<@mesh, [{}]> : tensor<8xf32>" in out, out
    assert "[0:6]" in out and 'out_sharding=<@mesh, [{"x":(1)2}]> : tensor<6xf32>' in out, out


def test_an_element_wise_chlo_op_takes_the_padded_type():
    out = pad_after_collectives(CHLO)
    assert "chlo.square" in out and "tensor<8x4xf32> -> tensor<8x4xf32>" in out, out


def test_a_top_k_padded_on_its_last_dimension_is_refused_where_it_is():
    # (an explicit program: the pipeline replicates a top_k's last dimension)
    text = M4 + '''
func.func @main(%a: tensor<2x7xf32>) -> tensor<2x3xf32> {
  %t = stablehlo.tanh %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : tensor<2x7xf32>
  %v, %i = chlo.top_k(%t, k = 3) : tensor<2x7xf32> -> (tensor<2x3xf32>, tensor<2x3xi32>)
  return %v : tensor<2x3xf32>
}'''
    with pytest.raises(SdylogError) as e:
        optimize_text(text, "t.mlir", parse_flags(["--sdy-pad-for-divisibility"]))
    assert str(e.value).startswith("t.mlir:5:") and "cannot pad the operand of this top_k" in str(e.value), e.value


def test_scatter_updates_without_an_identity_are_refused_where_they_are():
    # (an explicit program: the updates of a replacing scatter padded on
    # their scatter dimension)
    text = M4 + '''
func.func @main(%z: tensor<3xf32>, %i: tensor<7x1xi32>, %u: tensor<7xf32>) -> tensor<3xf32> {
  %t = stablehlo.tanh %u {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<7xf32>
  %j = stablehlo.abs %i {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<7x1xi32>
  %r = "stablehlo.scatter"(%z, %j, %t) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    stablehlo.return %q : tensor<f32>
  }) : (tensor<3xf32>, tensor<7x1xi32>, tensor<7xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}'''
    with pytest.raises(SdylogError) as e:
        optimize_text(text, "t.mlir", parse_flags(["--sdy-pad-for-divisibility"]))
    message = str(e.value)
    assert message.startswith("t.mlir:6:") and "cannot pad the updates (operand #2) of this scatter" in message, message


# ---------------------------------------------------------------- generated
EXAMPLES = int(os.environ.get("SDYLOG_HYPOTHESIS_EXAMPLES", "12"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 25,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

_REDUCE = '''%z = stablehlo.constant dense<{init}> : tensor<f32>
  %r = stablehlo.reduce(%v init: %z) applies stablehlo.{kind} across dimensions = [0] : ({t}, tensor<f32>) -> {rest}'''
_SORT = '''%r = "stablehlo.sort"(%v) ({{
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %t = stablehlo.compare LT, %p, %q, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %t : tensor<i1>
  }}) {{dimension = 0 : i64}} : ({t}) -> {t}'''
_CUMSUM = '''%z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.reduce_window"(%v, %z) ({{
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %t = stablehlo.add %p, %q : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }}) {{window_dimensions = array<i64: {n}{ones}>, padding = dense<[[{low}, 0]{zeros}]> : tensor<{rank}x2xi64>}} : ({t}, tensor<f32>) -> {t}'''
_LAST = {
    "sum": lambda **k: _REDUCE.format(init="0.0", kind="add", **k),
    "max": lambda **k: _REDUCE.format(init="0xFF800000", kind="maximum", **k),
    "sort": lambda **k: _SORT.format(**k),
    "cumsum": lambda **k: _CUMSUM.format(low=k["n"] - 1, **k),
    "reverse": lambda **k: "%r = stablehlo.reverse %v, dims = [0] : {t}".format(**k),
    "tanh": lambda **k: "%r = stablehlo.tanh %v : {t}".format(**k),
}
_DIMS = [["x"], ["y"], ["x", "y"], ["y", "x"], []]


def _sharding(dims):
    return "<@mesh, [" + ", ".join("{" + ", ".join(f'"{a}"' for a in axes) + "}" for axes in dims) + "]>"


@st.composite
def _shardings(draw, rank):
    """Axes of the rows, and of the second dimension (rank 2) from the others."""
    rows = draw(st.sampled_from(_DIMS))
    if rank == 1:
        return [rows]
    return [rows, draw(st.sampled_from([d for d in _DIMS if not set(d) & set(rows)]))]


@st.composite
def resharded_values(draw):
    """A slice of n rows of a divisible argument, constrained to a chain of
    shardings over a 2-axis mesh (axes moving along the rows or between
    dimensions: all_gathers, all_slices, all_to_alls of padded values),
    then read by one op."""
    x, y = draw(st.sampled_from([2, 3, 4])), draw(st.sampled_from([1, 2, 3]))
    n = draw(st.integers(1, 2 * x * y + 1))
    m = (n + x * y - 1) // (x * y) * x * y
    extra = draw(st.sampled_from([[], [3], [5]]))
    rank = 1 + len(extra)
    chain = draw(st.lists(_shardings(rank), min_size=1, max_size=3))
    last = draw(st.sampled_from(sorted(_LAST)))
    shape = lambda rows: "tensor<" + "x".join(map(str, [rows] + extra)) + "xf32>"
    t, ta = shape(n), shape(m)
    rest = "tensor<" + "".join(f"{e}x" for e in extra) + "f32>"
    out = rest if last in ("sum", "max") else t
    lines = [f'sdy.mesh @mesh = <["x"={x}, "y"={y}]>',
             f"func.func @main(%a: {ta} {{sdy.sharding = #sdy.sharding{_sharding([['x']] + [[]] * len(extra))}}}) -> "
             f"{out} {{",
             f"  %s = stablehlo.slice %a [0:{n}" + "".join(f", 0:{e}" for e in extra) + f"] : ({ta}) -> {t}",
             f"  %e0 = stablehlo.exponential %s : {t}"]
    for i, dims in enumerate(chain):
        lines.append(f"  %c{i} = sdy.sharding_constraint %e{i} {_sharding(dims)} : {t}")
        lines.append(f"  %e{i + 1} = stablehlo.sine %c{i} : {t}")
    lines.append(f"  %v = stablehlo.add %e{len(chain)}, %e{len(chain)} : {t}")
    lines.append("  " + _LAST[last](t=t, n=n, rest=rest, rank=rank, ones="".join(", 1" for _ in extra),
                                    zeros="".join(", [0, 0]" for _ in extra)))
    lines.append(f"  return %r : {out}")
    lines.append("}")
    return "\n".join(lines)


@SETTINGS
@given(resharded_values(), st.booleans())
def test_resharded_non_divisible_values_compute_the_global_result(text, halo):
    report = simulate_text(text, "generated.mlir", seed=11, halo_exchange=halo)
    assert report.ok, f"{text}\n{report.text()}"
