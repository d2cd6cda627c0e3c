"""Reductions whose body no collective has, over a sharded dimension
(issue 18; r31's report, item 2): an argmax's compare and selects on
(value, index) pairs. Propagation and insert-explicit-reshards stay
Shardy's (an all-reduce per result); convert-global-to-local gathers each
device's results along the axes and reduces them again with the reduce's
own body (rules/partition/reduction_kind.dl, collective_regathers).

Each module runs through `simulate_text` (the partitioner pipeline, the
per-device program on every device, results compared with the global run)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdylog.ir.diagnostics import SdylogError
from sdylog.passes.driver import optimize_text, parse_flags
from tests.passes.passes_oracle import ours, shardy
from tests.simulate.generated_simulations import FULL, M2, M22, MESHES, SETTINGS, simulated


def partitioned(text: str) -> str:
    return optimize_text(text, "t.mlir", parse_flags(["-sdy-partitioner-pipeline"]))


def argmax_module(mesh: str, shape, dims: str, reduce_dims, *, jax_body: bool = True, direction: str = "GT",
                  etype: str = "f32", results: str = "both") -> str:
    """A (value, index) reduce as jnp.argmax (jax_body: its body, ties to the
    lower index, NaN first) or a plain compare and select, over
    `reduce_dims` of a value sharded by `dims`; the index is an iota along
    the first reduced dimension."""
    t = "x".join(map(str, shape))
    kept = [n for i, n in enumerate(shape) if i not in reduce_dims]
    r = "x".join(map(str, kept)) + "x" if kept else ""
    init = {"GT": "0xFF800000", "LT": "0x7F800000"}[direction] if etype == "f32" else \
        {"GT": "-2147483648", "LT": "2147483647"}[direction]
    kind = "FLOAT" if etype == "f32" else "SIGNED"
    if jax_body:
        nan = (f"    %nan = stablehlo.compare NE, %a, %a, {kind} : (tensor<{etype}>, tensor<{etype}>) -> tensor<i1>\n"
               "    %gtn = stablehlo.or %gt, %nan : tensor<i1>\n") if etype == "f32" else \
              "    %gtn = stablehlo.or %gt, %gt : tensor<i1>\n"
        body = (f"    %gt = stablehlo.compare {direction}, %a, %b, {kind} : (tensor<{etype}>, tensor<{etype}>) -> tensor<i1>\n"
                + nan +
                f"    %eq = stablehlo.compare EQ, %a, %b, {kind} : (tensor<{etype}>, tensor<{etype}>) -> tensor<i1>\n"
                "    %lt = stablehlo.compare LT, %ai, %bi, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                "    %tie = stablehlo.and %eq, %lt : tensor<i1>\n"
                "    %pick = stablehlo.or %gtn, %tie : tensor<i1>\n"
                f"    %m = stablehlo.select %gtn, %a, %b : tensor<i1>, tensor<{etype}>\n"
                "    %mi = stablehlo.select %pick, %ai, %bi : tensor<i1>, tensor<i32>\n")
    else:
        body = (f"    %gt = stablehlo.compare {direction}, %a, %b, {kind} : (tensor<{etype}>, tensor<{etype}>) -> tensor<i1>\n"
                f"    %m = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<{etype}>\n"
                "    %mi = stablehlo.select %gt, %ai, %bi : tensor<i1>, tensor<i32>\n")
    out_types = {"both": f"tensor<{r}{etype}>, tensor<{r}i32>", "index": f"tensor<{r}i32>"}[results]
    returned = {"both": f"%0#0, %0#1 : tensor<{r}{etype}>, tensor<{r}i32>", "index": f"%0#1 : tensor<{r}i32>"}[results]
    return mesh + f"""func.func @main(%arg0: tensor<{t}x{etype}> {{sdy.sharding = #sdy.sharding<@mesh, [{dims}]>}}) -> ({out_types}) {{
  %iota = stablehlo.iota dim = {reduce_dims[0]} : tensor<{t}xi32>
  %c = stablehlo.constant dense<{init}> : tensor<{etype}>
  %ci = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%arg0 init: %c), (%iota init: %ci) across dimensions = {list(reduce_dims)} : (tensor<{t}x{etype}>, tensor<{t}xi32>, tensor<{etype}>, tensor<i32>) -> (tensor<{r}{etype}>, tensor<{r}i32>)
   reducer(%a: tensor<{etype}>, %b: tensor<{etype}>) (%ai: tensor<i32>, %bi: tensor<i32>) {{
{body}    stablehlo.return %m, %mi : tensor<{etype}>, tensor<i32>
  }}
  return {returned}
}}"""


# r31's argmax.mlir
ARGMAX = argmax_module(M2, (8, 4), '{"x"}, {}', [0], jax_body=False)


def test_argmax_over_a_sharded_dimension_matches_global():
    """Before: refused ("no all-reduce combines its per-device results");
    before that, the maxima and the indices were summed."""
    simulated(ARGMAX, "argmax.mlir")


def test_argmax_gathers_the_pairs_and_reduces_them_again():
    out = partitioned(ARGMAX)
    assert '"stablehlo.all_reduce"' not in out
    assert out.count('"stablehlo.all_gather"') == 2
    assert out.count("stablehlo.reduce(") == 2
    # the second reduce takes the gathered pairs, along their new dimension
    second = out.split("stablehlo.reduce(")[2]
    assert "tensor<2x4xf32>, tensor<2x4xi32>" in second and "across dimensions = [0]" in second


def test_insert_explicit_reshards_stays_shardys_on_an_argmax():
    """Propagation and the reshard pass are Shardy's (an all-reduce per
    result); only the lowering of those all-reduces differs."""
    flag = "sdy-insert-explicit-reshards{enable-full-version=true}"
    propagated = optimize_text(ARGMAX, "t.mlir", parse_flags(["-sdy-propagation-pipeline"]))
    mine = ours(propagated, "sdy-insert-explicit-reshards", options=FULL)
    assert mine.count('sdy.all_reduce {"x"}') == 2
    assert mine.strip() == shardy(propagated, flag).strip()


ARGMAXES = {
    # jnp.argmax's own body (ties to the lower index), on a 2-d mesh, both axes on the reduced dimension
    "jax-body-xy": argmax_module(M22, (8, 4), '{"x", "y"}, {}', [0]),
    # argmin, only the index returned (the values' all-reduce is dead)
    "argmin-index": argmax_module(M22, (4, 8), '{"y"}, {"x"}', [1], direction="LT", results="index"),
    # integers with many ties: the lower index wins whatever the order
    "int-ties": argmax_module(M22, (8, 4), '{"x"}, {"y"}', [0], etype="i32"),
    # two reduced dimensions, one sharded on each axis
    "two-dims": argmax_module(MESHES["x4y2"], (8, 4, 2), '{"x"}, {}, {"y"}', [0, 2]),
}


@pytest.mark.parametrize("name", sorted(ARGMAXES))
def test_argmax_variants_match_global(name):
    simulated(ARGMAXES[name], f"{name}.mlir", seed=7)


def test_argmax_reduce_scattered_matches_global():
    """sdy.reduce_scatter of each result (a module as written): the pairs
    reduced, then this device's block of them."""
    text = M22 + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, tensor<4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  %iota = stablehlo.iota dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x4xi32>
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %ci = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%arg0 init: %c), (%iota init: %ci) across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>, <@mesh, [{}]>]>} : (tensor<8x4xf32>, tensor<8x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>) {
    %gt = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %m = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
    %mi = stablehlo.select %gt, %ai, %bi : tensor<i1>, tensor<i32>
    stablehlo.return %m, %mi : tensor<f32>, tensor<i32>
  }
  %1 = sdy.reduce_scatter [{"x"}] %0#0 out_sharding=<@mesh, [{"x"}]> : tensor<4xf32>
  %2 = sdy.reduce_scatter [{"x"}] %0#1 out_sharding=<@mesh, [{"x"}]> : tensor<4xi32>
  return %1, %2 : tensor<4xf32>, tensor<4xi32>
}"""
    out = optimize_text(text, "t.mlir", parse_flags(["-sdy-convert-global-to-local"]))
    assert "reduce_scatter" not in out and out.count('"stablehlo.all_gather"') == 2, out
    simulated(text, "reduce_scatter.mlir")


def test_argmax_reduced_in_two_steps_matches_global():
    """The result kept unreduced on "y" (an explicit module): one all-reduce
    over "x" after the reduce, another over "y" before the negate; the
    second gathers the pairs the first made."""
    text = M22 + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}) -> (tensor<4xf32>, tensor<4xi32>) {
  %iota = stablehlo.iota dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {}]>]>} : tensor<8x4xi32>
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %ci = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%arg0 init: %c), (%iota init: %ci) across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}], unreduced={"y"}>, <@mesh, [{}], unreduced={"y"}>]>} : (tensor<8x4xf32>, tensor<8x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>) {
    %gt = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %m = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
    %mi = stablehlo.select %gt, %ai, %bi : tensor<i1>, tensor<i32>
    stablehlo.return %m, %mi : tensor<f32>, tensor<i32>
  }
  %1 = stablehlo.negate %0#0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : tensor<4xf32>
  %2 = stablehlo.add %0#1, %0#1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : tensor<4xi32>
  return %1, %2 : tensor<4xf32>, tensor<4xi32>
}"""
    out = partitioned(text)
    assert '"stablehlo.all_reduce"' not in out and out.count('"stablehlo.all_gather"') == 4, out
    simulated(text, "two_steps.mlir")


