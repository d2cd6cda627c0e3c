"""Values made unreduced in the per-device program (issue 18; r31's report,
item 6):

- a value with no sharding brought to a target with unreduced axes (a
  function result `unreduced={"x"}`, a reshard to unreduced) is taken as
  replicated on the target's mesh and made unreduced
  (`sdy.replicated_to_unreduced`, rules/reshard/targets.dl,
  site_bare_unreduces): each device's part sums to the value;
- `sdy.sharded_to_unreduced` (written by insert-explicit-reshards, or in
  the input) is lowered by convert-global-to-local: each device keeps its
  shard in place, zeros elsewhere.

Each module runs through `simulate_text` (the partitioner pipeline, the
per-device program on every device, results compared with the global run;
an unreduced result is summed over its axes first)."""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.simulate import simulate_text
from tests.passes.passes_oracle import ours, shardy

EXAMPLES = int(os.environ.get("SDYLOG_HYPOTHESIS_EXAMPLES", "10"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 25,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

M2 = 'sdy.mesh @mesh = <["x"=2]>\n'
M22 = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
MESHES = {"x2": M2, "x2y2": M22, "x4y2": 'sdy.mesh @mesh = <["x"=4, "y"=2]>\n'}
FULL = {"enable-full-version": True}


def simulated(text: str, name: str, seed: int = 3):
    report = simulate_text(text, name, seed=seed)
    assert report.ok, f"{text}\n{report.text()}"
    return report


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
    """Before: no replicated_to_unreduced, every device returned the whole
    value, and the devices' parts summed to twice it."""
    simulated(BARE_RESULT, "r2u.mlir")


def test_a_value_with_no_sharding_is_made_unreduced_where_its_target_wants():
    out = ours(BARE_EXPLICIT, "sdy-insert-explicit-reshards")
    # the value says it is replicated (a collective's operand has a sharding)
    assert '%0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>}' in out
    assert 'sdy.reshard %0 <@mesh, [{"y"}]>' in out
    assert 'replicated_to_unreduced {"x"} %2 out_sharding=<@mesh, [{"y"}], unreduced={"x"}>' in out
    # the reshard to unreduced of %arg0 became a replicated_to_unreduced
    assert 'replicated_to_unreduced {"x"} %arg0 out_sharding=<@mesh, [{}], unreduced={"x"}>' in out
    assert "sdy.reshard %arg0" not in out
    assert ours(BARE_EXPLICIT, "sdy-insert-explicit-reshards", options=FULL) == out
    simulated(BARE_EXPLICIT, "bare.mlir")


@pytest.mark.parametrize("flag,options", [("sdy-insert-explicit-reshards", {}),
                                           ("sdy-insert-explicit-reshards{enable-full-version=true}", FULL)])
def test_known_difference_shardy_leaves_a_value_with_no_sharding_replicated(flag, options):
    """KNOWN DIFFERENCE: Shardy's insert-explicit-reshards (jaxlib, and its
    sources up to 2026-08: insertUnreducedCollectives returns at once when
    the value has no sharding, and isEquivalent(none, target) ignores
    unreduced axes) writes nothing for a value with no sharding returned
    unreduced, so each device returns the whole value and their sum is the
    value times the devices along the axes (its propagation pipeline
    likewise). Its own lit case says so
    (export/insert_explicit_reshards/unreduced.mlir#16,
    all_reduce_source_no_sharding_and_target_has_unreduced): that case is
    out of tests/conformance/ratchet.txt on purpose. sdylog makes the value
    unreduced."""
    theirs = shardy(BARE_RESULT, flag)
    assert "replicated_to_unreduced" not in theirs and "sdy.reshard" not in theirs, theirs
    mine = ours(BARE_RESULT, "sdy-insert-explicit-reshards", options=options)
    assert 'sdy.replicated_to_unreduced {"x"} %0 out_sharding=<@mesh, [{}], unreduced={"x"}>' in mine, mine


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
    simulated pipelines below: the simulator's global run cannot execute an
    sdy.sharded_to_unreduced written in its input.)"""
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


