"""Facts following the steps of a pipeline (sdylog/facts/shared.py keeps
them): without the rows of ops a step erased, uses of their results
renamed to the values that replaced them.

Ids stay as they were: the erased ops' and values' numbers are left out,
the others keep their order (what the rules read of ids: an op's program
order, equality). So ids are not dense after following: `facts.ops[o]`
and `facts.values[v]` of an erased one are None (their MLIR handles point
at freed IR); readers loop over the rows (`op`, `value`) or skip None.
tests/facts/test_follow.py checks that the facts so followed equal a fresh
extraction's, ids aside.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from functools import lru_cache
from operator import itemgetter

from sdylog.facts.extract import FactSet
from sdylog.facts.schema import schema

# The column types of ids. A row whose first column names an op, a value
# (or tensor) or a rule belongs to it and goes with it (a row of `op`,
# `value`, `rule_factor`, ...); value columns after it (and in rows of a
# function, e.g. `func_return`) refer to a value, renamed when it was replaced.
_OP, _VALUES, _RULE = "Op", ("Value", "Tensor"), "Rule"
# Op columns after the first that need no look: an op's parent (`op_in` row),
# whose erasure erases the op too (without_erased adds the nested ops).
_NESTING = {("op_in", 1)}
# Relations whose first column is a value another op uses, not the value's
# own row: a `sharding_group` row is the sdy.sharding_group op using the
# value. Renamed when the value is replaced (the group op then uses the
# replacement: the constant merger erases copies the splitter made, each
# with its group); gone when the value goes unreplaced (the group op was
# nested in an erased op).
_USES = {"sharding_group"}


@lru_cache(maxsize=None)
def _columns(relation: str) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """The type of the relation's owner column, the first ("" if it names no
    op, value or rule, or the relation is one of _USES), its other value
    columns, and its other op columns (a row naming an erased op there goes
    too: e.g. `edge_manual`'s manual computation, which a result's edge is
    not nested in), but _NESTING's."""
    types = [c.type_name for c in schema().relations[relation].columns]
    owned = relation not in _USES and types and (types[0] in (_OP, _RULE) or types[0] in _VALUES)
    owner = types[0] if owned else ""
    values = tuple(i for i, t in enumerate(types) if t in _VALUES and (i > 0 or not owner))
    ops = tuple(i for i, t in enumerate(types) if t == _OP and (i > 0 or not owner))
    return owner, values, tuple(i for i in ops if (relation, i) not in _NESTING)


def without_erased(facts: FactSet, erased: dict[int, dict[int, int]]) -> FactSet:
    """`facts` without the rows of the ops of `erased` (op id -> {result
    value id: the value id that replaced it}), of the ops nested in them,
    of their values, and of the rules no op is left to use; the replaced
    values renamed in the other rows. A new FactSet (`facts` unchanged)."""
    renamed = {}
    for replaced in erased.values():
        renamed.update(replaced)
    for old in list(renamed):   # (a value replaced by one replaced in turn)
        new = renamed[old]
        while new in renamed:
            new = renamed[new]
        renamed[old] = new
    dead_ops = set(erased)
    for o, parent, _ in facts.rows("op_in"):   # (pre-order: a parent before what it holds)
        if parent in dead_ops:
            dead_ops.add(o)
    dead_values = {v for o, _, v in facts.rows("op_result") if o in dead_ops}
    dead_values |= {v for o, _, _, v in facts.rows("block_arg") if o in dead_ops}
    dead = {_OP: dead_ops, "Value": dead_values, "Tensor": dead_values}
    op_rule = _without(facts.rows("op_rule"), "op_rule", dead, renamed)
    dead[_RULE] = set(range(len(facts.rules))) - {r for _, r in op_rule}   # (the rules no op is left to use)
    relations = defaultdict(list, {name: op_rule if name == "op_rule" else _without(rows, name, dead, renamed)
                                   for name, rows in facts.relations.items()})
    value_ids, ops, values = facts.value_ids.copy(), list(facts.ops), list(facts.values)
    for v in dead_values:   # (a value hashes by its pointer: an erased one's still finds its key)
        del value_ids[values[v]]
        values[v] = None
    for o in dead_ops:
        ops[o] = None
    return replace(facts, relations=relations, value_ids=value_ids, ops=ops, values=values,
                   op_names={row[1] for row in relations["op"]},
                   sharded_ops=facts.sharded_ops - dead_ops,
                   tail_order=[o for o in facts.tail_order if o not in dead_ops])


def _without(rows: list, relation: str, dead: dict, renamed: dict) -> list:
    """`rows` of `relation` but those whose owner is dead (dead: column type
    -> ids), the values of `renamed` renamed."""
    owner, others, ops = _columns(relation)
    if owner and rows and dead[owner]:
        gone = dead[owner]
        rows = [row for row in rows if row[0] not in gone]
    for c in ops:
        if not dead[_OP].isdisjoint(map(itemgetter(c), rows)):
            rows = [row for row in rows if row[c] not in dead[_OP]]
    for c in others:
        if not renamed.keys().isdisjoint(map(itemgetter(c), rows)):
            rows = [row if row[c] not in renamed else row[:c] + (renamed[row[c]],) + row[c + 1:] for row in rows]
    if relation in _USES and rows and dead["Value"]:
        rows = [row for row in rows if row[0] not in dead["Value"]]
    return rows
