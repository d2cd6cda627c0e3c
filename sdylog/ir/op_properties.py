"""Op traits Shardy's passes ask about that the Python bindings cannot query:
element-wise, pure (no side effect, safe to duplicate or drop), constant-like.

The tables list the StableHLO / CHLO ops declared with MLIR's `Elementwise`
or StableHLO's `BroadcastingElementwise` trait (StablehloOps.td, ChloOps.td),
and three CHLO ops XLA rewrites into such ops (_CHLO_ELEMENTWISE_BY_REWRITE).
"""
from __future__ import annotations

from sdylog.ir.rewrite import as_operation, results_of
from sdylog.ir.types import is_static_shaped, static_shape

_STABLEHLO_ELEMENTWISE = (
    "abs", "add", "and", "atan2", "cbrt", "ceil", "complex", "convert", "cosine",
    "count_leading_zeros", "divide", "exponential", "exponential_minus_one", "floor", "imag",
    "is_finite", "log", "log_plus_one", "logistic", "maximum", "minimum", "multiply", "negate",
    "not", "or", "popcnt", "power", "real", "remainder", "round_nearest_afz",
    "round_nearest_even", "rsqrt", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "sign", "sine", "sqrt", "subtract", "tan", "tanh",
    "uniform_dequantize", "uniform_quantize", "xor",
    # Elementwise declared on the op itself, and broadcasting element-wise ops.
    "compare", "reduce_precision", "clamp", "select",
)
_CHLO_ELEMENTWISE = (
    "_asin_acos_kernel", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e",
    "conj", "cosh", "digamma", "erf", "erf_inv", "erfc", "is_inf", "is_neg_inf", "is_pos_inf",
    "lgamma", "sinh", "square", "tan",
    "broadcast_add", "broadcast_and", "broadcast_atan2", "broadcast_compare",
    "broadcast_complex", "broadcast_divide", "broadcast_maximum", "broadcast_minimum",
    "broadcast_multiply", "broadcast_next_after", "broadcast_or", "broadcast_polygamma",
    "broadcast_power", "broadcast_remainder", "broadcast_shift_left",
    "broadcast_shift_right_arithmetic", "broadcast_shift_right_logical",
    "broadcast_subtract", "broadcast_xor", "broadcast_zeta", "broadcast_select",
)
# CHLO ops declared without the trait (ChloOps.td gives them only Pure and
# same operand and result types) that compute element by element all the
# same. No JAX compilation shows them to Shardy: XLA rewrites every CHLO op
# into StableHLO first, and these become element-wise StableHLO ops (like
# chlo.erf and the others above), so sdylog treats them as those: element-wise
# here, the pointwise sharding rule (sdylog/oprules/registry.py), padded like
# any element-wise op.
_CHLO_ELEMENTWISE_BY_REWRITE = ("next_after", "polygamma", "zeta")
ELEMENTWISE_OPS = frozenset([f"stablehlo.{n}" for n in _STABLEHLO_ELEMENTWISE]
                            + [f"chlo.{n}" for n in _CHLO_ELEMENTWISE + _CHLO_ELEMENTWISE_BY_REWRITE])

# Shardy treats its own value-preserving ops as element-wise for propagation.
_SDY_ELEMENTWISE = frozenset({"sdy.propagation_barrier", "sdy.sharding_constraint", "sdy.reshard"})

# Ops without memory effects that are speculatable once their shapes are static.
_PURE_OPS = ELEMENTWISE_OPS | frozenset({
    "stablehlo.constant", "stablehlo.iota", "stablehlo.broadcast_in_dim", "stablehlo.broadcast",
    "stablehlo.reshape", "stablehlo.slice", "stablehlo.bitcast_convert", "stablehlo.transpose",
    "stablehlo.concatenate", "stablehlo.pad", "stablehlo.reverse", "stablehlo.dot",
    "stablehlo.dot_general", "stablehlo.dynamic_slice", "stablehlo.dynamic_update_slice",
    "stablehlo.get_tuple_element", "stablehlo.tuple", "stablehlo.optimization_barrier",
    "stablehlo.replica_id", "stablehlo.partition_id", "stablehlo.return",
    "sdy.constant", "sdy.reshard", "sdy.propagation_barrier", "sdy.return", "func.return",
})

CONSTANT_LIKE_OPS = frozenset({"stablehlo.constant", "chlo.constant", "arith.constant"})


def is_elementwise(op, name: str | None = None) -> bool:
    """Shardy's isElementwise: element-wise traits, a bitcast-convert that keeps
    the shape (equal bit widths), and sdy's barrier, constraint and reshard.
    A caller that has read the op's name already may pass it."""
    op = as_operation(op)
    if name is None:
        name = op.name
    if name in ELEMENTWISE_OPS or name in _SDY_ELEMENTWISE:
        return True
    if name == "stablehlo.bitcast_convert":
        return static_shape(op.operands[0].type) == static_shape(op.results[0].type)
    return False


