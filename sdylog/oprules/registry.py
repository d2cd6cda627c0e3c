"""Op name -> sharding rule builder: one table.

A builder is `build(op, conservative) -> OpShardingRule | None`; the families
of builders live in the modules beside this one. `rule_for_op` is the one
entry point: a user rule already on the op wins, then the table; ops missing
from the table are unknown (Shardy warns about them and gives them no rule).
"""
from __future__ import annotations

from sdylog.ir.diagnostics import error_at
from sdylog.ir.op_properties import ELEMENTWISE_OPS
from sdylog.ir.shardings import SHARDING_RULE
from sdylog.model.rule import OpShardingRule
from sdylog.oprules import collectives, contraction, elementwise, indexing, linalg, reductions
from sdylog.oprules import shape_ops
from sdylog.oprules.common import UnknownOp, no_rule, pointwise
from sdylog.oprules import custom_call as custom_call_rules
from sdylog.oprules.custom_call import custom_call

# Ops that need no rule: constants and ops whose shardings other machinery
# handles (functions, calls, control flow, data-flow edges, manual
# computations, barriers), or that carry nothing to shard.
_NO_RULE = [
    "builtin.module", "func.func", "func.call",
    "sdy.all_gather", "sdy.all_reduce", "sdy.all_slice", "sdy.all_to_all", "sdy.collective_permute",
    "sdy.reduce_scatter", "sdy.replicated_to_unreduced", "sdy.sharded_to_unreduced",
    "sdy.constant", "sdy.data_flow_edge", "sdy.func_data_flow_edge", "sdy.manual_computation",
    "sdy.mesh", "sdy.named_computation", "sdy.propagation_barrier", "sdy.reshard",
    "sdy.sharding_group",
    "stablehlo.after_all", "stablehlo.case", "stablehlo.constant", "stablehlo.create_token",
    "stablehlo.get_tuple_element", "stablehlo.infeed", "stablehlo.iota", "stablehlo.outfeed",
    "stablehlo.optimization_barrier", "stablehlo.partition_id", "stablehlo.recv",
    "stablehlo.send", "stablehlo.while",
]

# Ops Shardy's registry has no rule for (jaxlib's Shardy warns and leaves them
# alone: it propagates nothing through them and inserts no reshard around them,
# so its per-device program of a sharded one is wrong), that JAX emits: they
# take the rule of what XLA rewrites them into before Shardy runs in a JAX
# compilation. CHLO's element-wise ops (ELEMENTWISE_OPS, sdylog/ir/op_properties.py,
# which says which they are, chlo.next_after, polygamma and zeta among them)
# become element-wise StableHLO (square: multiply) or custom call @mhlo.erf
# (pointwise in Shardy's registry); chlo.top_k custom call @mhlo.topk,
# einsum a dot_general.
_CHLO_POINTWISE = sorted(n for n in ELEMENTWISE_OPS if n.startswith("chlo.") and ".broadcast_" not in n)
_LEGALIZED = {
    **{name: pointwise for name in _CHLO_POINTWISE},
    "chlo.top_k": custom_call_rules.top_k,
    "stablehlo.einsum": contraction.einsum,
    "stablehlo.unary_einsum": contraction.einsum,
}

# Block terminators: no rule, and nothing to warn about.
_TERMINATORS = frozenset({"func.return", "stablehlo.return", "sdy.return", "mpmd.return"})

