"""sdylog's rule registry against Shardy's (openxla/shardy,
shardy/dialect/sdy/transforms/propagation/op_sharding_rule_registry.cc,
as of jaxlib 0.10.2): the op names and custom call targets it knows,
transcribed, each with the kind of rule it gets there.

Every op Shardy knows, sdylog knows, with the same kind of rule. sdylog
knows more (EXTRA): CHLO ops and einsum, which XLA rewrites before Shardy
sees them in a JAX compilation (they take the rule of the rewrite),
stablehlo.rng, and sdy's collectives (Shardy warns on them; they only
appear after propagation). Ops neither knows (stablehlo.map, composite,
batch_norm_training, ...) sdylog refuses by name, where Shardy warns and
leaves the op's tensors unsharded.

On two small modules (collectives used directly, pointwise and no-rule
custom call targets the upstream lit tests leave out) propagation and
explicit reshards print what Shardy prints; the ops JAX users emit are in
tests/simulate/test_ops_jax_user.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from generators import shardy_differential as diff
from oprules_helpers import rule_text
from sdylog.errors import SdylogError
from sdylog.ir.op_properties import ELEMENTWISE_OPS, is_elementwise
from sdylog.oprules import collectives, contraction, elementwise, indexing, linalg, reductions, shape_ops
from sdylog.oprules.common import no_rule, pointwise
from sdylog.oprules.custom_call import TARGETS
from sdylog.oprules.registry import RULES
from sdylog.passes.driver import optimize_text, parse_flags

DATA = Path(__file__).parent / "data"

# buildPointwise in Shardy's registry.
SHARDY_POINTWISE = ["sdy.sharding_constraint"] + [f"stablehlo.{n}" for n in (
    "abs", "add", "all_reduce", "and", "atan2", "cbrt", "ceil", "count_leading_zeros",
    "collective_broadcast", "collective_permute", "compare", "complex", "convert", "cosine",
    "cross-replica-sum", "divide", "exponential", "exponential_minus_one", "floor", "imag",
    "is_finite", "log_plus_one", "log", "logistic", "maximum", "minimum", "multiply", "negate",
    "not", "or", "popcnt", "power", "real", "reduce_precision", "remainder", "round_nearest_even",
    "round_nearest_afz", "rsqrt", "shift_left", "shift_right_arithmetic", "shift_right_logical",
    "sign", "sine", "sqrt", "subtract", "tan", "tanh", "xor")]
# Ops with a rule of their own there -> sdylog's builder.
SHARDY_OWN = {
    "stablehlo.all_gather": collectives.all_gather, "stablehlo.all_to_all": collectives.all_to_all,
    "stablehlo.bitcast_convert": elementwise.bitcast_convert,
    "stablehlo.batch_norm_inference": elementwise.batch_norm_inference,
    "stablehlo.broadcast_in_dim": shape_ops.broadcast_in_dim, "stablehlo.cholesky": linalg.cholesky,
    "stablehlo.clamp": elementwise.operand_shaped, "stablehlo.concatenate": shape_ops.concatenate,
    "stablehlo.convolution": contraction.convolution, "stablehlo.dot_general": contraction.dot_general,
    "stablehlo.dot": contraction.dot, "stablehlo.dynamic_slice": shape_ops.dynamic_slice,
    "stablehlo.dynamic_update_slice": shape_ops.dynamic_update_slice, "stablehlo.fft": linalg.fft,
    "stablehlo.gather": indexing.gather, "stablehlo.pad": shape_ops.padded_or_sliced,
    "stablehlo.reduce": reductions.reduce, "stablehlo.reduce_scatter": collectives.reduce_scatter,
    "stablehlo.reduce_window": reductions.reduce_window, "stablehlo.reshape": shape_ops.reshape,
    "stablehlo.reverse": shape_ops.reverse, "stablehlo.rng_bit_generator": linalg.rng_bit_generator,
    "stablehlo.scatter": indexing.scatter, "stablehlo.select_and_scatter": reductions.select_and_scatter,
    "stablehlo.select": elementwise.operand_shaped, "stablehlo.slice": shape_ops.padded_or_sliced,
    "stablehlo.sort": reductions.sort, "stablehlo.transpose": shape_ops.transpose,
    "stablehlo.triangular_solve": linalg.triangular_solve,
}
# Ops it gives no rule on purpose (handled elsewhere, or nothing to shard),
# with the sdy ops that are ShardableDataFlowOpInterfaces.
SHARDY_NO_RULE = ["builtin.module", "func.func", "func.call", "sdy.constant", "sdy.data_flow_edge",
                  "sdy.func_data_flow_edge", "sdy.manual_computation", "sdy.mesh", "sdy.named_computation",
                  "sdy.propagation_barrier", "sdy.sharding_group", "sdy.reshard"] + [f"stablehlo.{n}" for n in (
                      "after_all", "case", "constant", "create_token", "get_tuple_element", "infeed", "iota",
                      "outfeed", "optimization_barrier", "partition_id", "recv", "send", "while")]
# Custom call targets, by the kind of rule.
SHARDY_TARGETS_NO_RULE = ["sdy_testonly", "tpu_custom_call", "xla_python_cpu_callback", "xla_python_gpu_callback",
                          "xla_ffi_python_cpu_callback", "xla_ffi_python_gpu_callback", "xla.debug.Log"]
SHARDY_TARGETS_POINTWISE = [
    "annotate_device_placement", "Cholesky", "CompactWyHelper", "InspectSharding",
    "InvertDiagBlocksLowerTriangular", "InvertDiagBlocksUpperTriangular", "LayoutConstraint", "mhlo.erf",
    "MoveToDevice", "MoveToHost", "X64SplitHigh", "X64SplitLow", "xla.megascale.provide_metadata",
    "_SPMDInternalOp_MultiPad", "_SPMDInternalOp_RotateRight", "_SPMDInternalOp_MultiRotate",
    "_SPMDInternalOp_MultiSlice", "_SPMDInternalOp_Wrap"]
SHARDY_TARGETS_OWN = ["Eigh", "Qr", "QrDecompositionBlock", "ProductOfElementaryHouseholderReflectors", "mhlo.topk",
                      "ApproxTopK", "PartialReduce", "X64Combine"]

# What sdylog knows beyond Shardy's registry.
EXTRA = ({n for n in ELEMENTWISE_OPS if n.startswith("chlo.") and ".broadcast_" not in n}
         | {"chlo.top_k", "stablehlo.einsum", "stablehlo.unary_einsum", "stablehlo.rng"}
         | {f"sdy.{n}" for n in ("all_gather", "all_reduce", "all_slice", "all_to_all", "collective_permute",
                                 "reduce_scatter", "replicated_to_unreduced", "sharded_to_unreduced")})


def test_every_op_shardy_knows_has_the_same_kind_of_rule():
    for name in SHARDY_POINTWISE:
        assert RULES.get(name) is pointwise, name
    for name, build in SHARDY_OWN.items():
        assert RULES.get(name) is build, name
    for name in SHARDY_NO_RULE:
        assert RULES.get(name) is no_rule, name


def test_every_custom_call_target_shardy_knows_has_the_same_kind_of_rule():
    assert all(TARGETS.get(t) is no_rule for t in SHARDY_TARGETS_NO_RULE)
    assert all(TARGETS.get(t) is pointwise for t in SHARDY_TARGETS_POINTWISE)
    assert all(TARGETS.get(t) not in (None, no_rule, pointwise) for t in SHARDY_TARGETS_OWN)
    assert set(TARGETS) == set(SHARDY_TARGETS_NO_RULE + SHARDY_TARGETS_POINTWISE + SHARDY_TARGETS_OWN)


def test_sdylog_knows_no_more_than_shardy_and_its_documented_extras():
    shardy = set(SHARDY_POINTWISE) | set(SHARDY_OWN) | set(SHARDY_NO_RULE) | {"stablehlo.custom_call"}
    assert set(RULES) - shardy == EXTRA


@pytest.mark.parametrize("name", ["next_after", "polygamma", "zeta"])
def test_chlo_ops_without_the_trait_are_element_wise_in_one_place(name):
    """chlo.next_after, polygamma and zeta (Pure, not `Elementwise` in
    ChloOps.td) become element-wise StableHLO in XLA: op_properties says so
    and the registry follows it."""
    op = f"chlo.{name}"
    assert op in ELEMENTWISE_OPS and is_elementwise(None, op) and RULES[op] is pointwise
    text = ('sdy.mesh @mesh = <["x"=2]>\n'
            'func.func @main(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>) -> tensor<8x4xf32> {\n'
            f'  %0 = {op} %a, %b : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>\n'
            '  return %0 : tensor<8x4xf32>\n}\n')
    assert rule_text(text, op) == "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=4}>"


@pytest.mark.skipif(diff.missing_reason() is not None, reason=diff.missing_reason() or "")
@pytest.mark.parametrize("name", ["shardy_coverage_collectives", "shardy_coverage_targets"])
def test_propagation_and_reshards_print_what_shardy_prints(name):
    flags = ["-sdy-propagation-pipeline", "-sdy-insert-explicit-reshards=enable-full-version=true"]
    text = (DATA / f"{name}.mlir").read_text()
    assert optimize_text(text, f"{name}.mlir", parse_flags(flags)).strip() == \
        diff.shardy(text, flags, with_reshards=True).strip()


# op -> (its line, the value main returns, of type)
UNKNOWN = {
    "stablehlo.map": ("""%0 = "stablehlo.map"(%a, %a) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %m = stablehlo.multiply %x, %y : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }) : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>""", "%0", "tensor<8x6xf32>"),
    "stablehlo.composite": ('%0 = stablehlo.composite "my.neg" %a {decomposition = @dec} : '
                            '(tensor<8x6xf32>) -> tensor<8x6xf32>', "%0", "tensor<8x6xf32>"),
    "stablehlo.batch_norm_grad": ("""%0:3 = "stablehlo.batch_norm_grad"(%a, %s, %s, %s, %a)
      <{epsilon = 1.0e-3 : f32, feature_index = 1 : i64}>
      : (tensor<8x6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<8x6xf32>)
      -> (tensor<8x6xf32>, tensor<6xf32>, tensor<6xf32>)""",
                                  "%0#0", "tensor<8x6xf32>"),
}


@pytest.mark.parametrize("name", sorted(UNKNOWN))
def test_ops_neither_registry_knows_are_refused_by_name(name):
    line, value, result_type = UNKNOWN[name]
    text = ('sdy.mesh @mesh = <["x"=2]>\n'
            'func.func private @dec(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {\n'
            '  %0 = stablehlo.negate %x : tensor<8x6xf32>\n  return %0 : tensor<8x6xf32>\n}\n'
            'func.func @main(%a: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, '
            f'%s: tensor<6xf32>) -> {result_type} {{\n'
            f'  {line}\n  return {value} : {result_type}\n}}\n')
    message = f"t.mlir:7:[0-9]+: error: op '{name}' is unknown to SDY sharding rule registry"
    with pytest.raises(SdylogError, match=message):
        optimize_text(text, "t.mlir", parse_flags(["-sdy-propagation-pipeline"]))
