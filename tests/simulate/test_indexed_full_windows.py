"""A scatter or gather whose index also addresses a sharded dimension its
window covers whole (r34's review, G1): what `jax.vmap` makes of
`lax.dynamic_update_slice(c, u, (i, 0))` and of `lax.dynamic_slice`. That
dimension is a pass-through (sharded alike in operand, updates or slices,
and result): its index stays as it is on every device, where a dimension
the window is one element wide along gets the shard's offset taken off
(convert_global_to_local._sharded_window_dims decides which for both ops).

Each module runs through `simulate_text` (the partitioner pipeline, the
per-device program on every device, results compared with the global run)."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from sdylog.passes.driver import optimize_text, parse_flags
from tests.simulate.generated_simulations import MESHES, SETTINGS, simulated

# (ops written as JAX writes them: the scatter replaces or adds)
_BODIES = {
    "set": "    stablehlo.return %b : tensor<f32>\n",
    "add": "    %s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>\n",
}


def _dims(*axes) -> str:
    return ", ".join("{" + (f'"{a}"' if a else "") + "}" for a in axes)


def _t(shape) -> str:
    return "x".join(map(str, shape)) + "xf32"


def scatter_module(mesh: str, shape, window, starts, batch_axis, full_axis, body: str = "set") -> str:
    """A batched scatter of an update window `window` (one dimension of it
    the whole operand dimension, sharded on `full_axis`) at `starts` (one
    row of two start indices per batch element) into `shape`, batch
    dimension on `batch_axis`."""
    b, r, c = shape
    full = 1 if window[0] == r else 2
    axes = [batch_axis, full_axis if full == 1 else None, full_axis if full == 2 else None]
    upd = (b,) + tuple(window)
    idx = np.asarray(starts, dtype=np.int32).tolist()
    return mesh + f"""func.func @main(%c: tensor<{_t(shape)}> {{sdy.sharding = #sdy.sharding<@mesh, [{_dims(*axes)}]>}},
    %u: tensor<{_t(upd)}> {{sdy.sharding = #sdy.sharding<@mesh, [{_dims(*axes)}]>}}) -> tensor<{_t(shape)}> {{
  %i = stablehlo.constant dense<{idx}> : tensor<{b}x2xi32>
  %0 = "stablehlo.scatter"(%c, %i, %u) <{{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1, 2], index_vector_dim = 1>, unique_indices = true}}> ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
{_BODIES[body]}  }}) : (tensor<{_t(shape)}>, tensor<{b}x2xi32>, tensor<{_t(upd)}>) -> tensor<{_t(shape)}>
  return %0 : tensor<{_t(shape)}>
}}"""


def gather_module(mesh: str, shape, window, starts, batch_axis, full_axis) -> str:
    """The gather twin of scatter_module: slices of size `window`."""
    b, r, c = shape
    full = 1 if window[0] == r else 2
    axes = [batch_axis, full_axis if full == 1 else None, full_axis if full == 2 else None]
    out = (b,) + tuple(window)
    idx = np.asarray(starts, dtype=np.int32).tolist()
    return mesh + f"""func.func @main(%c: tensor<{_t(shape)}> {{sdy.sharding = #sdy.sharding<@mesh, [{_dims(*axes)}]>}}) -> tensor<{_t(out)}> {{
  %i = stablehlo.constant dense<{idx}> : tensor<{b}x2xi32>
  %0 = "stablehlo.gather"(%c, %i) <{{dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1, 2], index_vector_dim = 1>, indices_are_sorted = true, slice_sizes = array<i64: 1, {window[0]}, {window[1]}>}}> : (tensor<{_t(shape)}>, tensor<{b}x2xi32>) -> tensor<{_t(out)}>
  return %0 : tensor<{_t(out)}>
}}"""


# r34's minimal repro: an 8x6 operand, a 2x6 window at (3, 0), columns on "model"
FULLWIN = """module @m attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["model"=2]>
  func.func public @main(%arg0: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<2x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> tensor<8x6xf32> {
    %i = stablehlo.constant dense<[3, 0]> : tensor<2xi32>
    %0 = "stablehlo.scatter"(%arg0, %i, %arg2) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 0>, unique_indices = true}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      stablehlo.return %b : tensor<f32>
    }) : (tensor<8x6xf32>, tensor<2xi32>, tensor<2x6xf32>) -> tensor<8x6xf32>
    return %0 : tensor<8x6xf32>
  }
}"""


def test_full_width_window_keeps_its_index():
    simulated(FULLWIN, "scatter_fullwin.mlir")
    # the column index (0) is not made local: only the row index could be
    out = optimize_text(FULLWIN, "t.mlir", parse_flags(["-sdy-partitioner-pipeline"]))
    assert "stablehlo.subtract" not in out, out


@st.composite
def _windowed(draw, clamped: bool):
    mesh = draw(st.sampled_from(sorted(MESHES)))
    axes = ["x", "y"] if "y" in mesh else ["x"]
    b = draw(st.sampled_from([4, 8]))   # (sizes every axis divides: padding is another matter)
    r, c = draw(st.sampled_from([4, 8])), draw(st.sampled_from([4, 8]))
    full_rows = draw(st.booleans())
    n = draw(st.sampled_from([1, 2, 3]))
    window = (r, n) if full_rows else (n, c)
    full_axis = draw(st.sampled_from(axes))
    batch_axis = draw(st.sampled_from([None] + [a for a in axes if a != full_axis]))
    # the full dimension's start: 0, or for a gather (which clamps it to 0)
    # out of range now and then. (A scatter window partly out of range is
    # skipped whole by XLA, element by element by the simulator: StableHLO
    # leaves it to the implementation, and JAX clamps the start first.)
    part = st.integers(-1, (c if full_rows else r) + 1)
    full = st.one_of(st.just(0), st.integers(-1, 2)) if clamped else st.just(0)
    starts = [(draw(full), draw(part)) if full_rows else (draw(part), draw(full)) for _ in range(b)]
    return MESHES[mesh], (b, r, c), window, starts, batch_axis, full_axis


@SETTINGS
@given(_windowed(clamped=False), st.sampled_from(sorted(_BODIES)))
def test_scatter_full_width_windows(case, body):
    mesh, shape, window, starts, batch_axis, full_axis = case
    simulated(scatter_module(mesh, shape, window, starts, batch_axis, full_axis, body), "scatter.mlir")


@SETTINGS
@given(_windowed(clamped=True))
def test_gather_full_width_windows(case):
    mesh, shape, window, starts, batch_axis, full_axis = case
    simulated(gather_module(mesh, shape, window, starts, batch_axis, full_axis), "gather.mlir")
