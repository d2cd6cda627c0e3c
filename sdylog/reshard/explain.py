"""Why a value is resharded or all-reduced (`sdylog explain FILE VALUE`,
after the propagation part): the reshards and collectives that take the
value (sdylog/reshard/report.py: those the export step wrote, those the
full version adds), then, for each op that reads or makes it and has a
decision about it, that decision in the words of the reshard rules
(rules/reshard/why.dl and the relations it names): which factors conflict
and how each tensor holds them; which of an op's two tensors is kept and
why; the greedy picks, each with what set it apart; why an all-reduce
follows; what a return, a data-flow edge or a call asks of the value.
"""
from __future__ import annotations

from collections import defaultdict

from sdylog.datalog.named_rows import Lookup
from sdylog.reshard.inventory import axes_text
from sdylog.reshard.report import Needed, inserted_text

_LETTERS = "ijklmnopqrstuvwxyz"
_KIND_WORDS = {"pass_through": "pass-through", "reduction": "reduction", "permutation": "permutation",
               "need_replication": "need-replication"}
# why_kept's reasons (rules/reshard/why.dl)
_KEPT_WORDS = {"permutation": "the other holds axes on a permutation factor", "size": "it is larger",
               "sharded": "it is more sharded", "first": "on a tie, the operand"}
# why_pick's reasons, in greedy.dl's order of comparison
_PICK_WORDS = {"only": "no other candidate was valid", "size": "its tensors are the largest",
               "precedence": "its factor's kind comes first", "sharding": "it shards more",
               "factor": "a later factor", "length": "it has more axes", "axes": "its axes come first"}


# The input relations of rules/reshard/why.dl that say where the export's reshards come from.
WRITTEN_ORIGINS = ("input_constraint_at", "reshard_at", "func_origin")


def load_written_origins(run, match=None) -> bool:
    """Load into the reshard rules' evaluation of a pipeline run
    (run.needed; a run_pipeline(..., keep_values=True): the input's values
    with their locations, run.named) the facts rules/reshard/why.dl
    tells the reshards the export wrote apart by (the input's sharding
    constraints by location, the module's reshards by location, the input
    function each called function holds the values of: `match()`,
    commands.values.match_values of the input's values, made here when not
    given), and evaluate again the strata that read them: why_written*
    (explain, query). False (nothing loaded) when the module has no
    sdy.reshard."""
    from sdylog.commands.values import loc_text, match_values
    from sdylog.ir.walk import func_ops, symbol_name

    inventory = run.needed.inventory
    facts, filename = inventory.facts, run.ctx.filename
    reshards = [o for o, kind, *_ in facts.rows("op") if kind == "sdy.reshard" and facts.ops[o] is not None]
    if not reshards:
        return False
    values = run.named.values
    if match is None:
        matched = []

        def match():
            if not matched:
                matched.append(match_values(facts, values))
            return matched[0]
    called = {f for _u, f in facts.rows("call")}
    with run.module.context:
        rows = {"input_constraint_at": sorted({(iv.source,) for iv in values if iv.op == "sdy.sharding_constraint"}),
                "reshard_at": [(o, loc_text(facts.ops[o], filename)) for o in reshards],
                "func_origin": [(symbol_name(fn), _origin(fn, facts, match)) for fn in func_ops(run.module)
                                if symbol_name(fn) in called]}
    engine = inventory.engine
    for relation in WRITTEN_ORIGINS:
        engine.replace(relation, rows[relation])
    engine.run(since=WRITTEN_ORIGINS)
    return True


def _origin(fn, facts, match) -> str:
    """The input function whose values function `fn` holds (the export's
    unflatten-call-graph copies a function called with other shardings:
    @bar_0 of @bar): that of its first value found among the input's."""
    from sdylog.ir.walk import symbol_name
    for v in _func_values(fn):
        iv = match()[0].get(facts.value_ids.get(v))
        if iv is not None:
            return iv.func
    return symbol_name(fn)


def _func_values(fn):
    """The block arguments of function `fn`, then its ops' results (walk order)."""
    from sdylog.ir.walk import walk_ops
    yield from fn.regions[0].blocks[0].arguments
    for op in walk_ops(fn):
        yield from op.results


def reshard_lines(needed: Needed, value, filename: str) -> list[str]:
    """The lines for `value` (an ir.Value of the module `needed` was made
    on); none when the module needs nothing there."""
    inventory = needed.inventory
    vid = inventory.facts.value_ids.get(value)
    if vid is None:
        return []
    items = [i for i in needed.items if i.value == vid]
    explainer = _Why(needed, filename)
    why = explainer.lines(vid)
    if not items and not why:
        return []
    head = "partitioning it (what the pipeline's export step wrote, then what Shardy's full version of " \
           "-sdy-insert-explicit-reshards adds"
    if explainer.callbacks:
        head = "partitioning it (what the pipeline's export step wrote, then what the full version of " \
               "-sdy-insert-explicit-reshards adds: Shardy's, and the gather of a host callback's operands onto " \
               "the device sdylog runs it on, as XLA does"
    return [head + "):"] + [f"  {inserted_text(i)}" for i in items] + why


