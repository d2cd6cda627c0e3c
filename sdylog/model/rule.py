"""Op sharding rules (`#sdy.op_sharding_rule<...>`): factors and their mappings.

A rule names factors with sizes and maps every operand and result dimension
to a list of factors (several for a dimension that reshape merged). Factors
have kinds: pass-through (the default), reduction, need-replication,
permutation and blocked-propagation.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

# A tensor mapping: for each dimension, the factor indices it is made of (major first).
TensorMapping = tuple[tuple[int, ...], ...]


class FactorKind(enum.Enum):
    PASS_THROUGH = "pass_through"
    REDUCTION = "reduction"
    NEED_REPLICATION = "need_replication"
    PERMUTATION = "permutation"
    BLOCKED = "blocked_propagation"


@dataclass(frozen=True)
class OpShardingRule:
    factor_sizes: tuple[int, ...]
    operands: tuple[TensorMapping, ...]
    results: tuple[TensorMapping, ...]
    reduction: tuple[int, ...] = ()
    need_replication: tuple[int, ...] = ()
    permutation: tuple[int, ...] = ()
    blocked: tuple[int, ...] = ()
    is_custom: bool = False

    @staticmethod
    def from_attr(attr: ir.Attribute) -> OpShardingRule:
        r = sdy.OpShardingRuleAttr(attr)

        def mapping(a):
            return tuple(tuple(sdy.DimMappingAttr(d).factor_indices) for d in sdy.TensorMappingAttr(a).dim_mappings)

        return OpShardingRule(
            tuple(r.factor_sizes),
            tuple(mapping(m) for m in r.operand_mappings),
            tuple(mapping(m) for m in r.result_mappings),
            tuple(r.reduction_factors), tuple(r.need_replication_factors),
            tuple(r.permutation_factors), tuple(r.blocked_propagation_factors), r.is_custom)

    def to_attr(self) -> ir.Attribute:
        def mapping(m):
            return sdy.TensorMappingAttr.get([sdy.DimMappingAttr.get(list(d)) for d in m])

        return sdy.OpShardingRuleAttr.get(
            list(self.factor_sizes), [mapping(m) for m in self.operands], [mapping(m) for m in self.results],
            sorted(self.reduction), sorted(self.need_replication), sorted(self.permutation),
            sorted(self.blocked), self.is_custom)

    @property
    def num_factors(self) -> int:
        return len(self.factor_sizes)

    def kind(self, factor: int) -> FactorKind:
        for kind, members in ((FactorKind.REDUCTION, self.reduction),
                              (FactorKind.NEED_REPLICATION, self.need_replication),
                              (FactorKind.PERMUTATION, self.permutation),
                              (FactorKind.BLOCKED, self.blocked)):
            if factor in members:
                return kind
        return FactorKind.PASS_THROUGH

    def tensors(self):
        """(is_result, index, mapping) over operands then results."""
        for i, m in enumerate(self.operands):
            yield False, i, m
        for i, m in enumerate(self.results):
            yield True, i, m


@dataclass
class RuleBuilder:
    """Builds a rule factor by factor, as Shardy's OpShardingRuleBuilder does:
    `add_factor(operand_dims, result_dims, size)` appends a factor mapped to the
    given dimension of each operand / result (-1: not mapped)."""
    operand_ranks: list[int]
    result_ranks: list[int]
    factor_sizes: list[int] = field(default_factory=list)
    kinds: dict[int, FactorKind] = field(default_factory=dict)
    is_custom: bool = False

    def __post_init__(self):
        self._operands = [[[] for _ in range(r)] for r in self.operand_ranks]
        self._results = [[[] for _ in range(r)] for r in self.result_ranks]

    def add_factor(self, operand_dims, result_dims, size: int,
                   kind: FactorKind = FactorKind.PASS_THROUGH) -> int:
        f = len(self.factor_sizes)
        self.factor_sizes.append(size)
        for tensor, d in zip(self._operands, operand_dims):
            if d >= 0:
                tensor[d].append(f)
        for tensor, d in zip(self._results, result_dims):
            if d >= 0:
                tensor[d].append(f)
        if kind is not FactorKind.PASS_THROUGH:
            self.kinds[f] = kind
        return f

    def add_pointwise(self, shape, kind: FactorKind = FactorKind.PASS_THROUGH):
        """One factor per dimension, mapped to that dimension of every tensor."""
        for d, size in enumerate(shape):
            self.add_factor([d] * len(self.operand_ranks), [d] * len(self.result_ranks), size, kind)
        return self

    def build(self) -> OpShardingRule:
        def of(kind):
            return tuple(f for f, k in self.kinds.items() if k is kind)
        freeze = lambda ts: tuple(tuple(tuple(d) for d in t) for t in ts)
        return OpShardingRule(tuple(self.factor_sizes), freeze(self._operands), freeze(self._results),
                              of(FactorKind.REDUCTION), of(FactorKind.NEED_REPLICATION),
                              of(FactorKind.PERMUTATION), of(FactorKind.BLOCKED), self.is_custom)
