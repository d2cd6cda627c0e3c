"""`sdylog explain FILE VALUE`: why a value gets its sharding.

Runs what `sdylog run` runs up to the end of propagation (the import passes,
then user-priority propagation with op priorities, the aggressive strategy,
and provenance recorded), then reads the derivation of each unit of the
value's final sharding back to the user annotation it came from: every hop
is an op visit (rules/propagation/core.dl: unit_at <- write <- prop <-
op_unit <- unit_at of another tensor of the op; a write refused for a
priority restriction and made when it lifts goes write <- lift_offer <-
prop), back to a unit a tensor started with (init_unit). Internal ids (tensors, units,
ops, ranks) are turned back into the input's value names, axis names, source
locations and phases. `--tree` prints the raw Datalog derivation instead.

Values are named as MLIR prints the input (`%0`, `%arg0`, `%cst_1`, `%0#1`):
the names of a file that MLIR or JAX printed. Names an author chose in a
hand-written file (`%x`) are not kept by MLIR's parser.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace

import click
from jaxlib.mlir import ir

from sdylog.cli import reports_errors
from sdylog.datalog.named_rows import Lookup, row_type
from sdylog.commands.values import (InputValue, NamedValues, Target, display_name, loc_text, op_name,
                                    resolve_name)
from sdylog.ir.rewrite import owning_op
from sdylog.mpmd.command import mpmd_options
from sdylog.ir.shardings import data_flow_op_of_edge, is_edge_owner
from sdylog.ir.walk import symbol_name
from sdylog.model.axis import AxisRef

# The relations one hop of propagation goes through (core.dl), and where chains start.
CHAIN_RELATIONS = ("unit_at", "write", "lift_offer", "prop", "op_unit", "init_unit", "tensor_init")
# What a tensor holds: the units it started with, then those visits wrote (core.dl: HOLDS).
HELD_RELATIONS = ("init_unit", "unit_at")
_FACTOR_LETTERS = "ijklmnopqrstuvwxyz"


def held_rows(rel: Lookup, t: int) -> list:
    """The units tensor t holds: named rows of HELD_RELATIONS."""
    return [row for relation in HELD_RELATIONS for row in rel.where(relation, t=t)]


def relation_of(row) -> str:
    """The relation of a named row (its class is named after it: named_rows.row_type)."""
    return type(row).__name__


# ---------------------------------------------------------------- running the pipeline
@dataclass
class Explained:
    """The propagation run with provenance, and the way back to names."""
    filename: str
    engine: object
    facts: object
    values: list[InputValue]
    funcs: list[str]
    result_counts: dict
    result_names: list = field(default_factory=list)   # the entry function's results' JAX names
    names: dict = field(default_factory=dict)     # fact value id -> InputValue
    copies: dict = field(default_factory=dict)    # id(InputValue) -> [fact value ids]
    text: str | None = None                       # the input's text when it was given so (else read from filename)

    @staticmethod
    def of(result, named: NamedValues, filename: str, text: str | None = None) -> Explained:
        """From a propagation run with provenance (`result`) and the input's
        values, matched to its facts (named.take_propagated)."""
        return Explained(filename, result.engine, result.facts, named.values, named.funcs, named.result_counts,
                         named.result_names, named.names, named.copies, text)


def run_with_provenance(path: str, text: str | None = None, progress=None) -> Explained:
    """Parse (`text` when given, named `path`), name the input's values, then
    the pipeline's import passes and propagation exactly as
    `-sdy-propagation-pipeline` runs them (the export passes are left out:
    they only rewrite what propagation decided; so are the dead ops'
    erasure, as the explanations read the facts' ops after the run: `sdylog
    explain` explains before the erasure, and sees the same ops)."""
    from sdylog.commands.pipeline import run_pipeline
    run = run_pipeline(path, progress=progress, text=text, keep_values=True, provenance=True, export=False,
                       keep_dead=True)
    return Explained.of(run.result, run.named, run.ctx.filename, text)


def explain_file(path: str, value: str, tree: bool = False, depth: int = 1, progress=None) -> str:
    """What `sdylog explain` prints for `value` in the module at `path`
    (explain_text), from one run of the pipeline: propagation with
    provenance, explained as soon as it is done (the export erases ops its
    facts hold), then (unless `tree`) the export and the reshards."""
    from sdylog.commands.pipeline import entry_shardings, run_pipeline
    from sdylog.ir.module import display_name as file_name
    from sdylog.progress import Progress
    progress = progress or Progress(False)
    texts = []

    propagated = {}

    def explain_propagation(result, named):
        progress.step(f"explaining {value}")
        texts.append(propagation_text(Explained.of(result, named, file_name(path)), value, tree, depth))
        propagated.update(entry_shardings(result.facts.module))
    run = run_pipeline(path, progress=progress, keep_values=True, provenance=True, export=not tree,
                       on_propagated=explain_propagation)
    if not tree:
        progress.step("reshards")
        texts.append(partitioning_text(value, run, propagated))
    return "".join(texts)


# ---------------------------------------------------------------- reading the relations

def edge_input(arg, owner) -> str:
    """`argument 0 of @main`, `block argument 1 of stablehlo.while`, `result 0
    of stablehlo.add`: the value an edge that owns none reads."""
    if isinstance(arg.owner, ir.Block):
        index = ir.BlockArgument(arg).arg_number
        if op_name(owner) == "func.func":
            return f"argument {index} of @{symbol_name(owner)}"
        return f"block argument {index} of {op_name(owner)}"
    return f"result {ir.OpResult(arg).result_number} of {op_name(owner)}"

class Namer:
    """Ids of the rules' relations back to names a compiler engineer reads."""

    def __init__(self, ex: Explained):
        self.ex = ex
        self.rel = Lookup(ex.engine)
        self.units = {u: (m, a, pre, z) for u, m, a, pre, z in
                      ex.engine.select("axis_unit", "unit", "mesh", "axis", "pre_size", "size")}
        self.axis_sizes = {(m, a): z for m, a, z in ex.engine.select("mesh_axis", "mesh", "axis", "size")}
        self.members = defaultdict(list)   # tensor -> values
        for v, t in ex.engine.select("tensor_of", "v", "t"):
            self.members[t].append(v)
        self.func_result_of = {t: (f, i) for f, i, t in
                               ex.engine.select("func_result_tensor", "func", "index", "tensor")}
        self.home = self._main()   # names of this function are shown unqualified

    # ---- values and tensors
    def value(self, vid: int) -> str:
        iv = self.ex.names.get(vid)
        if iv is not None:
            return self.named(iv)
        v = self.ex.facts.values[vid]
        owner = v.owner
        if isinstance(owner, ir.Block):
            return f"<block argument of {op_name(owner.owner)}>"
        return f"<{op_name(owner)} result at {loc_text(owner, self.ex.filename)}>"

    def tensor(self, t: int) -> str:
        """`%3`; `%0#0/%iterArg` for a while result and its block arguments (one
        tensor); `@main:result0`; `@f:%2` for values of another function."""
        if t in self.func_result_of:
            return self.result(*self.func_result_of[t])
        named = sorted({self.named(self.ex.names[v]) for v in self.members.get(t, ()) if v in self.ex.names})
        text = "/".join(named) if named else self.value(t)
        group = self.rel.first("group_tensor", t=t)
        return text + (" (a sharding group)" if group else "")

    def result(self, f: str, i: int) -> str:
        """`result['out']` (JAX's name of a result of the entry function), else `@f:result1`."""
        names = self.ex.result_names
        if f == self.home and i < len(names) and names[i]:
            return names[i]
        return f"@{f}:result{i}"

    def named(self, iv: InputValue) -> str:
        """The value's name (JAX's, for an argument of the entry function that
        has one), with its function when it is not the one being explained."""
        return display_name(iv, self.home)

    def context(self, t: int) -> str:
        """Where a copy made by the import sits: `in the call at f.mlir:3:8`."""
        op = owning_op(self.ex.facts.values[t])
        while op is not None and op_name(op) not in ("sdy.named_computation", "func.func"):
            op = op.parent
        if op is not None and op_name(op) == "sdy.named_computation":
            return f"in the call at {loc_text(op, self.ex.filename)}"
        users = [u.owner for u in self.ex.facts.values[t].uses]   # e.g. a constant split per use
        if users:
            return f"used by {op_name(users[0])} at {loc_text(users[0], self.ex.filename)}"
        return f"as {self.tensor(t)}"

    def tensor_where(self, t: int) -> str:
        if t in self.func_result_of:
            f, i = self.func_result_of[t]
            return f"result {i} of @{f}"
        for v in sorted(self.members.get(t, ())):
            if v in self.ex.names:
                return self.ex.names[v].where
        return self.value(t)

    # ---- ops
    def op(self, o: int) -> str:
        """`stablehlo.add (f.mlir:3:8)`, a data-flow edge, or main's result link."""
        link = self.rel.first("link_op", o=o)
        if link is not None:
            return f"the return of @{link.f} (result {link.index})"
        op = self.ex.facts.ops[o]
        loc = loc_text(op, self.ex.filename)
        if op.name in ("sdy.data_flow_edge", "sdy.func_data_flow_edge"):
            owner = data_flow_op_of_edge(op)
            where = f"({loc_text(owner, self.ex.filename)})"
            arg = op.operands[0]
            if op.name == "sdy.data_flow_edge" and not is_edge_owner(arg):
                # an edge on a value that owns none (Shardy's lit tests have some): it passes its input on
                return f"the data-flow edge on {edge_input(arg, owner)} {where}"
            return f"the data-flow edge of {op_name(owner)} {where}"
        return f"{op.name} ({loc})"

    def _main(self) -> str:
        rows = self.ex.engine.select("main_func", "f")
        return next(iter(rows))[0] if rows else "main"

    def factor(self, o: int, f: int) -> str:
        """`factor j (reduction)` of an op's rule; `dim 1` for identity visits."""
        visit = self.rel.first("visit", o=o)
        if visit is None or self.rel.exists("identity_op", o=o):
            return f"dim {f}"
        name = _FACTOR_LETTERS[f] if f < len(_FACTOR_LETTERS) else f"f{f}"
        kind = self.rel.first("rule_factor", rule=visit.rule, factor=f)
        return f"factor {name}" + (f" ({kind.kind.replace('_', '-')})" if kind and kind.kind != "pass_through"
                                   else "")

    def operand(self, o: int, j: int) -> str:
        """How tensor j of visit o relates to the op: operand / result / edge source / edge."""
        vt = self.rel.first("visit_tensor", o=o, j=j)
        visit = self.rel.first("visit", o=o)
        if vt is None or visit is None:
            return f"tensor {j}"
        if self.rel.exists("link_op", o=o):
            return "the func result slot" if vt.g == 1 else "the returned value"
        if self.rel.exists("identity_op", o=o):   # a data-flow edge or barrier
            name = self.ex.facts.ops[o].name
            if name == "sdy.propagation_barrier":
                return "the barrier's result" if vt.g == 1 else "the barrier's operand"
            return "the edge" if vt.g == 1 else f"edge source {j}"
        if vt.g == 1:
            n = len(self.rel.where("visit_tensor", o=o, g=0))
            return f"result {j - n}"
        return f"operand {j}"

    # ---- axes
    def unit(self, u: int) -> str:
        return self.axis_ref(*self.units[u])

    def axis_ref(self, mesh: str, axis: str, pre: int, size: int) -> str:
        return str(AxisRef.of_interval(axis, pre, pre * size, self.axis_sizes.get((mesh, axis))))

    # ---- phases
    def round_of(self, ph: int) -> str:
        """The user-priority round (`p0`, `p1`, ...) phase ph belongs to."""
        row = self.rel.first("phase", p=ph)
        rnd = row.round if row else 0
        pr = [p for p, r in self.ex.engine.select("priority_round", "p", "round") if r == rnd]
        return f"p{min(pr) if pr else rnd}"

    def phase(self, ph: int) -> str:
        row = self.rel.first("phase", p=ph)
        if row is None:
            return "final result sync"
        return f"round {self.round_of(ph)}, op-priority k={row.k}, {row.strategy}"


def short_rule(where: str) -> str:
    """`core.dl:183` from the clause's file:line (rule files have distinct names)."""
    path, _, line = where.rpartition(":")
    return f"{path.rsplit('/', 1)[-1]}:{line}"


# ---------------------------------------------------------------- chains
@dataclass
class Hop:
    """Unit u reached tensor t's dimension d through one op visit."""
    tensor: int
    dim: int
    unit: int
    phase: int               # of the rank at which it arrived (phases.dl)
    op: int
    factor: int
    j: int                   # the written tensor's index in the visit
    src_j: int | None        # the proposing tensor's index (None: static manual axes)
    src: tuple | None        # the proposing tensor's unit (a named init_unit or unit_at row)
    rules: list              # (relation, file:line) that made the step
    proposed: int | None = None   # the phase of the proposal, when the tensor refused it for a priority
                                  # restriction and took it when that lifted (lift_offer); else None


@dataclass
class Origin:
    """Where a chain starts: a user annotation (or a manual computation's axes)."""
    tensor: int
    dim: int
    unit: int
    phase: int
    text: str
    rules: list


class ChainWalker:
    def __init__(self, ex: Explained, namer: Namer):
        from sdylog.datalog.explain import premise_finder
        self.ex = ex
        self.namer = namer
        self.finder = premise_finder(ex.engine)

    def derive(self, relation, tup):
        from sdylog.datalog.explain import derive
        return derive(self.finder, relation, tup)

    def row(self, relation: str, values: tuple):
        """A tuple of `relation` as its named row."""
        return row_type(self.ex.engine.decl(relation))._make(values)

    def values(self, node):
        """A derivation node's tuple as its relation's named row."""
        return self.row(node.relation, node.values)

    def premise(self, node, relation):
        """The premise of `relation` the node's rule used, as a named row (None: none)."""
        for p in node.premises:
            if not isinstance(p, str) and p.relation == relation:
                return self.values(p)
        return None

    def chain(self, held, limit: int = 100000) -> list:
        """Hops from this unit (a named row of HELD_RELATIONS) back to its
        origin (the last item)."""
        steps = []
        cur = held
        seen = set()
        while len(steps) < limit:
            if cur in seen:
                break
            seen.add(cur)
            if relation_of(cur) == "init_unit":
                steps.append(self.origin(cur))
                return steps
            node = self.derive("unit_at", cur)
            hop, on = self.hop(self.premise(node, "write"), cur.ph)
            hop.rules.insert(0, ("unit_at", node.rule))
            steps.append(hop)
            if hop.src is None:   # the manual axes of a manual computation's in_sharding
                steps.append(self.static_origin(on, cur.t, cur.d, cur.u, cur.ph))
                return steps
            cur = hop.src
        return steps

    def hop(self, write, ph: int) -> tuple[Hop, object]:
        """The visit that made a write (a named `write` row): the compatible
        axes (prop) it took and the tensor of the op that proposed them
        (op_unit <- unit_at)."""
        write = self.row("write", write)
        wn = self.derive("write", write)
        rules = [("write", wn.rule)]
        proposed = None
        offer = self.premise(wn, "lift_offer")
        if offer is not None:   # refused for a priority restriction, offered again when it lifted
            ln = self.derive("lift_offer", offer)
            rules.append(("lift_offer", ln.rule))
            prop = self.premise(ln, "prop")
            proposed = prop.ph
        else:
            prop = self.premise(wn, "prop")
        pn = self.derive("prop", prop)
        on = self.derive("op_unit", self.premise(pn, "op_unit"))
        src = self.premise(on, "unit_at") or self.premise(on, "init_unit")
        vt = self.premise(on, "visit_reads") or self.premise(on, "visit_tensor")
        src_j = vt.j if vt is not None and src is not None else None
        rules += [("prop", pn.rule), ("op_unit", on.rule)]
        return Hop(write.t, write.d, write.u, ph, write.o, write.f, write.j, src_j, src, rules, proposed), on

    def origin(self, init) -> Origin:
        """The annotation a unit a tensor started with (a named init_unit row) comes from."""
        t, d, u, ph = init.t, init.d, init.u, init.ph
        inode = self.derive("init_unit", init)
        rules = [("init_unit", inode.rule)]
        mre = self.premise(inode, "manual_result_edge")
        if mre is not None:
            text = f"user annotation: out_shardings of {self.namer.op(mre.mc)}"
            return Origin(t, d, u, ph, text, rules)
        ti = self.premise(inode, "tensor_init")
        tnode = self.derive("tensor_init", ti)
        rules.append(("tensor_init", tnode.rule))
        text = self.annotation(tnode, t)
        sd = self.namer.rel.first("sharding_dim", sharding=ti.s, dim=d)
        if sd is not None:
            sp = self.namer.rel.first("sharding_dim_priority", sharding=ti.s, dim=d)
            text += f" (priority p{sp.priority})" if sp is not None else " (no priority)"
            if sd.is_closed:
                text += ", closed dimension"
        return Origin(t, d, u, ph, text, rules)

    def annotation(self, tnode, t: int) -> str:
        n = self.namer
        vs = self.premise(tnode, "value_sharding")
        if vs is not None:
            return self.holder(vs.value)
        fr = self.premise(tnode, "func_result_sharding")
        if fr is not None:
            return f"user annotation: result sharding of @{fr.func} result {fr.index}"
        gc = self.premise(tnode, "group_candidate")
        if gc is not None:
            return f"its sharding group takes the sharding of its first annotated member: {self.holder(gc.v)}"
        return f"initial sharding of {n.tensor(t)}"

    def holder(self, vid: int) -> str:
        """What kind of annotation the sharding on value vid is."""
        n = self.namer
        facts = self.ex.facts
        name = n.value(vid)
        iv = self.ex.names.get(vid)
        if iv is not None and not iv.annotated:
            return self.imported(vid)
        if vid in facts.func_args:
            fn, i = facts.func_args[vid]
            where = loc_text(facts.values[vid], self.ex.filename)
            at = f" at {where}" if where not in ("?", name) else ""   # (JAX's `loc("x")` is only a name)
            return f"user annotation on {name} (argument {i} of @{symbol_name(fn)}){at}"
        v = facts.values[vid]
        owner = v.owner
        if isinstance(owner, ir.Block):
            op = owner.owner
            return f"user annotation: in_shardings of {op_name(op)} on {name} at {loc_text(op, self.ex.filename)}"
        loc = loc_text(owner, self.ex.filename)
        owner_name = op_name(owner)   # (not owner.name: an OpView's may be its name attribute)
        if owner_name == "sdy.sharding_constraint":
            return f"sharding constraint {name} at {loc}"
        if owner_name == "sdy.func_data_flow_edge" or (owner_name == "sdy.data_flow_edge"
                                                       and is_edge_owner(owner.operands[0])):
            # the import moved the owner's sharding onto its edge (an edge on a value that
            # owns none holds its own sharding: the plain line below)
            is_arg = isinstance(owner.operands[0].owner, ir.Block)
            op = data_flow_op_of_edge(owner)
            kind = "sdy.sharding"
            if op_name(op) in ("sdy.manual_computation", "sdy.named_computation"):
                kind = "in_shardings" if is_arg else "out_shardings"
            return f"user annotation: {kind} of {op_name(op)} on {n.tensor(vid)} at {loc_text(op, self.ex.filename)}"
        return f"user annotation: sdy.sharding of {owner_name} {name} at {loc}"

    def imported(self, vid: int) -> str:
        """A sharding the import passes put on a value the input left bare:
        sdy-apply-sharding-constraints copies a constraint's sharding, or a
        manual computation's in_sharding, onto the value it reads."""
        n = self.namer
        name = n.value(vid)
        for use in self.ex.facts.values[vid].uses:
            user = use.owner
            kind = op_name(user)
            where = loc_text(user, self.ex.filename)
            if kind == "sdy.sharding_constraint":
                res = self.ex.facts.value_ids.get(user.results[0])
                what = f"sharding constraint {n.value(res)}" if res is not None else "a sharding constraint"
                return (f"user annotation: {what} at {where}, copied onto {name} by the import "
                        "(sdy-apply-sharding-constraints)")
            if kind == "sdy.manual_computation":
                return (f"user annotation: in_shardings of sdy.manual_computation at {where} (operand "
                        f"{use.operand_number}), copied onto {name} by the import (sdy-apply-sharding-constraints)")
        return f"a sharding the import passes gave {name} (the input has none)"

    def static_origin(self, on, t, d, u, ph) -> Origin:
        text = f"manual axes of the in_shardings at {self.namer.op(self.values(on).o)}"
        return Origin(t, d, u, ph, text, [("op_unit", on.rule)])


# ---------------------------------------------------------------- the readable report
def final_sharding_text(namer: Namer, t: int) -> str | None:
    """`<@mesh, [{"a"}, {}]>`: the sharding propagation leaves on t (final_* relations)."""
    rel = namer.rel
    final = rel.first("final_mesh", t=t)
    if final is None:
        return None
    # (final_dim lists only closed or prioritized dimensions; a maximal sharding has none)
    rank = None if rel.exists("maximal_mesh", mesh=final.mesh) else rel.first("tensor_rank", t=t)
    axes = rel.where("final_dim_axis", t=t)
    parts = []
    for d in range(rank.r if rank else 0):
        refs = [namer.axis_ref(final.mesh, x.axis, x.pre_size, x.size) for x in axes if x.d == d]
        parts.append("{" + ", ".join(refs) + "}")
    return f"<@{final.mesh}, [{', '.join(parts)}]>"


def explain_target(ex: Explained, namer: Namer, target: Target) -> str:
    lines = []
    tensors = _target_tensors(ex, namer.rel, target)
    if not tensors:
        return f"{target.label}: " + _no_tensor_reason(ex, target) + "\n"
    walker = ChainWalker(ex, namer)
    for t in tensors:
        where = target.value.where if target.value is not None else namer.tensor_where(t)
        sharding = final_sharding_text(namer, t)
        head = f"{target.label} ({where})"
        if len(tensors) > 1:
            head += f" [the copy {namer.context(t)}]"
        rank = namer.rel.first("tensor_rank", t=t)
        ndims = rank.r if rank else 0
        if sharding is None:
            lines.append(f"{head} is not sharded" + (" (a scalar: nothing to shard)" if ndims == 0 else ""))
        else:
            lines.append(f"{head} gets {sharding}")
        units = defaultdict(list)
        for row in held_rows(namer.rel, t):
            units[row.d].append(row)
        for d in range(ndims):
            rows = sorted(units.get(d, ()), key=lambda r: r.dp)
            if rows:
                lines.extend(_explain_dim(namer, walker, t, d, rows))
            else:
                lines.extend(_why_not(namer, t, d))
    return "\n".join(lines) + "\n"


def _target_tensors(ex: Explained, rel: Lookup, target: Target) -> list[int]:
    """The tensors `target` stands for (`rel`: a Lookup over ex.engine)."""
    if target.result is not None:
        row = rel.first("func_result_tensor", func=target.func, index=target.result)
        return [row.tensor] if row else []
    out = []
    for vid in ex.copies.get(id(target.value), []):
        for row in rel.where("tensor_of", v=vid):
            if row.t not in out:
                out.append(row.t)
    return out


def _no_tensor_reason(ex: Explained, target: Target) -> str:
    if target.result is not None:
        return f"propagation has no result slot for @{target.func} (only the main function's results have one)"
    if not ex.copies.get(id(target.value)):
        return ("this value is gone after the import passes (dead code, or a function that was inlined "
                "or removed), so propagation never saw it")
    return "propagation does not shard this value (a block argument of a region op such as a reduce body)"


def _explain_dim(namer: Namer, walker: ChainWalker, t: int, d: int, rows: list) -> list[str]:
    """Each axis of dimension d, with the chain of each of its units (one
    chain when all units of an axis came the same way)."""
    lines = []
    groups = []   # [(axis text, [held rows])]
    for row in rows:
        m, a, pre, z = namer.units[row.u]
        if groups and groups[-1][0][0] == a and groups[-1][0][1] * groups[-1][0][2] == pre:
            (ga, gpre, gz), grows = groups[-1]
            groups[-1] = ((ga, gpre, gz * z), grows + [row])
        else:
            groups.append(((a, pre, z), [row]))
    for (a, pre, z), grows in groups:
        m = namer.units[grows[0].u][0]
        chains = [walker.chain(r) for r in grows]
        sigs = {tuple(_signature(s) for s in c) for c in chains}
        label = namer.axis_ref(m, a, pre, z)
        if len(sigs) == 1:
            lines.append(f"  dim {d} {label}:")
            lines.extend(_chain_lines(namer, chains[0], label))
        else:
            for r, c in zip(grows, chains):
                ul = namer.unit(r.u)
                lines.append(f"  dim {d} {ul} (part of {label}):")
                lines.extend(_chain_lines(namer, c, ul))
        for r in grows:
            lines.extend(_losers(namer, walker, r))
    lines.extend(_conflicts_near(namer, t, d, {r.dp: r.u for r in rows}))
    return lines


def _conflicts_near(namer: Namer, t: int, d: int, held: dict, limit: int = 3) -> list[str]:
    """Axes that other tensors of the ops around t hold in the factor of
    dimension d, at a position where t holds another axis: they met this
    one in a conflict and stayed out (only where the factor starts the
    dimension, so that factor and dimension positions agree)."""
    rel = namer.rel
    out = []
    for vt in rel.where("visit_tensor", t=t):
        o = vt.o
        visit = rel.first("visit", o=o)
        if visit is None:
            continue
        for tf in rel.where("rule_tf", rule=visit.rule, j=vt.j, d=d):
            f = tf.f
            if tf.q != 0 or tf.start != 1:
                continue
            seen = set()
            for row in rel.where("op_unit", o=o, f=f):
                p, u = row.p, row.u
                if row.w == "blocking" or held.get(p) in (None, u) or u in held.values() or (p, u) in seen:
                    continue
                seen.add((p, u))
                tensors = [x.t for x in rel.where("visit_tensor", o=o) if x.so == row.so and x.t != t]
                if not tensors:
                    continue
                out.append(f"    (conflict at {namer.op(o)}: {namer.tensor(tensors[0])} holds {namer.unit(u)} in "
                           f"{namer.factor(o, f)} where this tensor has {namer.unit(held[p])}: "
                           f"it does not go through)")
    if len(out) > limit:
        out = out[:limit] + [f"    (and {len(out) - limit} more conflicts around it)"]
    return out


def _losers(namer: Namer, walker: ChainWalker, won: tuple, limit: int = 3) -> list[str]:
    """Other axes written at the same position of the dimension, later than
    the one that stayed (the first arrival keeps a position)."""
    out = []
    writes = [w for w in namer.rel.where("write", t=won.t, d=won.d, dp=won.dp) if w.u != won.u]
    for w in sorted(writes, key=lambda w: (w.ph, w.pos, w.c))[:limit]:
        hop, _ = walker.hop(w, w.ph)
        src = ""
        if hop.src is not None:
            src = f" from {namer.operand(hop.op, hop.src_j)} {namer.tensor(hop.src.t)} dim {hop.src.d}"
        out.append(f"    (also written there: {namer.unit(w.u)} by {namer.factor(hop.op, hop.factor)} of "
                   f"{namer.op(hop.op)}{src} [{namer.phase(w.ph)}; {_rules_text(hop.rules)}], after "
                   f"{namer.unit(won.u)} arrived: the first arrival keeps the position)")
    if len(writes) > limit:
        out.append(f"    (and {len(writes) - limit} more later writes there)")
    return out


def _signature(step) -> tuple:
    if isinstance(step, Hop):
        return ("hop", step.tensor, step.dim, step.op, step.factor, step.src_j)
    return ("origin", step.tensor, step.dim, step.text)


def _rules_text(rules) -> str:
    return ", ".join(f"{short_rule(w)} {rel}" for rel, w in rules)


def _chain_lines(namer: Namer, chain: list, axis: str) -> list[str]:
    lines = []
    for k, s in enumerate(chain):
        pad = "    " + "  " * min(k, 12)
        if isinstance(s, Hop):
            src = ""
            if s.src is not None:
                src = f" from {namer.operand(s.op, s.src_j)} {namer.tensor(s.src.t)} dim {s.src.d}"
            role = namer.operand(s.op, s.j)
            # say so when the value is written as an input of the op (propagation going backward)
            if role.startswith(("operand", "edge source")):
                role = f" (into its {role})"
            elif role in ("the returned value", "the barrier's operand"):
                role = f" (into {role})"
            else:
                role = ""
            lines.append(f"{pad}{namer.tensor(s.tensor)} dim {s.dim} {axis}: {namer.factor(s.op, s.factor)} of "
                         f"{namer.op(s.op)}{role}{src}")
            if s.proposed is not None:
                lines.append(f"{pad}    (taken when the priority restriction on it lifted; proposed "
                             f"{namer.phase(s.proposed)}, refused then)")
            lines.append(f"{pad}    [{namer.phase(s.phase)}; {_rules_text(s.rules)}]")
        else:
            lines.append(f"{pad}{namer.tensor(s.tensor)} dim {s.dim} {axis}: {s.text}")
            lines.append(f"{pad}    [from round {namer.round_of(s.phase)}; {_rules_text(s.rules)}]")
    if len(chain) > 13:
        lines.append(f"    ({len(chain) - 1} hops)")
    return lines


# ---------------------------------------------------------------- why a dimension has nothing
def _why_not(namer: Namer, t: int, d: int, max_nodes: int = 400, max_reasons: int = 6) -> list[str]:
    """What the derived relations show about a dimension that got no axis.
    From it, walk the dimensions that got nothing either (through the
    factors of the ops relating them) and report where the walk stops: a
    dimension closed by its annotation, or an op where some tensor holds
    an axis in the factor and it did not come across (conflict, direction,
    refused write)."""
    rel = namer.rel
    out = [f"  dim {d}: no axis"]
    seen = {(t, d)}
    queue = [(t, d, 0)]
    reasons: list[tuple[int, str]] = []
    done_ops = set()
    k = 0
    while k < len(queue) and len(seen) < max_nodes:
        x, dx, hops = queue[k]
        k += 1
        init = rel.first("init_dim", t=x, dim=dx)
        if init is not None and init.closed == 1:
            reasons.append((hops, f"{namer.tensor(x)} dim {dx} is closed by its annotation "
                                  f"({namer.tensor_where(x)}): no axis can be added to it"))
            if x != t:
                continue
        for vx in rel.where("visit_tensor", t=x):
            o = vx.o
            visit = rel.first("visit", o=o)
            if visit is None:
                continue
            for tf in rel.where("rule_tf", rule=visit.rule, j=vx.j, d=dx):
                f = tf.f
                others = [(vt.j, vt.t, tf2.d) for tf2 in rel.where("rule_tf", rule=visit.rule, f=f)
                          for vt in rel.where("visit_tensor", o=o, j=tf2.j) if vt.t != x or tf2.d != dx]
                if any(rel.exists(held, t=y, d=dy) for _j, y, dy in others for held in HELD_RELATIONS):
                    if (o, f) not in done_ops:
                        done_ops.add((o, f))
                        reasons.append((hops, _factor_diagnosis(namer, o, f, x, dx, vx.j)))
                    continue
                for _j, y, dy in others:
                    if (y, dy) not in seen:
                        seen.add((y, dy))
                        queue.append((y, dy, hops + 1))
    if not reasons:
        out.append("    no annotation reaches it: no tensor connected to it through op factors and data-flow "
                   "edges has an axis there (ops with no sharding rule, e.g. an unknown custom_call, connect nothing)")
        return out
    reasons.sort(key=lambda r: r[0])
    for hops, text in reasons[:max_reasons]:
        out.append(f"    {'here' if hops == 0 else f'{hops} hop' + ('s' if hops > 1 else '') + ' away'}: {text}")
    if len(reasons) > max_reasons:
        out.append(f"    ... and {len(reasons) - max_reasons} more places where propagation toward it stopped")
    return out


def _factor_diagnosis(namer: Namer, o: int, f: int, t: int, d: int, j: int) -> str:
    rel = namer.rel
    what = f"{namer.factor(o, f)} of {namer.op(o)}"
    present = [row for row in rel.where("op_unit", o=o, f=f) if row.p == 0]
    held = defaultdict(set)   # unit -> tensors holding it at the factor's first position
    for row in present:
        held[row.u].update(x.t for x in rel.where("visit_tensor", o=o) if x.so == row.so)
    if not held:
        return f"{what}: no tensor of the op has an axis there"
    if rel.exists("rule_blocked_factor", rule=rel.first("visit", o=o).rule, factor=f):
        return f"{what}: the factor is blocked (its op's rule does not propagate it)"
    desc = "; ".join(f"{'/'.join(namer.tensor(x) for x in sorted(ts))} has {namer.unit(u)}"
                     for u, ts in sorted(held.items()))
    if len(held) > 1:
        return f"{what}: conflicting axes ({desc}): Shardy propagates nothing through a conflict"
    u = next(iter(held))
    props = [p for p in rel.where("prop", o=o, f=f) if p.p == 0 and p.u == u]
    if not props:
        barrier = rel.first("propagation_barrier", op=o)
        if barrier is not None:
            return f"{what}: {desc}, but the barrier lets shardings through {barrier.direction} only"
        return f"{what}: {desc}, but no tensor that may widen the factor proposes it in any phase " \
               f"(propagation direction, op priorities)"
    ph = props[0].ph
    reasons = []
    if rel.exists("dim_closed_at", t=t, d=d, ph=ph):
        reasons.append("the dimension is closed then (closed, or its priority's round comes later)")
    if rel.exists("unit_blocked_at", t=t, u=u, ph=ph):
        reasons.append(f"{namer.unit(u)} is replicated, unreduced or held back for a later priority on this tensor")
    if rel.exists("mesh_clash", t=t, u=u):
        reasons.append("the tensor is on another mesh")
    used = [r for r in held_rows(rel, t) if r.u == u]
    if used:
        reasons.append(f"{namer.unit(u)} is already used by dim {used[0].d} of this tensor")
    if rel.exists("write", o=o, t=t, d=d):
        reasons.append("a write was made but lost: an equal-rank conflict (a tie drops both)")
    if not reasons:
        reasons.append("the write's checks refused it (divisibility of a non-minor-most factor, or "
                       "an operand of an elementwise op taking no more than its result)")
    return f"{what}: {desc}, proposed ({namer.phase(props[0].ph)}) but not taken: " + "; ".join(reasons)


# ---------------------------------------------------------------- --tree
def tree_text(ex: Explained, namer: Namer, target: Target, depth: int) -> str:
    from sdylog.datalog.explain import explain
    out = []
    for t in _target_tensors(ex, namer.rel, target):
        out.append(f"// {target.label}: tensor {t} = {namer.tensor(t)} ({namer.tensor_where(t)})")
        rows = held_rows(namer.rel, t)
        if not rows:
            out.append("// no unit_at or init_unit tuple: nothing reached this tensor")
        for row in rows:
            tree = explain(ex.engine, relation_of(row), row, max_depth=depth, follow=CHAIN_RELATIONS)
            out.append(tree.format().rstrip("\n"))
        tensors = sorted(_tensors_in(rows, ex, namer) | {t})
        out.append("// units: " + ", ".join(f"{u} = {namer.unit(u)}" for u in sorted(namer.units)))
        out.append("// tensors: " + ", ".join(f"{x} = {namer.tensor(x)}" for x in tensors))
    if not out:
        out.append(f"// {target.label}: {_no_tensor_reason(ex, target)}")
    return "\n".join(out) + "\n"


def _tensors_in(rows, ex, namer) -> set:
    """Tensors along the chains of these units (held_rows) (for the legend)."""
    walker = ChainWalker(ex, namer)
    out = set()
    for row in rows:
        for s in walker.chain(row):
            out.add(s.tensor)
            if isinstance(s, Hop) and s.src is not None:
                out.add(s.src.t)
    return out


# ---------------------------------------------------------------- command
@click.command()
@click.argument("file")
@click.argument("value")
@click.option("--tree", is_flag=True, help="Print the raw Datalog derivation tree (relations and tuples).")
@click.option("--depth", type=click.IntRange(min=0), default=1, show_default=True,
              help="With --tree: levels shown below each propagation step (unit_at/write/prop/op_unit "
                   "are always followed to the annotation).")
@click.option("--entry", default=None, help="MPMD: the partitioned function (default: @main).")
@mpmd_options
@reports_errors
def explain(file, value, tree, depth, entry, **mpmd):
    """Explain the sharding propagation gives VALUE in FILE: for each axis of
    its final sharding, the op visits it came through, back to the user
    annotation; for each dimension with no axis, what stopped it.

    VALUE: a JAX name of an argument or result of the entry function (`x`,
    `params['w1']`, `result[1]`: with `as_text(debug_info=True)` JAX names
    arguments in locations, results in `jax.result_info`), or an MLIR name:
    %name (in @main or the only function), @func:%name, @func:argN,
    @func:resultN, as MLIR prints FILE (%0, %arg0, %cst_0).

    On a module whose ops are placed on devices (maximal shardings,
    --assign): why the op defining VALUE runs where it does, where VALUE is,
    and why it is sent, back to the user's placements (the MPMD rules)."""
    from sdylog.simulate.mpmd import wants_mpmd
    if wants_mpmd(file, mpmd):
        from sdylog.mpmd.command import options_from
        from sdylog.mpmd.explain import explain_text as mpmd_explain_text
        click.echo(mpmd_explain_text(file, value, options_from(**mpmd, entry=entry), tree, depth), nl=False)
        return
    from sdylog.progress import Progress
    progress = Progress()
    text = explain_file(file, value, tree, depth, progress=progress)
    progress.done()
    click.echo(text, nl=False)


def explain_text(ex: Explained, value: str, tree: bool = False, depth: int = 1, partitioned=None) -> str:
    """What `sdylog explain` prints for `value` (a JAX or MLIR name): its
    propagation, then (unless `tree`) the reshards and collectives
    partitioning puts at it, from `partitioned` (a run_pipeline(...,
    keep_values=True) of the same input; made when not given)."""
    from sdylog.commands.pipeline import entry_shardings, run_pipeline
    text = propagation_text(ex, value, tree, depth)
    if tree:
        return text
    run = partitioned or run_pipeline(ex.filename, text=ex.text, keep_values=True)
    # (ex's run stops before the export (run_with_provenance): its module is propagation's)
    return text + partitioning_text(value, run, entry_shardings(ex.facts.module))


def propagation_text(ex: Explained, value: str, tree: bool = False, depth: int = 1) -> str:
    """Why `value` gets its sharding: its derivation read back to names
    (`tree`: the raw derivation tree)."""
    targets = resolve_name(value, ex.values, ex.funcs, ex.result_counts, ex.result_names)
    namer = Namer(ex)
    out = []
    if len(targets) > 1:
        out.append(f"// {targets[0].label} names {len(targets)} values (sibling regions reuse names): "
                   + "; ".join(t.value.where if t.value is not None else t.label for t in targets) + "\n")
    for target in targets:
        out.append(tree_text(ex, namer, target, depth) if tree else explain_target(ex, namer, target))
    return "".join(out)


def partitioning_text(value: str, run, propagated: dict | None = None) -> str:
    """What the export changes of `value`'s sharding (_export_changes;
    `propagated`: entry_shardings of the module as propagation left it),
    then the reshards and collectives the full
    version puts at `value`, and why (sdylog/reshard/explain.py), on the
    module the whole pipeline leaves (`run`: a run_pipeline(...,
    keep_values=True)). The input's values are found there as
    propagation's explanation finds them in its facts (match_values: by
    kind, location, index and type; the parsed input's handle only where
    the value is still that one: the passes free values, and a new one may
    take a freed one's address)."""
    from sdylog.commands.values import main_name, match_values
    from sdylog.reshard.explain import load_written_origins, reshard_lines

    named = run.named
    facts = run.needed.inventory.facts
    lines = []
    matched = None
    targets = resolve_name(value, named.values, named.funcs, named.result_counts, named.result_names)

    def match() -> tuple[dict, dict]:
        nonlocal matched
        if matched is None:
            matched = match_values(facts, named.values)
        return matched

    def final_copies(target) -> list:
        if target.value is None:
            return [h for h in [_returned(run.module, target)] if h is not None]
        return [facts.values[v] for v in match()[1][id(target.value)]]

    with run.module.context:
        lines += _export_changes(targets, run, propagated, final_copies, main_name(run.module))
        written = load_written_origins(run, match)
        for target in targets:
            handles = final_copies(target)
            for h in handles:
                found = reshard_lines(run.needed, h, run.ctx.filename)
                if found and len(handles) > 1:
                    found[0] = f"{found[0][:-1]}, the copy in @{_func_of(h)}:"
                lines += found + (_written_lines(h, run) if found and written else [])
    return "\n".join(lines) + "\n" if lines else ""


def _written_lines(value, run) -> list[str]:
    """Where the reshards the export wrote that take `value` come from, as
    rules/reshard/why.dl's why_written and why_written_call say."""
    facts, filename = run.needed.inventory.facts, run.ctx.filename
    vid = facts.value_ids.get(value)
    if vid is None:
        return []
    rel = Lookup(run.needed.inventory.engine)

    def where(o: int) -> str:
        return loc_text(facts.ops[o], filename)
    lines = []
    for row in sorted(rel.where("why_written", v=vid), key=lambda x: x.r):
        r = row.r
        if row.why == "constraint":
            lines.append(f"  the reshard at {where(r)} is the input's sdy.sharding_constraint there "
                         "(sdy-sharding-constraint-to-reshard)")
            continue
        for call in sorted(rel.where("why_written_call", r=r), key=lambda x: (x.u, x.i)):
            f, origin = call.f, call.origin
            callee = f"@{f}" if origin == f else f"@{f} (the export's copy of @{origin} for this call's shardings)"
            taken = rel.first("why_written_call_takes", r=r, u=call.u, i=call.i)
            lines.append(f"  the reshard at {where(r)} is for the call at {where(call.u)}: it passes the value "
                         f"to {callee} as argument {call.i}, which takes "
                         f"{'no sharding' if taken is None else facts.shardings[taken.s]} "
                         "(a call's operands go to its callee's argument shardings: sdy-insert-explicit-reshards)")
    return lines


# Ops whose arguments or results the export's update-non-divisible-input-output-shardings changes
# (a function's, a call's as its callee's, a manual computation's in and out shardings).
_EXPORT_RESHARDED = ("func.func", "func.call", "sdy.manual_computation")


def _export_changes(targets: list, run, propagated: dict | None, final_copies, main: str | None) -> list[str]:
    # (left in Python: a diff of two IR states, propagation's shardings and the export's, that no
    # rule evaluation holds together; it decides nothing, the export's passes did)
    """A line for each copy of a target whose axes the export changed: it
    shrinks a function's argument or result sharding that does not divide
    its dimension (a call's result follows its callee, a manual
    computation's free axes too), and cuts an open dimension of the entry
    function's at its first sub-axis. Values of _EXPORT_RESHARDED ops
    compare propagation's shardings (run.named.shardings) with those on
    their copies after it (`final_copies(target)`: ir.Values); the entry
    function's results, entry_shardings before (`propagated`) and after."""
    from sdylog.commands.pipeline import EntryValue, entry_shardings, not_dividing
    from sdylog.ir.shardings import get_sharding
    from sdylog.model.mesh import meshes_of_module
    from sdylog.model.sharding import TensorSharding

    def axes(s):   # (no sharding: no axes)
        return [] if s is None or not any(d.axes for d in s.dims) else [d.axes for d in s.dims]
    meshes = meshes_of_module(run.module)
    changes = []   # (EntryValue propagation left, the sharding written, of the entry function's interface)
    for target in targets:
        if target.value is None:
            before = (propagated or {}).get(("result", target.result)) if target.func == main else None
            after = entry_shardings(run.module).get(("result", target.result)) if before is not None else None
            if after is not None:
                changes.append((replace(before, what=f"{before.what} of @{main}"), after.sharding, True))
            continue
        given = run.named.shardings.get(id(target.value)) or []
        for h in final_copies(target):
            if op_name(owning_op(h)) not in _EXPORT_RESHARDED:
                continue
            a = get_sharding(h)
            written = None if a is None else TensorSharding.from_attr(a)
            if written is None or any(axes(g) == axes(written) for g in given):
                continue
            before = next((g for g in given if g is not None), None)
            if before is None:
                continue
            mesh = meshes.get(before.mesh) if isinstance(before.mesh, str) else before.mesh
            entry = target.value.key[:2] == ("farg", main)
            what = f"argument {target.value.key[2]} of @{main}" if entry else f"it in @{_func_of(h)}"
            changes.append((EntryValue(what, run.named.types[id(target.value)][0], before,
                                       mesh.axis_sizes if mesh is not None else {}, None), written, entry))
    lines = []
    for before, written, entry in changes:
        if before.sharding is None or written is None or axes(before.sharding) == axes(written):
            continue
        why = not_dividing(before)
        if why:
            why += " (sdy-update-non-divisible-input-output-shardings)"
        elif entry:
            why = "an open dimension is cut at its first sub-axis (sdy-remove-sub-axes-in-input-output-shardings)"
        else:
            why = "the export's passes rewrote it"
        lines.append(f"the export writes {written} on {before.what}, not propagation's {before.sharding}: {why}")
    return lines


def _func_of(value) -> str:
    """The name of the function holding `value`."""
    op = owning_op(value)
    while op is not None and op_name(op) != "func.func":
        op = op.parent
    return symbol_name(op) if op is not None else "?"


def _returned(module, target):
    """The value function `target.func` returns as its result `target.result`."""
    from sdylog.ir.walk import func_ops
    for fn in func_ops(module):
        if symbol_name(fn) == target.func:
            ops = fn.regions[0].blocks[0].operations
            return ops[len(ops) - 1].operands[target.result]
    return None
