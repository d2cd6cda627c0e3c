"""-sdy-constant-or-scalar-splitter: give every use of a constant sub-computation
or scalar broadcast a copy of its own.

Uses of one constant should not share a sharding just because they share the
constant. First every `stablehlo.constant` becomes a `sdy.constant` (which
folding will not merge back). Then, function by function in call-graph post
order (named computations inside a function first, innermost first):

* a constant expression is a constant or iota, or a pure broadcast, reshape,
  slice or element-wise op (or a call / named computation whose body has only
  such ops) all of whose operands are constant expressions;
* a scalar expansion is a broadcast of a rank-0 tensor;
* each operand of any other op that is produced by either gets a fresh clone
  of the whole producing sub-computation (rank-0 values are never cloned),
  placed right before the original producer, with its sharding groups;
* the originals, now unused (or used only by sharding groups), are erased.
"""
from __future__ import annotations

from typing import NamedTuple

from jaxlib.mlir import ir

from sdylog.ir.op_properties import is_elementwise, is_pure
from sdylog.ir.rewrite import as_operation, attributes_of, create_op, replace_one_result, results_unused, users
from sdylog.ir.symbols import (SymbolTable, callee_name, clone_func_recursively,
                               funcs_in_call_graph_post_order, lookup_func, original_func_name)
from sdylog.ir.types import is_scalar
from sdylog.ir.walk import nested_ops_not_entering, op_list, op_names
from sdylog.passes.census import PRESERVED, Invalidated, census, edited

NAMED_COMPUTATION = "sdy.named_computation"
# The constant expressions that hold regions (or, for a call, whose clone clones a function).
_WITH_REGIONS = frozenset({"func.call", NAMED_COMPUTATION})
_SHAPE_PRESERVING = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.slice"})
BROADCAST = "stablehlo.broadcast_in_dim"
# Ops split_region hands to process() even when no use of a constant or
# expansion is pending: those it returns from at once, and constants.
# (Broadcasts too when they expand a scalar.)
_NEVER_SKIPPED = frozenset({"func.func", "sdy.sharding_group", "sdy.constant", "stablehlo.iota"})


def convert_constants(constants) -> list:
    """Each of these stablehlo.constant ops becomes an sdy.constant with the
    same attributes; returns the new ops."""
    out = []
    for op in constants:
        old = op.result   # (read once: each read goes through the bindings)
        new = create_op("sdy.constant", results=[old.type], attributes=attributes_of(op),
                        loc=op.location, ip=ir.InsertionPoint(op))
        replace_one_result(op, old, new.result)
        out.append(new)
    return out


