"""Values made unreduced in the per-device program (issue 18; r31's report,
item 6):

- a value with no sharding returned as a function result with unreduced
  axes (`unreduced={"x"}`), or brought to them by a collective, is made
  unreduced by convert-global-to-local (rules/partition/reduction_kind.dl,
  made_unreduced): the first device of each group along the axes keeps it, the others hold
  zeros, so that the devices' parts sum to the value. Shardy's
  insert-explicit-reshards writes nothing there (a value with no sharding
  is not decided yet in Shardy), and neither does ours;
- an sdy.reshard of a value with no sharding to unreduced axes becomes a
  `sdy.replicated_to_unreduced` (rules/reshard/targets.dl,
  site_bare_unreduces): Shardy keeps the reshard and its
  reshard-to-collectives erases it (a known difference, below);
- `sdy.sharded_to_unreduced` (written by insert-explicit-reshards, or in
  the input) is lowered by convert-global-to-local: each device keeps its
  shard in place, zeros elsewhere.

Each module runs through `simulate_text` (the partitioner pipeline, the
per-device program on every device, results compared with the global run;
an unreduced result is summed over its axes first)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdylog.passes.driver import optimize_text, parse_flags
from tests.passes.passes_oracle import ours, shardy
from tests.simulate.generated_simulations import FULL, M2, M22, MESHES, SETTINGS, simulated

# ------------------------------------------------------------------ 1. a value with no sharding made unreduced
# r31's r2u.mlir: %0 gets no sharding from propagation (nothing shards it).
BARE_RESULT = M2 + """func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={"x"}>}) {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""

# Values with no sharding (the module as propagation leaves it), brought to
# a target sharded and unreduced, and through an existing reshard to unreduced.
BARE_EXPLICIT = M22 + """func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}], unreduced={"x"}>}, tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={"y"}>}) {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  %1 = sdy.reshard %arg0 <@mesh, [{}], unreduced={"x"}> : tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}"""


def test_a_value_with_no_sharding_returned_unreduced_sums_to_the_value():
    """Before (main at c8df8ca): every device returned the whole value, and
    the devices' parts summed to twice it."""
    simulated(BARE_RESULT, "r2u.mlir")


@pytest.mark.parametrize("flag,options", [("sdy-insert-explicit-reshards", {}),
                                           ("sdy-insert-explicit-reshards{enable-full-version=true}", FULL)])
def test_insert_leaves_a_value_with_no_sharding_returned_unreduced_as_shardy_does(flag, options):
    """A value with no sharding is not decided yet in Shardy (XLA decides
    it): its insert-explicit-reshards writes nothing where one is returned
    unreduced (its lit case export/insert_explicit_reshards/unreduced.mlir,
    all_reduce_source_no_sharding_and_target_has_unreduced, in the ratchet),
    and neither does ours; the per-device program makes it unreduced."""
    mine = ours(BARE_RESULT, "sdy-insert-explicit-reshards", options=options)
    assert mine.strip() == shardy(BARE_RESULT, flag).strip()
    assert "replicated_to_unreduced" not in mine
    # ... and so does the export of jaxlib's propagation pipeline
    assert ours(BARE_RESULT, "sdy-propagation-pipeline").strip() == shardy(BARE_RESULT, "sdy-propagation-pipeline").strip()


def leaders(out: str) -> str:
    """The table of the devices that keep a value made unreduced."""
    return out.split("stablehlo.constant dense<")[1].split(">")[0]


@pytest.mark.parametrize("flags", [["-sdy-convert-global-to-local"],
                                   ["-sdy-propagation-pipeline", "-sdy-convert-global-to-local"]])
def test_convert_makes_a_returned_value_with_no_sharding_unreduced(flags):
    """KNOWN DIFFERENCE: Shardy's convert-global-to-local returns the value
    with no sharding as it is (each device the whole value, their sum twice
    it); ours keeps it on the first device along "x" and zeros on the
    other (no lit case of Shardy's has such a return)."""
    out = optimize_text(BARE_RESULT, "r2u.mlir", parse_flags(flags))
    assert leaders(out) == "[true, false]"
    assert "%6 = stablehlo.select %5, %0, %cst : tensor<8xi1>, tensor<8xf32>" in out and "return %6" in out
    theirs = shardy(BARE_RESULT, "sdy-convert-global-to-local")
    assert "stablehlo.select" not in theirs and "return %0" in theirs, theirs


def test_a_value_with_no_sharding_is_made_unreduced_where_its_target_wants():
    """%0, returned to a sharded and unreduced result: Shardy's passes (and
    ours) write nothing (insert) or a reshard that reshard-to-collectives
    makes an all_slice keeping the unreduced axis; convert-global-to-local
    makes it unreduced before the all_slice (leaders along "x": devices 0
    and 1 of x2y2)."""
    out = ours(BARE_EXPLICIT, "sdy-insert-explicit-reshards")
    assert "%0 = stablehlo.negate %arg0 : tensor<8xf32>" in out and "return %0, %3" in out
    full = ours(BARE_EXPLICIT, "sdy-insert-explicit-reshards", options=FULL)
    assert 'sdy.reshard %0 <@mesh, [{"y"}], unreduced={"x"}>' in full
    # the reshard to unreduced of %arg0 became a replicated_to_unreduced
    for text in (out, full):
        assert 'replicated_to_unreduced {"x"} %arg0 out_sharding=<@mesh, [{}], unreduced={"x"}>' in text
        assert "sdy.reshard %arg0" not in text
    local = optimize_text(full, "bare.mlir", parse_flags(["-sdy-reshard-to-collectives", "-sdy-convert-global-to-local"]))
    assert leaders(local) == "[true, true, false, false]"
    simulated(BARE_EXPLICIT, "bare.mlir")


@pytest.mark.parametrize("flag,options", [("sdy-insert-explicit-reshards", {}),
                                           ("sdy-insert-explicit-reshards{enable-full-version=true}", FULL)])
def test_known_difference_shardy_keeps_a_reshard_of_a_value_with_no_sharding_to_unreduced(flag, options):
    """KNOWN DIFFERENCE: Shardy's insert-explicit-reshards keeps `sdy.reshard
    %arg0 <@mesh, [{}], unreduced={"x"}>` of an argument with no sharding,
    and its reshard-to-collectives erases it: every device then holds the
    whole value, and the all-reduce after it sums twice the value, which no
    later step can tell from an all-reduce of partial sums (Shardy's
    convert-global-to-local lit cases all-reduce arguments with no sharding
    as partial sums). Ours writes a replicated_to_unreduced (and gives the
    argument its replicated sharding). No lit case of Shardy's has such a
    reshard."""
    theirs = shardy(BARE_EXPLICIT, flag)
    assert 'sdy.reshard %arg0 <@mesh, [{}], unreduced={"x"}>' in theirs, theirs
    mine = ours(BARE_EXPLICIT, "sdy-insert-explicit-reshards", options=options)
    assert 'sdy.replicated_to_unreduced {"x"} %arg0 out_sharding=<@mesh, [{}], unreduced={"x"}>' in mine, mine
    assert mine.replace('%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}', "%arg0: tensor<8xf32>") \
        .replace('sdy.replicated_to_unreduced {"x"} %arg0 out_sharding=<@mesh, [{}], unreduced={"x"}>',
                 'sdy.reshard %arg0 <@mesh, [{}], unreduced={"x"}>').strip() == theirs.strip()


# ------------------------------------------------------------------ 2. sharded_to_unreduced
def s2u_module(mesh: str, dims: str, target: str, unreduced: str, shape=(8, 4)) -> str:
    t = "x".join(map(str, shape)) + "xf32"
    return mesh + f"""func.func @main(%arg0: tensor<{t}> {{sdy.sharding = #sdy.sharding<@mesh, [{dims}]>}}) -> (tensor<{t}> {{sdy.sharding = #sdy.sharding<@mesh, [{target}], unreduced={{{unreduced}}}>}}) {{
  %0 = stablehlo.negate %arg0 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{dims}]>]>}} : tensor<{t}>
  return %0 : tensor<{t}>
}}"""


S2U = s2u_module(M22, '{"x"}, {"y"}', '{}, {"y"}', '"x"')


def test_insert_writes_sharded_to_unreduced_as_shardy_does():
    flag = "sdy-insert-explicit-reshards{enable-full-version=true}"
    mine = ours(S2U, "sdy-insert-explicit-reshards", options=FULL)
    assert 'sdy.sharded_to_unreduced [{"x"}, {}] %0 out_sharding=<@mesh, [{}, {"y"}], unreduced={"x"}>' in mine
    assert mine.strip() == shardy(S2U, flag).strip()


def test_sharded_to_unreduced_keeps_the_shard_in_place_with_zeros_elsewhere():
    """Before: "'sdy.sharded_to_unreduced' must be lowered to collectives
    before convert-global-to-local". (The values are checked by the
    simulated pipelines below, which start from modules without it.)"""
    text = M22 + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}], unreduced={"x"}>}) {
  %0 = sdy.sharded_to_unreduced [{"x"}, {}] %arg0 out_sharding=<@mesh, [{}, {"y"}], unreduced={"x"}> : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}"""
    out = optimize_text(text, "t.mlir", parse_flags(["-sdy-convert-global-to-local"]))
    assert "sdy.sharded_to_unreduced" not in out
    # devices (x, y) = 0:(0,0) 1:(0,1) 2:(1,0) 3:(1,1): rows 0-3 on x = 0, 4-7 on x = 1
    assert "dense<[0, 0, 4, 4]> : tensor<4xi64>" in out
    assert "stablehlo.dynamic_update_slice %cst, %arg0," in out and "-> tensor<8x2xf32>" in out


@pytest.mark.parametrize("mesh,dims,target,unreduced", [
    ("x2y2", '{"x"}, {"y"}', '{}, {"y"}', '"x"'),
    ("x2y2", '{"x", "y"}, {}', '{"x"}, {}', '"y"'),
    ("x2y2", '{"x", "y"}, {}', '{}, {}', '"x", "y"'),
    ("x4y2", '{"x"}, {"y"}', '{"x":(1)2}, {}', '"x":(2)2, "y"'),
    ("x4y2", '{"y", "x"}, {}', '{"y"}, {}', '"x"'),
])
def test_sharded_to_unreduced_matches_global(mesh, dims, target, unreduced):
    text = s2u_module(MESHES[mesh], dims, target, unreduced)
    assert "sdy.sharded_to_unreduced" in ours(text, "sdy-insert-explicit-reshards", options=FULL)
    simulated(text, "s2u.mlir")


def axes_text(axes) -> str:
    return ", ".join(f'"{a}"' for a in axes)


@st.composite
def s2u_cases(draw):
    """A rank-2 value sharded on one or both axes of x4y2, returned with the
    minor end of each sharded dimension's axes unreduced (at least one axis
    per such dimension), and maybe the unused axis too (replicated to
    unreduced)."""
    axes = ["x", "y"]
    used = draw(st.permutations(axes))[:draw(st.integers(1, 2))]
    split = draw(st.integers(0, len(used)))
    dims = [used[:split], used[split:]]
    target, unreduced = [], []
    for d in dims:
        keep = draw(st.integers(0, len(d) - 1)) if d else 0
        target.append(d[:keep])
        unreduced += d[keep:]
    unreduced += [a for a in axes if a not in used and draw(st.booleans())]
    shape = (8 * draw(st.integers(1, 2)), 8)
    return s2u_module(MESHES["x4y2"], ", ".join("{" + axes_text(d) + "}" for d in dims),
                      ", ".join("{" + axes_text(d) + "}" for d in target), axes_text(sorted(unreduced)), shape)


@SETTINGS
@given(s2u_cases(), st.integers(0, 5))
def test_generated_values_made_unreduced_match_global(text, seed):
    simulated(text, "s2u_generated.mlir", seed=seed)


