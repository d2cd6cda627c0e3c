"""`sdylog explain FILE VALUE`, its reshard part: the reshards and
collectives the full version of -sdy-insert-explicit-reshards would insert
at VALUE (on it, or at the op defining it), and why: which factors the op's
tensors disagree on, the route the op took and what decided there (the
tensor kept and why, each greedy pick and the criterion that set it apart),
which reduction factor makes an all-reduce. Read from the reshard rules'
relations (rules/reshard/why.dl, inventory.dl) on the propagated module
after the pipeline's export steps.
"""
from __future__ import annotations

from collections import defaultdict

from sdylog.model.axis import AxisRef
from sdylog.model.sharding import DimSharding

_LETTERS = "ijklmnopqrstuvwxyz"
_ROUTES = {
    "compatible": "the op's tensors agree on every factor: they keep their shardings",
    "unary": "two tensors disagree (partitioning.md 2.3 B): one keeps its sharding, the other takes it",
    "greedy": "its tensors disagree (partitioning.md 2.3 C): the greedy choice picks each factor's axes, "
              "and every tensor is resharded to them",
    "overflow": "a reshape whose axes overflow a factor (partitioning.md 2.5): the axes are handed out "
                "again factor by factor",
    "dot": "the non-full version's dot special case (partitioning.md 2.6): the result takes an operand's "
           "axes for one factor, then a reshard back",
    "single_device": "a result on one device (partitioning.md 2.10): operands go to that device, results back",
}
_KEPT = {
    "permutation": "the other holds axes for a permutation factor",
    "size": "it has more elements",
    "sharded": "its axes split it more",
    "first": "both are alike: the operand is kept",
}
_PICK = {
    "only": "the only valid candidate",
    "size": "the tensors holding these axes have the most elements",
    "precedence": "its factor's kind comes first (pass-through, reduction, permutation, need-replication)",
    "sharding": "it shards the factor most",
    "factor": "the later factor of those alike",
    "length": "the longest list of axes of those alike",
    "axes": "its axes come first in Shardy's axis order",
}


def value_handles(ex, target) -> list:
    """The IR values of a target (before the export steps change the module)."""
    if target.value is None:
        return []
    return [ex.facts.values[v] for v in ex.copies.get(id(target.value), [])]


def reshards_text(ex, targets_handles, engine: str | None = None) -> dict:
    """Export the propagated module, decide its reshards (not written) and
    explain those at each target: {target label: text, empty when none}."""
    from sdylog.passes import PassContext
    from sdylog.passes.census import shared_census
    from sdylog.passes.propagation_pipeline import export_phase
    from sdylog.reshard.inventory import needed_inventory

    module = ex.facts.module
    ctx = PassContext(filename=ex.filename, engine=engine)
    with module.context, shared_census(ctx):
        export_phase(module, ctx)
        needed = needed_inventory(module, ctx, engine)
    out = {}
    for label, handles in targets_handles:
        if needed.error is not None:
            out[label] = f"// reshards: not decided: {needed.error}\n"
            continue
        vids = {needed.facts.value_ids.get(h) for h in handles} - {None}
        with module.context:
            out[label] = _explain(needed, vids, label)
    return out


def _explain(needed, vids: set, label: str) -> str:
    facts, engine = needed.facts, needed.engine
    defining = {o for o, _i, v in facts.rows("op_result") if v in vids}
    items = [i for i in needed.items if i.value in vids or i.op_id in defining]
    if not items:
        return ""
    rel = _Rel(engine)
    lines = [f"// {label}: reshards and collectives the full version of -sdy-insert-explicit-reshards inserts"]
    by_op = defaultdict(list)
    for i in items:
        by_op[i.op_id].append(i)
    for o, its in sorted(by_op.items()):
        op = facts.ops[o]
        rule = rel.rule_of(o, facts)
        lines.append(f"{op.name} at {its[0].location}" + (f", rule {rule}" if rule else "") + ":")
        for i in its:
            what = f"{i.kind} {i.axes}" if i.axes else i.kind
            move = f" {i.from_sharding} -> {i.to_sharding}" if i.to_sharding is not None else \
                (f" on {i.from_sharding}" if i.from_sharding else "")
            cost = "not costed" if i.bytes_per_device is None else f"{i.bytes_per_device} B per device"
            lines.append(f"  {i.place} {i.index}: {what}{move} ({cost})")
        lines += ["  " + s for s in _why(rel, facts, o, its)]
    return "\n".join(lines) + "\n"


