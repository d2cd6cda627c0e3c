"""r33 F1 and F2: -sdy-pad-for-divisibility on x[0] of a sharded array and
on a dynamic_slice taking a non-divisible dimension whole.

F1: propagation leaves an axis on a dimension of size 1 (x[0]'s slice
result, as Shardy does), padded to the number of shards; the reshape that
drops that dimension (or the broadcast_in_dim that expands it) was written
with the padded operand and did not verify ("number of output elements (8)
doesn't match expected number of elements (32)"). The operand is now
gathered on that dimension and cut back to its one row (padding.dl
restores_unit_dim).

F2: a dynamic_slice of a whole dimension padded 10 -> 12 kept `sizes = [10,
3]` with a 12x3 result (invalid IR); its size grows with the dimension.

Each program partitioned and simulated equals the unpartitioned run."""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdylog.passes.pad_for_divisibility import _reshape_unit_dims
from sdylog.simulate.simulate import simulate_text
from test_pad_for_divisibility import pad_after_collectives

M42 = 'sdy.mesh @mesh = <["data"=4, "model"=2]>\n'

# (r33 row0.mlir; jx/idx0.mlir is this with `* 2`)
ROW0 = M42 + '''
func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
  %2 = stablehlo.slice %arg0 [0:1, 0:8] : (tensor<16x8xf32>) -> tensor<1x8xf32>
  %3 = stablehlo.reshape %2 : (tensor<1x8xf32>) -> tensor<8xf32>
  return %3 : tensor<8xf32>
}'''

# (jx/idxcol.mlir: a[:, 5] + 1, the column's dimension of size 1 on "model")
COLUMN = M42 + '''
func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> tensor<16xf32> {
  %0 = stablehlo.slice %arg0 [0:16, 5:6] : (tensor<16x8xf32>) -> tensor<16x1xf32>
  %1 = stablehlo.reshape %0 : (tensor<16x1xf32>) -> tensor<16xf32>
  %c = stablehlo.constant dense<1.0> : tensor<16xf32>
  %2 = stablehlo.add %1, %c : tensor<16xf32>
  return %2 : tensor<16xf32>
}'''

# (jx/s1_bcast_add2.mlir: a[:1] * 2 + b, b on (None, model))
BROADCAST = M42 + '''
func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> tensor<16x8xf32> {
  %0 = stablehlo.slice %arg0 [3:4, 0:8] : (tensor<16x8xf32>) -> tensor<1x8xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<1x8xf32>
  %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<16x8xf32>
  %4 = stablehlo.add %3, %arg1 : tensor<16x8xf32>
  return %4 : tensor<16x8xf32>
}'''

# (r33 ds_nd.mlir) columns of 10 rows on data=4 (padded to 12)
DYNAMIC_SLICE = '''sdy.mesh @mesh = <["data"=4]>
func.func public @main(%arg0: tensor<10x6xf32>, %i: tensor<i32>) -> tensor<10x3xf32> {
  %a = sdy.sharding_constraint %arg0 <@mesh, [{"data"}, {}]> : tensor<10x6xf32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_slice %a, %c, %i, sizes = [10, 3] : (tensor<10x6xf32>, tensor<i32>, tensor<i32>) -> tensor<10x3xf32>
  return %0 : tensor<10x3xf32>
}'''

CASES = {"row0": ROW0, "column": COLUMN, "broadcast": BROADCAST, "dynamic_slice": DYNAMIC_SLICE}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("halo", [True, False])
def test_partitioned_program_computes_the_global_result(name, halo):
    report = simulate_text(CASES[name], f"{name}.mlir", seed=5, halo_exchange=halo)
    assert report.ok, report.text()


def test_the_row_of_x0_is_gathered_and_cut_before_the_reshape():
    out = pad_after_collectives(ROW0)
    assert 'sdy.all_gather [{"data"}, {}] %' in out and 'out_sharding=<@mesh, [{}, {"model"}]> : tensor<4x8xf32>' in out, out
    assert "[0:1, 0:8]" in out and "(tensor<1x8xf32>) -> tensor<8xf32>" in out, out