RULES = {
    # element-wise and shape-preserving collectives
    **{f"stablehlo.{name}": pointwise for name in elementwise.POINTWISE_OPS},
    "sdy.sharding_constraint": pointwise,
    "stablehlo.batch_norm_inference": elementwise.batch_norm_inference,
    "stablehlo.bitcast_convert": elementwise.bitcast_convert,
    "stablehlo.clamp": elementwise.operand_shaped,
    "stablehlo.select": elementwise.operand_shaped,
    # collectives that resize a dimension
    "stablehlo.all_gather": collectives.all_gather,
    "stablehlo.all_to_all": collectives.all_to_all,
    "stablehlo.reduce_scatter": collectives.reduce_scatter,
    # data movement
    "stablehlo.broadcast_in_dim": shape_ops.broadcast_in_dim,
    "stablehlo.concatenate": shape_ops.concatenate,
    "stablehlo.dynamic_slice": shape_ops.dynamic_slice,
    "stablehlo.dynamic_update_slice": shape_ops.dynamic_update_slice,
    "stablehlo.pad": shape_ops.padded_or_sliced,
    "stablehlo.reshape": shape_ops.reshape,
    "stablehlo.reverse": shape_ops.reverse,
    "stablehlo.slice": shape_ops.padded_or_sliced,
    "stablehlo.transpose": shape_ops.transpose,
    # contractions
    "stablehlo.convolution": contraction.convolution,
    "stablehlo.dot": contraction.dot,
    "stablehlo.dot_general": contraction.dot_general,
    # reductions and windows
    "stablehlo.reduce": reductions.reduce,
    "stablehlo.reduce_window": reductions.reduce_window,
    "stablehlo.select_and_scatter": reductions.select_and_scatter,
    "stablehlo.sort": reductions.sort,
    # indexing
    "stablehlo.gather": indexing.gather,
    "stablehlo.scatter": indexing.scatter,
    # linear algebra, fft, random bits
    "stablehlo.cholesky": linalg.cholesky,
    "stablehlo.fft": linalg.fft,
    "stablehlo.rng": linalg.rng,
    "stablehlo.rng_bit_generator": linalg.rng_bit_generator,
    "stablehlo.triangular_solve": linalg.triangular_solve,
    # custom calls, by call target
    "stablehlo.custom_call": custom_call,
    # known to need no rule
    **{name: no_rule for name in _NO_RULE},
    # no rule in Shardy's registry: the rule of their rewrite by XLA
    **_LEGALIZED,
}


# Builders that read nothing but the op's name, operand and result types and
# attributes (no producer, user or region): equal such ops get equal rules.
# The others (dynamic_update_slice and concatenate look at producers, scatter
# at its body, custom calls at their users) are built op by op.
_OP_LOCAL_BUILDERS = frozenset({
    pointwise, no_rule, elementwise.batch_norm_inference, elementwise.bitcast_convert,
    elementwise.operand_shaped, collectives.all_gather, collectives.all_to_all,
    collectives.reduce_scatter, shape_ops.broadcast_in_dim, shape_ops.dynamic_slice,
    shape_ops.padded_or_sliced, shape_ops.reshape, shape_ops.reverse, shape_ops.transpose,
    contraction.convolution, contraction.dot, contraction.dot_general, contraction.einsum, reductions.reduce,
    reductions.reduce_window, reductions.select_and_scatter, reductions.sort, indexing.gather,
    linalg.cholesky, linalg.fft, linalg.rng, linalg.rng_bit_generator, linalg.triangular_solve,
})
# Of those, the builders that read no attribute (types and name only).
_TYPE_ONLY_BUILDERS = frozenset({pointwise, no_rule, elementwise.bitcast_convert, elementwise.operand_shaped,
                                 shape_ops.reshape, custom_call_rules.top_k})


# Builders whose rules may have a permutation factor (windows, pads, slices,
# reverses, concatenations of slices).
_PERMUTATION_BUILDERS = frozenset({contraction.convolution, reductions.reduce_window,
                                   reductions.select_and_scatter, shape_ops.padded_or_sliced,
                                   shape_ops.reverse, shape_ops.concatenate})


def may_have_permutation_factors(name: str) -> bool:
    """Whether the table's rule of an op named `name` may have a permutation
    factor (a rule attached to the op may, whatever its name)."""
    return RULES.get(name) in _PERMUTATION_BUILDERS


# What equal-ruled ops share, by op name (key_kind): no rule at all (no key
# needed: the table's no_rule ops and block terminators), their types, their
# types and attributes, or nothing (no key: the builder looks around the op,
# or the op is not in the table).
NO_RULE, TYPE_KEY, ATTR_KEY, NO_KEY = range(4)


def key_kind(name: str) -> int:
    """Which of NO_RULE, TYPE_KEY, ATTR_KEY, NO_KEY the rules of ops named `name`
    are keyed by (an op carrying a user rule has no key, whatever its name)."""
    build = RULES.get(name)
    if build is no_rule or (build is None and name in _TERMINATORS):
        return NO_RULE
    if build in _TYPE_ONLY_BUILDERS:
        return TYPE_KEY
    if build in _OP_LOCAL_BUILDERS:
        return ATTR_KEY
    return NO_KEY


