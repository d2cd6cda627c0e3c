"""-sdy-insert-explicit-reshards=enable-full-version=true on a concatenate of
two slices whose results the slices' own step reshards (rev33 F7, from
`jnp.roll`): sdylog and Shardy (shared/conformance/shardy_ref_opt.py)
disagree, a strict xfail until sdylog follows Shardy. Both programs are
right; sdylog's moves less. A fix that evaluates the reshard rules again
while they find such concatenates was written and not taken: a chain of
them (a concatenate's reshard feeding the next one's slices) would make the
evaluations per run grow with the chain.

Why (openxla/shardy a0277a8): Shardy builds each op's sharding rule when its
walk reaches the op (insert_explicit_reshards.cc, getOrCreateShardingRule),
on the module as rewritten so far. The concatenate's rule
(op_sharding_rule_registry.cc, ConcatenateOp) makes the concatenated
dimension a permutation factor only when every operand is defined by a
stablehlo.slice (or slices of one tensor with that tensor), else a
need-replication factor. Here each slice's operand is on "data":(1)2 and its
result on "data": the slice's step keeps the slice on "data":(1)2 and
reshards its result to "data" with an sdy.reshard, so by the time the walk
reaches the concatenate its operands are sdy.reshard results: the
concatenated dimension needs replication, both operands are resharded to
[{}, {"model"}], and the result back to "data". sdylog builds the rule once
on the propagated module (sdylog/oprules/shape_ops.py, _concat_dim_kind:
operands are slices, so a permutation) and keeps the concatenate on "data".
With "data" on the argument too (no reshard after the slices) both agree.

sdylog's program is the cheaper one (one reshard after the concatenate
against two reshards to replicated and two after), but Shardy's is the
oracle. A fix: derive the concatenated dimension's kind in rules/reshard
from whether an operand's producer reshards its result (for a slice, or for
the non-slice operand of the second pattern), not in Python; the
dependency (a producer's result reshard, decided by the rules, changes a
later op's rule) needs care with stratification.
"""
import pytest

from generators import shardy_differential as diff

FLAGS = ["-sdy-insert-explicit-reshards=enable-full-version=true"]

MODULE = """
module {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func public @main(%arg0: tensor<10x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{AXIS}, {"model"}]>}) -> (tensor<10x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{AXIS}, {"model"}]>}) {
    %0 = stablehlo.slice %arg0 [7:10, 0:6] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>} : (tensor<10x6xf32>) -> tensor<3x6xf32>
    %1 = stablehlo.slice %arg0 [0:7, 0:6] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>} : (tensor<10x6xf32>) -> tensor<7x6xf32>
    %2 = stablehlo.concatenate %0, %1, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>} : (tensor<3x6xf32>, tensor<7x6xf32>) -> tensor<10x6xf32>
    return %2 : tensor<10x6xf32>
  }
}
"""

pytestmark = pytest.mark.skipif(diff.missing_reason() is not None, reason=str(diff.missing_reason()))


def _compare(axis: str) -> diff.Comparison:
    return diff.compare(MODULE.replace("AXIS", axis), FLAGS, reshards=True)


def test_concat_of_slices_without_reshards_agrees():
    result = _compare('"data"')
    assert result.full, result.mismatches


def test_shardy_replicates_the_concat_dim_after_slice_reshards():
    """What the oracle does (the xfail below rests on it)."""
    out = diff.shardy(MODULE.replace("AXIS", '"data":(1)2'), FLAGS, with_reshards=True)
    assert 'stablehlo.concatenate' in out
    concat = next(l for l in out.splitlines() if "stablehlo.concatenate" in l)
    assert '[{}, {"model"}]' in concat


@pytest.mark.xfail(strict=True, reason="rev33 F7: Shardy builds the concatenate's rule after the slices' "
                   "result reshards (operands no longer slices: need replication); sdylog on the propagated module")
def test_concat_of_resharded_slices_agrees():
    result = _compare('"data":(1)2')
    assert result.full, result.mismatches