class _Splitter:
    def __init__(self, symbols: SymbolTable, has_calls_or_named_computations: bool, has_sharding_groups: bool):
        self.symbols = symbols
        self.has_sharding_groups = has_sharding_groups
        self.non_const_named_computations: set[str] = set()
        self.non_const_funcs: set[str] = set()
        self.static_types: dict = {}   # type -> statically shaped (for is_pure)
        self.scalar_types: dict = {}   # type -> rank 0 (types repeat: each is read once)
        # Which functions and named computations are not constant matters only
        # to calls and named computations: without any, an op whose operands
        # are not all constant is not asked whether it preserves constants.
        self.marks_non_constant = has_calls_or_named_computations
        # What the pass did to the module's ops, for the pipeline's census:
        # the names of the ops created or erased, and whether a clone holds
        # regions (a call's callee is cloned too, a named computation's body).
        self.touched: set[str] = set()
        self.cloned_regions = False
        # For the census, as long as it can be told (without erased sharding
        # groups): the new ops placed before each op of the regions split
        # (by id), and those erased.
        self.placed_before: dict[int, list] = {}
        self.erased: set[int] = set()
        self.relistable = True

    # --- classification ----------------------------------------------------------
    def constant_preserving(self, op, name: str, operands: list) -> bool:
        """`name`, `operands`: the op's (read once by the caller)."""
        if name == "func.call":
            callee = lookup_func(self.symbols, callee_name(op), op)
            return original_func_name(callee) not in self.non_const_funcs
        if name == "sdy.named_computation":
            return _nc_name(op) not in self.non_const_named_computations
        # The name first: is_pure reads every operand and result type.
        return ((name in _SHAPE_PRESERVING or is_elementwise(op, name))
                and is_pure(op, self.static_types, name, operands))

    def is_scalar(self, value) -> bool:
        t = value.type
        scalar = self.scalar_types.get(t)
        if scalar is None:
            scalar = self.scalar_types[t] = is_scalar(t)
        return scalar

    # --- cloning -------------------------------------------------------------------
    def clone_value(self, value, producers: dict) -> ir.Value:
        """A fresh clone of the sub-computation producing `value` (itself if
        scalar); `producers`: _Found.producers, which holds every value of
        the sub-computation (a constant expression's operands are constant)."""
        if self.is_scalar(value):
            return value
        mapping: dict = {}
        self._clone_into(value, mapping, producers)
        return mapping[value]

    def _clone_into(self, value, mapping: dict, producers: dict) -> None:
        if value in mapping or self.is_scalar(value):
            return
        op = producers[value].op
        operands = list(op.operands)
        for operand in operands:
            self._clone_into(operand, mapping, producers)
        ip = ir.InsertionPoint(op)
        clone = op.clone(ip=ip)
        placed = self.placed_before.setdefault(id(op), [])
        placed.append(as_operation(clone))   # (a clone is an op view)
        for i, operand in enumerate(operands):
            if operand in mapping:
                clone.operands[i] = mapping[operand]
        name = op.name
        self.touched.add(name)
        if name in _WITH_REGIONS:
            self.cloned_regions = True
            for old, new in zip(op.results, clone.results):
                mapping[old] = new
        else:   # element-wise, shape-preserving, iota, constant: one result
            mapping[value] = clone.result
        if name == "func.call":
            callee = lookup_func(self.symbols, callee_name(clone), clone)
            copy = clone_func_recursively(callee, self.symbols)
            clone.attributes["callee"] = ir.FlatSymbolRefAttr.get(self.symbols.insert_at_end(copy))
        # Sharding groups of the value follow it into the copy.
        if self.has_sharding_groups:
            for user in users(value):
                if user.name == "sdy.sharding_group":
                    g = user.clone(ip=ip)
                    placed.append(as_operation(g))
                    g.operands[0] = mapping[value]
                    self.touched.add("sdy.sharding_group")

    # --- walking -------------------------------------------------------------------
    def split_region(self, ops, names, func, nc=None) -> None:
        """`ops`: those of the body of `func` (or of the named computation `nc`
        in it), in pre-order, not entering nested named computations;
        `names`: theirs, list for list."""
        found = _Found()
        func_name = original_func_name(func)
        nc_name = _nc_name(nc) if nc is not None else None
        process = self.process
        may_skip = not self.marks_non_constant
        for op, name in zip(ops, names, strict=True):
            if (may_skip and found.unseen_uses == 0 and name not in _NEVER_SKIPPED
                    and (name != BROADCAST or not self.is_scalar(op.operands[0]))):
                # Every use of the constants and expansions so far was seen
                # (users come after producers), so this op uses none of them: it
                # is neither a constant expression (an op without operands is
                # one only as a constant or iota: ops that preserve constants
                # have operands) nor takes a clone (and whether it preserves
                # constants does not matter without calls or named
                # computations), nor, unless it broadcasts a scalar, a scalar
                # expansion. Its operands are not read: ops are many (a
                # broadcast's one operand only for its type). (Here, not in
                # process(): a call per op costs as much as this test.)
                continue
            process(op, name, func_name, nc_name, found)
        for op in found.expansions + found.constants[::-1]:
            # Usually every use took a clone; scalars are not cloned; an op
            # left to its only user is used.
            if id(op) in found.left_alone or not results_unused(op):
                if not self.has_sharding_groups:
                    continue
                us = [u for r in op.results for u in users(r)]
                if not all(u.name == "sdy.sharding_group" for u in us):
                    continue
                for u in us:
                    u.erase()
                self.relistable = False   # (the groups erased are not the listed ops)
                self.touched.add("sdy.sharding_group")
            self.touched.add(op.name)
            self.erased.add(id(op))
            op.erase()

    def process(self, op, name: str, func_name: str, nc_name: str | None, found: _Found) -> None:
        """A constant expression joins the constants; any other op marks its
        function (and named computation) non-constant unless it preserves
        constants, and takes fresh clones of the constants and scalar
        expansions it uses. `name`: the op's."""
        if name in ("func.func", "sdy.sharding_group"):
            return
        if name in ("sdy.constant", "stablehlo.iota"):
            found.add(op, [op.result], (), constant=True)
            return
        operands = list(op.operands)
        # each operand's entry in found.producers, if any (each operand
        # hashed once: through the bindings)
        get = found.producers.get
        produced = [get(v) for v in operands]
        uses = len(operands) - produced.count(None)
        if found.unseen_uses:
            found.unseen_uses -= uses
        # Whether the op preserves constants reads its types: asked only when
        # the answer matters.
        all_constant = uses == len(operands) and all(p.constant for p in produced)
        if all_constant or self.marks_non_constant:
            preserving = self.constant_preserving(op, name, operands)
            if preserving and all_constant:
                found.add(op, [op.result] if name not in _WITH_REGIONS else list(op.results), operands, constant=True)
                return
            if not preserving and not op.has_trait(ir.IsTerminatorTrait):
                if nc_name is not None:
                    self.non_const_named_computations.add(nc_name)
                self.non_const_funcs.add(func_name)
        if name == BROADCAST and self.is_scalar(operands[0]):
            found.add(op, [op.result], operands, constant=False)
            return
        if not uses:   # most ops
            return
        for i, operand in enumerate(operands):
            if produced[i] is not None:
                if found.owns_alone(operand, self):
                    continue
                clone = self.clone_value(operand, found.producers)
                if clone is not operand:   # (a scalar is used as it is)
                    op.operands[i] = clone