def test_a_max_reduced_in_two_steps_keeps_its_kind():
    """The second all-reduce (over "y", of the first's result) combines
    maxima too. Before: the conversion looked collectives up by their
    operation, whose hash changes once the first is converted and its
    result replaced: the second summed."""
    text = M22 + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.maximum across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}], unreduced={"y"}>]>} : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : tensor<4xf32>
  return %1 : tensor<4xf32>
}"""
    out = partitioned(text)
    assert out.count('"stablehlo.all_reduce"') == 2 and "stablehlo.add" not in out, out
    simulated(text, "max_two_steps.mlir")


def test_a_scatter_whose_body_no_collective_has_is_still_refused():
    """A scatter with a compare and select body, its partial results
    all-reduced (a module as written): no second scatter combines them; a
    located error at the scatter."""
    text = M2 + """func.func @main(%idx: tensor<8x1xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %upd: tensor<8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<4x3xf32> {
  %init = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} dense<0xFF800000> : tensor<4x3xf32>
  %0 = "stablehlo.scatter"(%init, %idx, %upd) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %gt = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %m = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<4x3xf32>, tensor<8x1xi32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %1 = sdy.all_reduce {"x"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}"""
    with pytest.raises(SdylogError) as e:
        optimize_text(text, "scatter_select.mlir", parse_flags(["-sdy-convert-global-to-local"]))
    assert str(e.value).startswith("scatter_select.mlir:4:8: error: 'stablehlo.scatter' op reduces along a "
                                   "sharded dimension with a reducer"), str(e.value)


@st.composite
def argmax_cases(draw):
    mesh = draw(st.sampled_from(sorted(MESHES)))
    names = {"x2": ["x"], "x2y2": ["x", "y"], "x4y2": ["x", "y"]}[mesh]
    rank = draw(st.integers(1, 3))
    # (divisible: a variadic reduce over a padded dimension is pad-for-divisibility's, and fails there)
    shape = tuple(draw(st.sampled_from([8, 16])) for _ in range(rank))
    dims = [[] for _ in range(rank)]
    for a in names:
        d = draw(st.integers(-1, rank - 1))
        if d >= 0:
            dims[d].append(a)
    reduce_dims = sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1)))
    etype = draw(st.sampled_from(["f32", "i32"]))
    # (a plain compare and select picks among equal values by the order of
    # the reduction: only floats, whose random values do not tie)
    jax_body = etype == "i32" or draw(st.booleans())
    return argmax_module(MESHES[mesh], shape, ", ".join("{" + ", ".join(f'"{a}"' for a in d) + "}" for d in dims),
                         reduce_dims, jax_body=jax_body, direction=draw(st.sampled_from(["GT", "LT"])), etype=etype,
                         results=draw(st.sampled_from(["both", "index"])))


@SETTINGS
@given(argmax_cases(), st.integers(0, 5))
def test_generated_argmaxes_match_global(text, seed):
    simulated(text, "argmax_generated.mlir", seed=seed)
