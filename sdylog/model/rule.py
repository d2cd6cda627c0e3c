"""Op sharding rules (`#sdy.op_sharding_rule<...>`): factors and their mappings.

A rule names factors with sizes and maps every operand and result dimension
to a list of factors (several for a dimension that reshape merged). Factors
have kinds: pass-through (the default), reduction, need-replication,
permutation and blocked-propagation.
"""
from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

# A tensor mapping: for each dimension, the factor indices it is made of (major first).
TensorMapping = tuple[tuple[int, ...], ...]


class FactorKind(enum.Enum):
    PASS_THROUGH = "pass_through"
    REDUCTION = "reduction"
    NEED_REPLICATION = "need_replication"
    PERMUTATION = "permutation"


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
        """The factor's kind; blocked propagation is a separate flag (`is_blocked`)
        that a factor of any kind may also have."""
        for kind, members in ((FactorKind.REDUCTION, self.reduction),
                              (FactorKind.NEED_REPLICATION, self.need_replication),
                              (FactorKind.PERMUTATION, self.permutation)):
            if factor in members:
                return kind
        return FactorKind.PASS_THROUGH

    def is_blocked(self, factor: int) -> bool:
        """Propagation along the factor is blocked (independent of its kind)."""
        return factor in self.blocked

    def tensors(self):
        """(is_result, index, mapping) over operands then results."""
        for i, m in enumerate(self.operands):
            yield False, i, m
        for i, m in enumerate(self.results):
            yield True, i, m


NULL_DIM = -1  # "this tensor has no dimension for the factor"


class RuleBuilder:
    """Builds a rule factor by factor, with the conventions of Shardy's rule builder.

    * `add_factor(operand_dims, result_dims, size)` appends a factor and maps it
      to the given dimension of each operand / result (NULL_DIM: not mapped).
      A size-1 factor is not appended to a dimension that already has a
      factor: it would change nothing and would only lengthen the mapping.
    * `add_factor_to_dim(dim, size)` maps a factor to the same dimension of
      every tensor of rank >= 1 (scalars, e.g. the init values of a reduce,
      have no dimension to take it).
    * `build()` gives every dimension that is still without a factor a factor
      of its own of size 1 (operands first, then results), since every
      dimension of a rule must be mapped.

    A factor has one kind (pass-through, reduction, need-replication,
    permutation) and, independently, may block propagation.
    """

    def __init__(self, operand_ranks, result_ranks, is_custom: bool = False):
        self.operand_ranks = list(operand_ranks)
        self.result_ranks = list(result_ranks)
        self.is_custom = is_custom
        self.factor_sizes: list[int] = []
        self.kinds: dict[int, FactorKind] = {}
        self.blocked: list[int] = []
        self._operands = [[[] for _ in range(r)] for r in self.operand_ranks]
        self._results = [[[] for _ in range(r)] for r in self.result_ranks]

    # --- adding factors ----------------------------------------------------------
    def _new_factor(self, size: int, kind: FactorKind, blocked: bool) -> int:
        f = len(self.factor_sizes)
        self.factor_sizes.append(size)
        if kind is not FactorKind.PASS_THROUGH:
            self.kinds[f] = kind
        if blocked:
            self.blocked.append(f)
        return f

    def add_factor(self, operand_dims, result_dims, size: int,
                   kind: FactorKind = FactorKind.PASS_THROUGH, blocked: bool = False) -> int:
        """A factor on `operand_dims[i]` of operand i and `result_dims[j]` of result j."""
        operand_dims, result_dims = list(operand_dims), list(result_dims)
        if len(operand_dims) != len(self._operands) or len(result_dims) != len(self._results):
            raise ValueError(f"expected {len(self._operands)} operand and {len(self._results)} "
                             f"result dims, got {operand_dims} and {result_dims}")
        f = self._new_factor(size, kind, blocked)
        for tensors, dims in ((self._operands, operand_dims), (self._results, result_dims)):
            for tensor, d in zip(tensors, dims):
                if d == NULL_DIM:
                    continue
                if size == 1 and tensor[d]:
                    continue
                tensor[d].append(f)
        return f

    def add_factor_to_dim(self, dim: int, size: int, kind: FactorKind = FactorKind.PASS_THROUGH,
                          blocked: bool = False, operands: bool = True, results: bool = True) -> int:
        """A factor on dimension `dim` of every operand and/or result of rank >= 1."""
        f = self._new_factor(size, kind, blocked)
        groups = ([self._operands] if operands else []) + ([self._results] if results else [])
        for tensors in groups:
            for tensor in tensors:
                if tensor:
                    tensor[dim].append(f)
        return f

    def add_pointwise(self, shape, kind: FactorKind | Callable[[int], FactorKind] = FactorKind.PASS_THROUGH,
                      blocked: bool | Callable[[FactorKind], bool] = False) -> RuleBuilder:
        """One factor per dimension of `shape`, on that dimension of every tensor of
        rank >= 1. `kind` may be a function of the dimension, `blocked` a function
        of the kind."""
        for d, size in enumerate(shape):
            k = kind(d) if callable(kind) else kind
            self.add_factor_to_dim(d, size, k, blocked(k) if callable(blocked) else blocked)
        return self

    def add_identity(self, shape) -> RuleBuilder:
        """The rule of a pointwise op: factor d (of size shape[d]) on dimension d
        of every tensor, whatever its rank. Only on a builder without factors."""
        if self.factor_sizes:
            raise ValueError("add_identity needs a builder without factors")
        self.factor_sizes.extend(shape)
        for tensor in self._operands + self._results:
            for d, factors in enumerate(tensor):
                factors.append(d)
        return self

    def add_pointwise_if(self, shape, keep: Callable[[int], bool],
                         kind: FactorKind | Callable[[int], FactorKind] = FactorKind.PASS_THROUGH) -> RuleBuilder:
        """`add_pointwise` restricted to the dimensions `keep` accepts."""
        for d, size in enumerate(shape):
            if keep(d):
                self.add_factor_to_dim(d, size, kind(d) if callable(kind) else kind)
        return self

    def add_pointwise_with_mismatch(self, in_shape, out_shape, mismatch_kind: FactorKind,
                                    mismatch_blocked: bool = False) -> RuleBuilder:
        """Pointwise over `in_shape`; a dimension whose size differs between the two
        shapes (sliced, padded, ...) gets `mismatch_kind` (and maybe blocks)."""
        for d, (a, b) in enumerate(zip(in_shape, out_shape, strict=True)):
            if a == b:
                self.add_factor_to_dim(d, a)
            else:
                self.add_factor_to_dim(d, a, mismatch_kind, mismatch_blocked)
        return self

    # --- result ------------------------------------------------------------------
    def build(self) -> OpShardingRule:
        sizes = list(self.factor_sizes)

        def freeze(tensors):
            out = []
            for tensor in tensors:
                dims = []
                for factors in tensor:
                    if not factors:  # an unmapped dimension gets a size-1 factor of its own
                        factors = [len(sizes)]
                        sizes.append(1)
                    dims.append(tuple(factors))
                out.append(tuple(dims))
            return tuple(out)

        operands, results = freeze(self._operands), freeze(self._results)

        def of(kind):
            return tuple(sorted(f for f, k in self.kinds.items() if k is kind))
        return OpShardingRule(tuple(sizes), operands, results, of(FactorKind.REDUCTION),
                              of(FactorKind.NEED_REPLICATION), of(FactorKind.PERMUTATION),
                              tuple(sorted(self.blocked)), self.is_custom)