class _Why:
    """The decisions of the reshard rules about one value, in words."""

    def __init__(self, needed: Needed, filename: str):
        self.rel = Lookup(needed.inventory.engine)
        self.facts = needed.inventory.facts
        self.filename = filename
        self.callbacks = False   # a host callback's operand gathered onto its device was explained

    # ---------------------------------------------------------------- names
    def op(self, o: int) -> str:
        from sdylog.commands.values import loc_text
        op = self.facts.ops[o]
        return f"{op.name} at {loc_text(op, self.filename)}"

    def tensor(self, o: int, j: int) -> str:
        row = self.rel.first("rule_tensor", op=o, tensor=j)
        if row is None:
            return f"tensor {j}"
        if row.is_result:
            k = self.rel.first("op_result", op=o, value=row.value)
            return f"result {k.index}" if k else f"tensor {j}"
        k = self.rel.first("op_operand", op=o, value=row.value)
        return f"operand {k.index}" if k else f"tensor {j}"

    def axes(self, o: int, rows) -> str:
        """`{"x", "y":(1)2}` of rows with columns p, axis, pre and size, on op o's mesh."""
        mesh = self.rel.first("op_mesh", o=o)
        sizes = self.facts.meshes[mesh.m].axis_sizes if mesh else {}
        return axes_text([(a, pre, z) for _p, a, pre, z in sorted((r.p, r.axis, r.pre, r.size) for r in rows)],
                         sizes)

    def factor(self, o: int, f: int) -> str:
        """`j (operand 1 dim 1, result 0 dim 1)`."""
        r = self.rel.first("rule_op", o=o).r
        dims = [f"{self.tensor(o, x.tensor)} dim {x.dim}" for x in self.rel.where("rule_dim_factor", rule=r, factor=f)]
        letter = _LETTERS[f] if f < len(_LETTERS) else str(f)
        return f"{letter} ({', '.join(dims)})"

    # ---------------------------------------------------------------- the value's decisions
    def lines(self, v: int) -> list[str]:
        out = []
        said = set()
        for x in self.rel.where("op_result", value=v):
            out += self.made_by(x.op, x.index, said)
        for x in self.rel.where("op_operand", value=v):
            out += self.read_by(x.op, x.index, said)
        return out

    def made_by(self, o: int, i: int, said: set) -> list[str]:
        out = []
        back = self.rel.exists("reshard_result", o=o, i=i)
        reduce = self.rel.where("all_reduce_axis", o=o)
        single = self.rel.first("single_device_result_reshard", o=o, i=i)
        if back or reduce:
            out += self.op_decision(o, said)
        if back:
            out.append(f"    its result {i} is made with the working sharding and resharded back to what it carries")
        if reduce:
            out.append(f"    its sharded reduction factors make an all-reduce over {self.axes(o, reduce)} "
                       "follow it (partial sums; axes the result keeps unreduced wait)")
        if single:
            out.append(f"  {self.op(o)} runs on one device: its result {i} goes to fully replicated on the "
                       "global mesh" + (", then back to its own sharding" if single.then else ""))
        return out

    def read_by(self, o: int, i: int, said: set) -> list[str]:
        out = []
        if self.rel.exists("reshard_operand", o=o, i=i):
            out += self.op_decision(o, said)
            out.append(f"    its operand {i} is resharded to the working sharding")
        reduced = self.rel.where("operand_all_reduce_axis", o=o, i=i)
        if reduced:
            out.append(f"  {self.op(o)} reads it as operand {i}: its unreduced axes "
                       f"{self.axes(o, reduced)} are all-reduced first (the op's result does "
                       "not keep them unreduced)")
        if self.rel.exists("single_device_operand", o=o, i=i):
            callback = self.rel.first("why_single_device", o=o, why="callback")
            if callback:
                self.callbacks = True
                out.append(f"  {self.op(o)} is a host callback (no results) placed on device {callback.k}: sdylog "
                           f"runs it once there, as XLA does, so its operand {i} is gathered there (through fully "
                           "replicated on the global mesh unless it is so already); Shardy's passes leave it on "
                           "every device with its shard")
            else:
                out.append(f"  {self.op(o)} runs on one device: operand {i} goes to it (through fully replicated "
                           "on the global mesh unless it is so already)")
        out += self.site(o, i)
        return out

    def site(self, u: int, i: int) -> list[str]:
        """A return, a data-flow edge or a call bringing the value to a target sharding."""
        if not self.rel.exists("site", u=u, i=i):
            return []
        steps = []
        if self.rel.exists("site_all_reduces", u=u, i=i):
            steps.append("an all-reduce over the unreduced axes the target does not keep")
        if self.rel.exists("site_unreduces", u=u, i=i):
            steps.append("replicated/sharded_to_unreduced for the target's new unreduced axes")
        if self.rel.exists("site_reshard", u=u, i=i):
            steps.append("a reshard (it is not equivalent to the target)")
        if not steps:
            return []
        name = self.facts.ops[u].name
        if self.rel.exists("sum_operand_site", o=u, i=i):   # (rules/reshard/targets.dl, full version)
            what = f"{self.op(u)}'s result is unreduced where this operand is not: its share is a partial sum too"
        else:
            what = {"func.return": "the function returns it", "func.call": "a call passes it to its callee",
                    }.get(name, f"it flows along a data-flow edge of {self.op(u)}")
        return [f"  {what} (operand {i} of {name}), which asks for another sharding: " + "; ".join(steps)]

    # ---------------------------------------------------------------- an op's working shardings
    def op_decision(self, o: int, said: set) -> list[str]:
        """How op o's working shardings were decided (rules/reshard/why.dl)."""
        if o in said:
            return []
        said.add(o)
        out = [f"  {self.op(o)}:"]
        for conflict in self.rel.where("why_conflict", o=o):
            f = conflict.f
            holders = defaultdict(list)   # tensor -> its fs_axis rows for f
            for row in self.rel.where("fs_axis", o=o, f=f):
                holders[row.j].append(row)
            held = [f"{self.tensor(o, has.j)} {self.axes(o, holders.get(has.j, ()))}"
                    for has in sorted(self.rel.where("fs_has", o=o, f=f), key=lambda r: r.j)]
            verb = "conflicts" if conflict.what == "differs" else "needs replication but is sharded"
            out.append(f"    factor {self.factor(o, f)} {verb}: " + ", ".join(held))
        for why in self.rel.where("why_route", o=o):
            out += getattr(self, f"route_{why.route}")(o)
        return out

    def route_compatible(self, o: int) -> list[str]:
        orders = self.rel.where("device_order_differs", o=o)
        return ["    its shardings fit together" + (
            "; " + ", ".join(self.tensor(o, x.j) for x in orders) + " is on a mesh of another device order "
            "than the op's" if orders else "")]

    def route_overflow(self, o: int) -> list[str]:
        return ["    a reshape whose axes overflow a factor: the axes are handed out again over both sides, "
                "axis first (partitioning.md 2.5)"]

    def route_dot(self, o: int) -> list[str]:
        return ["    the non-full version's dot special case (partitioning.md 2.6)"]

    def route_single_device(self, o: int) -> list[str]:
        callback = self.rel.first("why_single_device", o=o, why="callback")
        if callback:
            return [f"    a host callback placed on device {callback.k}: sdylog runs it once there, as XLA does, "
                    "and gathers its operands there"]
        return ["    its result is on one device (a maximal mesh): its operands go there (partitioning.md 2.10)"]

    def route_unary(self, o: int) -> list[str]:
        """Which of the two tensors is kept, and the first key that told them apart."""
        key = {x.j: x for x in self.rel.where("unary_key", o=o)}
        out = []
        for x in self.rel.where("why_kept", o=o):
            kept, other = x.kept, x.other
            why = _KEPT_WORDS[x.reason]
            if x.reason == "size":
                why += f" ({key[kept].size} elements against {key[other].size})"
            elif x.reason == "sharded":
                why += f" ({key[kept].shards} shards against {key[other].shards})"
            out.append(f"    two tensors: {self.tensor(o, kept)} keeps its sharding, {self.tensor(o, other)} "
                       f"takes it ({why})")
        return out

    def route_greedy(self, o: int) -> list[str]:
        """The greedy picks in order, each with what set it apart."""
        out = []
        for n, pick in enumerate(sorted(self.rel.where("why_pick", o=o), key=lambda r: r.k), 1):
            k, f = pick.k, pick.f
            axes = self.axes(o, self.rel.where("why_pick_axis", o=o, k=k))
            weight = self.rel.first("why_pick_weight", o=o, k=k).s
            covers = [self.tensor(o, x.j) for x in self.rel.where("why_pick_covers", o=o, k=k)]
            kind = self.rel.first("op_factor", o=o, f=f).kind
            out.append(f"    pick {n}: factor {_LETTERS[f] if f < len(_LETTERS) else f} takes {axes}: "
                       f"{_PICK_WORDS[pick.reason]}; tensors of {weight} elements in all hold it so "
                       f"({', '.join(covers)}); a {_KIND_WORDS.get(kind, kind)} factor")
        head = "    the greedy choice (partitioning.md 2.3 step C: tensor sizes, then factor kind, sharding size, "
        head += "factor index, length, axes):"
        return [head] + out if out else [head + " nothing to pick"]
