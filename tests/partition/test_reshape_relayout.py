"""Reshapes that merge or split a dimension whose sharding does not divide
it (issue 18: 10x8 on 4 devices -> 80). Where insert-explicit-reshards
leaves a group of the reshape's dimensions with different axes on its two
sides (a strided view the other side's sharding cannot say: 10x8 -> 5x16
or -> 20x4 with the rows sharded; was refused, "needs a reshard of operand
0 before convert-global-to-local"), rules/partition/permutation.dl
(misaligned_reshape_group) replicates that group around the reshape.
Generated reshapes (hypothesis: shapes, shardings before and after, halo
exchange on or off) partitioned and simulated equal the unpartitioned run."""
from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdylog.simulate.simulate import simulate_text
from tests.partition.xy_specs import axes_per_dim, spec, ty

def reshape_program(ins, outs, in_axes, out_axes=None):
    """exp(x constrained to in_axes) reshaped, constrained to out_axes (None: not constrained), exp'd."""
    after = (f"  %o = sdy.sharding_constraint %r <@mesh, {spec(out_axes)}> : {ty(outs)}\n" if out_axes is not None
             else f"  %o = stablehlo.negate %r : {ty(outs)}\n")
    return f'''sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: {ty(ins)}) -> {ty(outs)} {{
  %c = sdy.sharding_constraint %a <@mesh, {spec(in_axes)}> : {ty(ins)}
  %e = stablehlo.exponential %c : {ty(ins)}
  %r = stablehlo.reshape %e : ({ty(ins)}) -> {ty(outs)}
{after}  %n = stablehlo.exponential %o : {ty(outs)}
  return %n : {ty(outs)}
}}'''


def check(text, halo=True):
    report = simulate_text(text, "t.mlir", halo_exchange=halo)
    assert report.partitioned
    assert report.ok, (text, report.difference)


# The case: 10 rows of 8 on 4 devices (padded to 12) merged to 80.
def test_padded_rows_merged():
    check(reshape_program((10, 8), (80,), [("x",), ()], [("x",)]))


# 10 = 5 x 2, the 2 merged with 8: the result's factor of 8 sharded where
# the operand's sharding cannot say it.
def test_split_and_merged_rows():
    check(reshape_program((10, 8), (5, 16), [("x",), ()]))


def test_merged_into_more_rows():
    check(reshape_program((10, 8), (20, 4), [("y", "x"), ()], [("y", "x"), ()]), halo=False)


# 10 rows on "x" (padded to 12) split to 2x5 with "y" kept on the 8: the
# halo relayout's collective_permute inside its manual computation (over "x")
# carried no sharding for the free "y" ("needs a reshard of result 0 before
# convert-global-to-local").
def test_split_rows_with_a_free_axis():
    check(reshape_program((10, 8), (2, 5, 8), [("x",), ("y",)]))


SHAPES = [((10, 8), (80,)), ((10, 8), (5, 16)), ((10, 8), (2, 5, 8)), ((10, 8), (20, 4)), ((6, 10), (60,)),
          ((6, 10), (3, 20)), ((2, 10, 8), (20, 8)), ((2, 10, 8), (2, 80)), ((12, 5), (4, 15)), ((9, 4), (3, 12)),
          ((80,), (10, 8)), ((60,), (6, 10)), ((3, 5, 4), (15, 4)), ((3, 5, 4), (3, 20)), ((10, 1, 8), (80,)),
          ((7, 3), (21,))]


@st.composite
def reshapes(draw):
    ins, outs = draw(st.sampled_from(SHAPES))
    out_axes = draw(st.one_of(st.none(), axes_per_dim(len(outs))))
    return reshape_program(ins, outs, draw(axes_per_dim(len(ins))), out_axes), draw(st.booleans())


@settings(max_examples=int(os.environ.get("SDYLOG_HYPOTHESIS_EXAMPLES", "25")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(reshapes())
def test_generated_reshapes(case):
    text, halo = case
    check(text, halo)