def is_pure(op, static_types: dict | None = None, name: str | None = None, operands=None) -> bool:
    """MLIR's isPure for the ops we know: no memory effect, and (for StableHLO's
    conditionally speculatable ops) static shapes everywhere.

    `static_types` (type -> is_static_shaped), when given, remembers the
    answer per type: a caller asking about many ops reads each distinct type's
    shape through the bindings once. A caller that has read the op's name or
    operands already may pass them (each read goes through the bindings)."""
    op = as_operation(op)
    if name is None:
        name = op.name
    if name not in _PURE_OPS:
        return False
    if not name.startswith(("stablehlo.", "chlo.")):
        return True
    values = [*(op.operands if operands is None else operands), *results_of(op)]
    if static_types is None:
        return all(is_static_shaped(v.type) for v in values)
    for v in values:
        t = v.type
        static = static_types.get(t)
        if static is None:
            static = static_types[t] = is_static_shaped(t)
        if not static:
            return False
    return True


# --- memory effects (for dead-code elimination) ------------------------------------
# Ops that declare no memory effect (Pure / NoMemoryEffect), beyond the
# element-wise ones.
_EFFECT_FREE = frozenset([f"stablehlo.{n}" for n in (
    "after_all", "batch_norm_grad", "batch_norm_inference", "batch_norm_training",
    "bitcast_convert", "broadcast", "broadcast_in_dim", "cholesky", "concatenate", "constant",
    "convolution", "create_token", "dot", "dot_general", "dynamic_broadcast_in_dim",
    "dynamic_conv", "dynamic_gather", "dynamic_iota", "dynamic_pad", "dynamic_reshape",
    "dynamic_slice", "dynamic_update_slice", "einsum", "fft", "gather", "get_dimension_size",
    "get_tuple_element", "iota", "optimization_barrier", "pad", "partition_id",
    "real_dynamic_slice", "replica_id", "reshape", "return", "reverse", "rng_bit_generator",
    "set_dimension_size", "slice", "torch_index_select", "transpose", "triangular_solve",
    "tuple", "unary_einsum")] + [
    "sdy.constant", "sdy.reshard", "sdy.propagation_barrier", "sdy.return", "func.return",
    "chlo.constant", "chlo.constant_like", "arith.constant"]) | ELEMENTWISE_OPS

# Ops whose effects are those of the ops in their regions.
_RECURSIVE_EFFECTS = frozenset([f"stablehlo.{n}" for n in (
    "case", "if", "map", "reduce", "reduce_window", "scatter", "select_and_scatter", "sort",
    "while")] + ["sdy.named_computation", "sdy.manual_computation"])


def may_be_effect_free(name: str) -> bool:
    """Whether an op of this name can be without memory effects at all (a cheap
    first test before would_be_trivially_dead)."""
    return name in _EFFECT_FREE or name in _RECURSIVE_EFFECTS or name == "stablehlo.custom_call"


def custom_call_has_side_effect(attributes) -> bool:
    """A custom call's memory effects: those of `has_side_effect = true`, else none."""
    from jaxlib.mlir import ir
    return "has_side_effect" in attributes and ir.BoolAttr(attributes["has_side_effect"]).value


def would_be_trivially_dead(op) -> bool:
    """MLIR's wouldOpBeTriviallyDead: not a terminator, and neither the op nor
    (for ops with recursive effects) anything nested in it has a memory effect.
    A custom call has effects only with `has_side_effect = true`."""
    from jaxlib.mlir import ir

    op = as_operation(op)
    if op.has_trait(ir.IsTerminatorTrait):
        return False
    stack = [op]
    while stack:
        cur = stack.pop()
        name = cur.name
        if name in _RECURSIVE_EFFECTS:
            stack.extend(as_operation(inner) for r in cur.regions for b in r.blocks for inner in b.operations)
            continue
        if name == "stablehlo.custom_call":
            if custom_call_has_side_effect(cur.attributes):
                return False
            continue
        if name not in _EFFECT_FREE:
            return False
    return True


def reduction_dim(op) -> int | None:
    """An ApproxTopK's or PartialReduce's `reduction_dim`, from its
    mhlo.backend_config dictionary (JAX's) or a JSON backend_config string,
    counted from 0 (a negative one from the end of operand 0); None when not
    given."""
    import json

    from jaxlib.mlir import ir
    dim = None
    if "mhlo.backend_config" in op.attributes:
        config = op.attributes["mhlo.backend_config"]
        if isinstance(config, ir.DictAttr) and "reduction_dim" in config:
            dim = ir.IntegerAttr(config["reduction_dim"]).value
    if dim is None and "backend_config" in op.attributes and isinstance(op.attributes["backend_config"],
                                                                         ir.StringAttr):
        try:
            dim = json.loads(ir.StringAttr(op.attributes["backend_config"]).value).get("reduction_dim")
        except (ValueError, AttributeError):
            return None
        if not isinstance(dim, int):
            return None
    if dim is not None and dim < 0:
        dim += len(static_shape(op.operands[0].type))
    return dim