class _Producer(NamedTuple):
    """An entry of _Found.producers: a result's op, whether it is a constant
    expression (else a scalar expansion), how many uses the result had when
    found (all of them: sharding groups and ops in nested regions too), and
    the op's operands."""
    op: ir.Operation
    constant: bool
    uses: int
    operands: list


class _Found:
    """The constant expressions and scalar expansions of a region so far (in
    order), and the ops producing their results: an operand is looked up by
    value, without asking the bindings for its producer."""

    def __init__(self):
        self.constants: list = []   # (each op is processed once)
        self.expansions: list = []
        # result of a constant expression or scalar expansion -> _Producer
        self.producers: dict = {}
        # Uses of the producers' results (when they were found) by ops not
        # processed yet: ops after the last such use use none of them. A use
        # by an op that process() returns from early (a sharding group) is
        # never seen: the count then stays above 0, which only costs time.
        self.unseen_uses = 0
        # ids of the producers left to their only user (see owns_alone)
        self.left_alone: set = set()

    def add(self, op, results: list, operands, constant: bool) -> None:
        """A constant expression (`constant`) or scalar expansion, with its
        results and operands (read by the caller)."""
        (self.constants if constant else self.expansions).append(op)
        producers = self.producers
        for r in results:   # (each result hashed once: through the bindings)
            n = len(list(r.uses))   # (a generator over the uses costs more)
            producers[r] = _Producer(op, constant, n, operands)
            self.unseen_uses += n

    def owns_alone(self, value, splitter: _Splitter) -> bool:
        """Whether the use being processed is the only use of `value` and of
        every value of the sub-computation its clone would copy (a scalar is
        not copied), none of whose ops holds regions. Then the clone, placed
        where the original is, would be the original again once the unused
        original is erased: the op keeps it, and the original stays."""
        tree = []
        if not self._sole_use(value, splitter, tree):
            return False
        self.left_alone.update(tree)
        return True

    def _sole_use(self, value, splitter: _Splitter, tree: list) -> bool:
        produced = self.producers.get(value)
        if produced is None or produced.uses != 1:   # (an expansion's operand is no producer)
            return splitter.is_scalar(value)   # (a scalar is shared, never copied)
        # A scalar with one use joins the tree too: left to its user like
        # the rest, it is not copied either.
        op = produced.op
        # (calls and named computations are there only if the splitter marks
        # functions non-constant)
        if splitter.marks_non_constant and op.name in _WITH_REGIONS:
            return False
        if not all(self._sole_use(v, splitter, tree) for v in produced.operands):
            return False
        tree.append(id(op))
        return True


def _nc_name(op) -> str:
    return ir.StringAttr(as_operation(op).attributes["name"]).value


def run(module: ir.Module, options: dict, ctx):
    found = census(module, ctx)
    has_calls, has_named_computations = found.has("func.call"), found.has("sdy.named_computation")
    constants = found.ops("stablehlo.constant")
    relisted = []   # (func, its ops, their names) as they are after the split, for the census
    with module.context, module.operation.location:
        # the census' ops, with the new constants in place of the old: no walk
        converted = {id(old): new for old, new in zip(constants, convert_constants(constants))}
        symbols = SymbolTable(module)
        has_groups = found.has("sdy.sharding_group")
        splitter = _Splitter(symbols, has_calls or has_named_computations, has_groups)
        for func in funcs_in_call_graph_post_order(module, has_calls):
            if not has_named_computations:   # MLIR's walk, without the function itself
                ops, names = found.within_and_names(func)
                for i in [i for i, name in enumerate(names) if name == "stablehlo.constant"]:
                    ops[i], names[i] = converted[id(ops[i])], "sdy.constant"
                splitter.split_region(ops[1:], names[1:], func)
                if not has_calls:
                    relisted.append((func, *edited(ops, names, splitter.placed_before, splitter.erased)))
                continue
            # inner named computations before the ones holding them; each body
            # without the named computations nested in it
            for nc in [op for op in op_list(func, post_order=True) if op.name == NAMED_COMPUTATION]:
                ops = nested_ops_not_entering(nc, NAMED_COMPUTATION)
                splitter.split_region(ops, op_names(ops), func, nc)
            ops = nested_ops_not_entering(func, NAMED_COMPUTATION)
            splitter.split_region(ops, op_names(ops), func)
    if splitter.cloned_regions:
        return None
    if constants:
        splitter.touched.update(("stablehlo.constant", "sdy.constant"))
    if not splitter.touched:
        return PRESERVED
    # (the census takes the new lists when every function's are known: a
    # function copied for a call is a new top-level op)
    return Invalidated(frozenset(splitter.touched), relisted=tuple(relisted) if splitter.relistable else ())
