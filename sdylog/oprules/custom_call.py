"""stablehlo.custom_call: the targets Shardy knows, by call target name.

A custom call with a user rule (`sdy.sharding_rule`) never gets here (the
registry returns that rule first). Targets known to have no rule build None;
any other target is unknown, which `custom_call` reports by raising
UnknownOp (the registry decides whether that is an error).
"""
from __future__ import annotations

from sdylog.oprules.common import (NULL_DIM, FactorKind, UnknownOp, builder_for, no_rule,
                                   pointwise, shape_of, str_attr, users)

_REPLICATE = FactorKind.NEED_REPLICATION


def eigh(op, conservative):
    """Operand: a batch of matrices; results: eigenvectors (same shape) and
    eigenvalues (batch + one dimension, the operand's last)."""
    shape = shape_of(op.operands[0])
    row, col = len(shape) - 2, len(shape) - 1
    b = builder_for(op).add_pointwise(shape[:-2])
    b.add_factor([row], [row, NULL_DIM], shape[row])
    b.add_factor([col], [col, row], shape[col])
    return b.build()


def qr(op, conservative):
    """Results: q (shape of the operand) and taus (batch + min(m, n)), which
    shares nothing useful with the matrix dimensions."""
    shape, taus = shape_of(op.operands[0]), shape_of(op.results[1])
    row, col = len(shape) - 2, len(shape) - 1
    b = builder_for(op).add_pointwise(shape[:-2])
    b.add_factor([row], [row, NULL_DIM], shape[row], _REPLICATE)
    b.add_factor([col], [col, NULL_DIM], shape[col], _REPLICATE)
    b.add_factor([NULL_DIM], [NULL_DIM, row], taus[row], _REPLICATE)
    return b.build()


def householder_product(op, conservative):
    """Operands: a batch of matrices and their taus; result: the matrices' shape."""
    shape, taus = shape_of(op.operands[0]), shape_of(op.operands[1])
    row, col = len(shape) - 2, len(shape) - 1
    b = builder_for(op).add_pointwise(shape[:-2])
    b.add_factor([row, NULL_DIM], [row], shape[row], _REPLICATE)
    b.add_factor([col, NULL_DIM], [col], shape[col], _REPLICATE)
    b.add_factor([NULL_DIM, row], [NULL_DIM], taus[row], _REPLICATE)
    return b.build()


def top_k(op, conservative):
    """mhlo.topk: values and indices; the shortened dimension replicates and blocks."""
    return builder_for(op).add_pointwise_with_mismatch(
        shape_of(op.operands[0]), shape_of(op.results[0]), _REPLICATE,
        mismatch_blocked=True).build()


def approx_top_k(op, conservative):
    """Operands: operand, iota, two scalar inits; results: values, indices. The
    reduced dimension has an input factor and a (replicated, blocked) output
    factor of its own."""
    b = builder_for(op)
    for d, (in_size, out_size) in enumerate(zip(shape_of(op.operands[0]), shape_of(op.results[0]),
                                                strict=True)):
        if in_size == out_size:
            b.add_factor_to_dim(d, in_size)
        else:
            b.add_factor([d, d, NULL_DIM, NULL_DIM], [NULL_DIM, NULL_DIM], in_size)
            b.add_factor([NULL_DIM] * 4, [d, d], out_size, _REPLICATE, blocked=True)
    return b.build()


def x64_combine(op, conservative):
    """Pointwise, except that the state of an rng_bit_generator (a ui64 vector
    that must stay replicated) cannot be resharded: replicate and block."""
    if any(u.name == "stablehlo.rng_bit_generator" for u in users(op)):
        shape = shape_of(op.results[0])
        return builder_for(op).add_pointwise(shape[:1], _REPLICATE, blocked=True).build()
    return pointwise(op)


_NO_RULE = ["sdy_testonly", "tpu_custom_call", "xla_python_cpu_callback",
            "xla_python_gpu_callback", "xla_ffi_python_cpu_callback",
            "xla_ffi_python_gpu_callback", "xla.debug.Log"]
_POINTWISE = ["annotate_device_placement", "Cholesky", "CompactWyHelper", "InspectSharding",
              "InvertDiagBlocksLowerTriangular", "InvertDiagBlocksUpperTriangular",
              "LayoutConstraint", "mhlo.erf", "MoveToDevice", "MoveToHost", "X64SplitHigh",
              "X64SplitLow", "xla.megascale.provide_metadata",
              # SPMD-internal collective permutes: every result is sharded like the input.
              "_SPMDInternalOp_MultiPad", "_SPMDInternalOp_RotateRight",
              "_SPMDInternalOp_MultiRotate", "_SPMDInternalOp_MultiSlice", "_SPMDInternalOp_Wrap"]

# call target name -> builder
TARGETS = {name: no_rule for name in _NO_RULE}
TARGETS.update({name: pointwise for name in _POINTWISE})
TARGETS.update({
    "ApproxTopK": approx_top_k,
    "Eigh": eigh,
    "mhlo.topk": top_k,
    "PartialReduce": approx_top_k,
    "ProductOfElementaryHouseholderReflectors": householder_product,
    "Qr": qr,
    "QrDecompositionBlock": qr,
    "X64Combine": x64_combine,
})


def custom_call(op, conservative):
    target = str_attr(op, "call_target_name")
    build = TARGETS.get(target)
    if build is None:
        raise UnknownOp(f"custom call @{target} is unknown to SDY sharding rule registry")
    return build(op, conservative)