class _Rel:
    """The relations the explanation reads, indexed by op."""

    def __init__(self, engine):
        self.engine = engine
        self._cache = {}

    def by_op(self, relation: str) -> dict:
        if relation not in self._cache:
            d = defaultdict(list)
            for row in self.engine.read(relation):
                d[row[0]].append(row[1:])
            self._cache[relation] = d
        return self._cache[relation]

    def rule_of(self, o: int, facts) -> str | None:
        rows = self.by_op("rule_op").get(o)
        if not rows:
            return None
        text = str(facts.rules[rows[0][0]].to_attr())
        return text[len("#sdy.op_sharding_rule<"):-1] if text.startswith("#sdy.op_sharding_rule<") else text


def _factor(f: int) -> str:
    return _LETTERS[f] if f < len(_LETTERS) else f"f{f}"


def _tensor(facts, rel: _Rel, o: int, j: int) -> str:
    for jj, _v, is_result in rel.by_op("rule_tensor").get(o, ()):
        if jj == j:
            if not is_result:
                return f"operand {j}"
            operands = sum(1 for _jj, _vv, r in rel.by_op("rule_tensor").get(o, ()) if not r)
            return f"result {j - operands}"
    return f"tensor {j}"


def _axes(rows, sizes: dict) -> str:
    return str(DimSharding(tuple(AxisRef.of_interval(a, pre, pre * z, sizes.get(a, pre * z))
                                 for _p, a, pre, z in sorted(rows))))


def _why(rel: _Rel, facts, o: int, items) -> list[str]:
    mesh = dict((k, v[0][0]) for k, v in rel.by_op("op_mesh").items()).get(o)
    sizes = facts.meshes[mesh].axis_sizes if mesh in facts.meshes else {}
    out = []
    fs = defaultdict(lambda: defaultdict(list))   # f -> j -> [(p, a, pre, z)]
    for j, f, p, a, pre, z in rel.by_op("fs_axis").get(o, ()):
        fs[f][j].append((p, a, pre, z))
    conflicts = sorted(rel.by_op("why_conflict").get(o, ()))
    if conflicts:
        parts = []
        for f, what in conflicts:
            held = ", ".join(f"{_tensor(facts, rel, o, j)} {_axes(rows, sizes)}" for j, rows in sorted(fs[f].items()))
            parts.append(f"factor {_factor(f)} ({held or 'no axes'})" + (
                " needs replication but is sharded" if what == "needs_replication" else ""))
        out.append("why: the tensors disagree on " + "; ".join(parts))
    routes = [r for (r,) in rel.by_op("why_route").get(o, ())]
    for route in routes:
        out.append(f"route: {_ROUTES.get(route, route)}")
    for kept, other, reason in rel.by_op("why_kept").get(o, ()):
        out.append(f"  {_tensor(facts, rel, o, kept)} keeps its sharding, {_tensor(facts, rel, o, other)} takes it: "
                   f"{_KEPT.get(reason, reason)}")
    picks = sorted(rel.by_op("why_pick").get(o, ()))
    axes = defaultdict(list)
    for k, p, a, pre, z in rel.by_op("why_pick_axis").get(o, ()):
        axes[k].append((p, a, pre, z))
    weight = {k: s for k, s in rel.by_op("why_pick_weight").get(o, ())}
    covers = defaultdict(list)
    for k, j in rel.by_op("why_pick_covers").get(o, ()):
        covers[k].append(j)
    for k, _c, f, reason in picks:
        held = ", ".join(_tensor(facts, rel, o, j) for j in sorted(covers[k]))
        out.append(f"  pick {k + 1}: factor {_factor(f)} = {_axes(axes[k], sizes)} "
                   f"(held by {held or 'no tensor'}, {weight.get(k, 0)} elements): {_PICK.get(reason, reason)}")
    if any(i.kind == "all_reduce" and i.place == "result" for i in items):
        reduced = [(f, rows) for f, rows in _working(rel, o).items() if _is_reduction(rel, o, f)]
        text = "; ".join(f"factor {_factor(f)} on {_axes(rows, sizes)}" for f, rows in sorted(reduced))
        out.append("all-reduce: the op sums over its reduction factors' axes, each device a part: "
                   + (text or "the reduction factors' axes") + "; the result holds partial sums until all-reduced")
    if any(i.place == "use" for i in items):
        out.append("use: the value is brought to the sharding its use asks for (a function result, a data-flow "
                   "edge or a call operand; partitioning.md 2.8-2.9)")
    return out


def _working(rel: _Rel, o: int) -> dict:
    out = defaultdict(list)
    for f, p, a, pre, z in rel.by_op("working_axis").get(o, ()):
        out[f].append((p, a, pre, z))
    return out


def _is_reduction(rel: _Rel, o: int, f: int) -> bool:
    return any(g == f and kind == "reduction" for g, kind in rel.by_op("op_factor").get(o, ()))