def rule_key(op, operand_types=None, result_types=None, name=None, attrs=None) -> tuple | None:
    """A key that equal-ruled ops share: (name, operand types, result types,
    attributes other than sdy's discardable ones, which no builder reads).
    None when the rule may depend on more than the op (its builder looks
    around it, or a user rule is attached). Types and attributes are uniqued
    by MLIR, so the key compares and hashes cheaply. A caller that has read
    the op's operand and result types (and its name and attributes) already
    may pass them; in place of the types, it may pass stand-ins that are
    equal exactly when the types are (e.g. ids of its own), which compare
    faster than types through the bindings, if it compares the keys it
    gets only with each other."""
    op = op.operation if hasattr(op, "operation") else op
    if name is None:
        name = op.name
    kind = key_kind(name)
    if kind == NO_KEY:
        return None
    if attrs is None:
        attrs = op.attributes
    if SHARDING_RULE in attrs:
        return None
    if operand_types is None:
        operand_types = [v.type for v in op.operands]
    if result_types is None:
        result_types = [v.type for v in op.results]
    return key_of(kind, name, operand_types, result_types, attrs)


def key_of(kind: int, name: str, operand_types, result_types, attrs) -> tuple:
    """rule_key's key of an op of key_kind `kind` (TYPE_KEY or ATTR_KEY)
    and no user rule, from its parts (types or their stand-ins)."""
    types = (name, tuple(operand_types), tuple(result_types))
    if kind != ATTR_KEY:
        return types
    return types + (tuple((k, a) for k, a in attrs.items() if not k.startswith("sdy.")),)


class RuleCache:
    """rule_for_op, once per rule_key, and each distinct rule's attribute once:
    a module has thousands of ops but a few dozen distinct rules. The keys
    hold the module's types and attributes: use one cache per module."""

    def __init__(self, conservative: bool = False, filename: str | None = None, strict: bool = False):
        self.conservative = conservative
        self.filename = filename
        self.strict = strict
        self._rules: dict[tuple, OpShardingRule | None] = {}
        self._attrs: dict[OpShardingRule, object] = {}

    def rule(self, op) -> OpShardingRule | None:
        op = op.operation if hasattr(op, "operation") else op
        if RULES.get(op.name) is no_rule and SHARDING_RULE not in op.attributes:
            return None   # no key to build: constants and the like are many
        key = rule_key(op)
        if key is None:
            return self._build(op)
        # (one lookup: a key hashes and compares its types and attributes through the bindings)
        rule = self._rules.get(key, self)
        if rule is self:
            rule = self._rules[key] = self._build(op)
        return rule

    def count(self) -> int:
        """How many rules are kept (by key)."""
        return len(self._rules)

    def _build(self, op) -> OpShardingRule | None:
        return rule_for_op(op, self.conservative, self.filename, self.strict)

    def attr(self, rule: OpShardingRule):
        """rule.to_attr(), built once per distinct rule."""
        a = self._attrs.get(rule)
        if a is None:
            a = self._attrs[rule] = rule.to_attr()
        return a


def rule_for_op(op, conservative: bool = False, filename: str | None = None,
                strict: bool = False) -> OpShardingRule | None:
    """The op's sharding rule, None when it has none.

    `conservative` is Shardy's conservative-propagation option. An op the
    registry does not know (an unregistered custom call target, an op
    missing from RULES) has no rule; with `strict` it is an SdylogError at
    the op's location instead, with Shardy's warning text.
    """
    op = op.operation if hasattr(op, "operation") else op
    if SHARDING_RULE in op.attributes:
        return OpShardingRule.from_attr(op.attributes[SHARDING_RULE])
    try:
        return _build(op, conservative)
    except UnknownOp as unknown:
        if strict:
            raise error_at(op, unknown.message, filename) from None
        return None


def _build(op, conservative: bool) -> OpShardingRule | None:
    build = RULES.get(op.name)
    if build is not None:
        return build(op, conservative)
    if op.name in _TERMINATORS:
        return None
    raise UnknownOp(unknown_op_message(op.name))


def known_op(name: str) -> bool:
    """The registry knows ops named `name` (a custom call whatever its target)."""
    return name in RULES or name in _TERMINATORS


def unknown_op_message(name: str) -> str:
    return f"op '{name}' is unknown to SDY sharding rule registry"
