"""-sdy-constant-or-scalar-merger: merge identical constants and scalar broadcasts.

The inverse of the splitter once shardings are known: within one region, a
constant with the same attributes (value and sharding) as an earlier one, or
a broadcast of the same scalar to the same type with the same attributes, is
replaced by the earlier op.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.facts.shared import erasing
from sdylog.ir.op_properties import CONSTANT_LIKE_OPS
from sdylog.ir.rewrite import replace_one_result
from sdylog.ir.types import is_scalar
from sdylog.passes.census import PRESERVED, Invalidated, census


# What merges: constants (ConstantLike ops and sdy.constant) and broadcasts.
_CONSTANTS = CONSTANT_LIKE_OPS | {"sdy.constant"}


class _Regions:
    """The region holding an op, as a number (one per distinct (parent op,
    region index)), looked up once per block (blocks hash; the bindings'
    Region objects do not). A number, not the pair: the merge keys hold
    it, and the bindings hash an op with its attributes and types (a
    function's hundreds of arguments), and compare it through the bindings."""

    def __init__(self):
        self.of_block: dict = {}
        self.numbers: dict = {}   # (parent op, region index) -> its number

    def key(self, op) -> int:
        block = op.block
        key = self.of_block.get(block)
        if key is None:
            region = _region_key(op, block)
            key = self.numbers.get(region)
            if key is None:
                key = self.numbers[region] = len(self.numbers)
            self.of_block[block] = key
        return key


def _region_key(op, block):
    parent = op.parent
    if parent is None:
        return None
    parent = parent.operation if hasattr(parent, "operation") else parent
    for i, region in enumerate(parent.regions):
        if region == block.region:
            return (parent, i)
    return (parent, -1)


def _attr_key(op):
    # (sorted by name: names are unique, attributes are never compared; an op
    # view has `attributes` too: no as_operation, ops are many)
    return tuple(sorted(op.attributes.items()))


def merge_in(ops, ctx=None) -> _Merger:
    """Merge among `ops`, a function and the ops nested in it in pre-order
    (ops of one region come in program order, as in MLIR's post-order walk);
    returns the merger (what it erased)."""
    constants, broadcasts = [], []
    for op in ops:
        name = op.name
        if name in _CONSTANTS:
            constants.append(op)
        elif name == "stablehlo.broadcast_in_dim":
            broadcasts.append(op)
    merger = _Merger(ctx)
    merger.merge(constants, broadcasts)
    return merger


class _Merger:
    """The first constant (or scalar broadcast) of each key, and its result."""

    def __init__(self, ctx=None):
        self.ctx = ctx   # (whose kept facts are told of each erasure: sdylog/facts/shared.py)
        self.regions = _Regions()
        self.firsts: dict = {}   # key -> the first op's result
        self.scalar_types: dict = {}   # type -> rank 0 (each distinct type is read once)
        self.erased: set[str] = set()   # the names of the ops erased
        self.erased_ids: set[int] = set()   # and the ops, by id

    def merge(self, constants, broadcasts) -> None:
        """`constants`, `broadcasts`: each in walk order. Constants first: a
        broadcast only reads constants (all earlier in walk order, so merged
        before it either way), never the other way round."""
        for op in constants:
            self._merge(op, op.result, (_attr_key(op), self.regions.key(op)))
        for op in broadcasts:
            operand = op.operands[0]
            t = operand.type
            scalar = self.scalar_types.get(t)
            if scalar is None:
                scalar = self.scalar_types[t] = is_scalar(t)
            if scalar:
                result = op.result
                self._merge(op, result, (_attr_key(op), self.regions.key(op), result.type, operand))

    def _merge(self, op, result, key) -> None:
        first = self.firsts.get(key)
        if first is None:
            self.firsts[key] = result
            return
        self.erased.add(op.name)
        self.erased_ids.add(id(op))
        erasing(self.ctx, op, first)
        replace_one_result(op, result, first)


def _top_ops_hold_no_ops(module: ir.Module) -> bool:
    """Every top-level op is a function or a mesh: every other op is in a function."""
    return all(op.operation.name in ("func.func", "sdy.mesh") for op in module.body.operations)


def run(module: ir.Module, options: dict, ctx):
    found = census(module, ctx)
    with module.context:
        if _top_ops_hold_no_ops(module):
            # the census' lists by name, walk order kept (no scan over all ops)
            names = [n for n in sorted(_CONSTANTS) if found.has(n)]
            merger = _Merger(ctx)
            merger.merge(found.ops_of(names), found.ops("stablehlo.broadcast_in_dim"))
            erased, erased_ids = merger.erased, merger.erased_ids
        else:
            erased, erased_ids = set(), set()
            for func in [op for op in module.body.operations if op.operation.name == "func.func"]:
                merger = merge_in(found.within(func), ctx)
                erased |= merger.erased
                erased_ids |= merger.erased_ids
    if not erased:
        return PRESERVED
    # (it erases the ops it told the facts of, and changes nothing else; the
    # census' ops, which it erased, leave its lists)
    return Invalidated(frozenset(erased), shardings_only=True, relisted=found.relisted_without(erased_ids))