def test_a_dynamic_slice_of_a_whole_padded_dimension_takes_it_whole():
    out = pad_after_collectives(DYNAMIC_SLICE)
    assert "sizes = [12, 3]" in out and "-> tensor<12x3xf32>" in out, out


@pytest.mark.parametrize("shape, result, dropped, pairs", [
    ((1, 8), (8,), [0], []), ((16, 1), (16,), [1], []), ((1, 8), (1, 2, 4), [], [(0, 0)]),
    ((1, 8), (8, 1), [0], []), ((2, 1, 4), (8,), [1], []), ((1, 1, 8), (1, 8), [1], [(0, 0)]),
    ((4, 6), (2, 12), [], []), ((2, 3), (3, 2), [], []), ((1, 1), (1,), [1], [(0, 0)])])
def test_reshape_unit_dimensions_with_and_without_a_result_dimension(shape, result, dropped, pairs):
    assert _reshape_unit_dims(shape, result) == (dropped, pairs)


# ---------------------------------------------------------------- generated
EXAMPLES = int(os.environ.get("SDYLOG_HYPOTHESIS_EXAMPLES", "10"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 25,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_AXES = [["x"], ["y"], ["x", "y"], []]


def _sharding(dims):
    return "<@mesh, [" + ", ".join("{" + ", ".join(f'"{a}"' for a in axes) + "}" for axes in dims) + "]>"


@st.composite
def indexed_programs(draw):
    """x[k] or x[:, k] of a sharded array (divisible), then a reshape that
    drops the dimension or a broadcast_in_dim that expands it, then an
    element-wise op."""
    x, y = draw(st.sampled_from([2, 4])), draw(st.sampled_from([1, 2, 3]))
    rows_axes = draw(st.sampled_from(_AXES))
    cols_axes = draw(st.sampled_from([a for a in _AXES if not set(a) & set(rows_axes)]))
    size = {"x": x, "y": y}
    shards = lambda axes: 1 if not axes else __import__("math").prod(size[a] for a in axes)
    r, c = shards(rows_axes) * draw(st.integers(1, 3)), shards(cols_axes) * draw(st.integers(1, 2))
    dim = draw(st.sampled_from([0, 1]))
    k = draw(st.integers(0, (r if dim == 0 else c) - 1))
    sliced = [1, c] if dim == 0 else [r, 1]
    limits = f"[{k}:{k + 1}, 0:{c}]" if dim == 0 else f"[0:{r}, {k}:{k + 1}]"
    t = lambda shape: "tensor<" + "x".join(map(str, shape)) + "xf32>"
    rest = [c] if dim == 0 else [r]
    if draw(st.booleans()):
        tail = f"  %v = stablehlo.reshape %s : ({t(sliced)}) -> {t(rest)}"
        out = rest
    else:
        out = [r, c]
        tail = f"  %v = stablehlo.broadcast_in_dim %s, dims = [0, 1] : ({t(sliced)}) -> {t(out)}"
    return "\n".join([
        f'sdy.mesh @mesh = <["x"={x}, "y"={y}]>',
        f"func.func @main(%a: {t([r, c])} {{sdy.sharding = #sdy.sharding{_sharding([rows_axes, cols_axes])}}}) -> "
        f"{t(out)} {{",
        f"  %s = stablehlo.slice %a {limits} : ({t([r, c])}) -> {t(sliced)}",
        tail,
        f"  %e = stablehlo.exponential %v : {t(out)}",
        f"  return %e : {t(out)}",
        "}"])


@SETTINGS
@given(indexed_programs(), st.booleans())
def test_indexed_rows_and_columns_compute_the_global_result(text, halo):
    report = simulate_text(text, "generated.mlir", seed=3, halo_exchange=halo)
    assert report.ok, f"{text}\n{report.text()}"
