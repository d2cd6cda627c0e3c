"""One run of the reshard rules: facts in, rules evaluated once.

The rules (rules/reshard.dl) decide every reshard and collective; this
module chooses what the run does (the pass options become run_option
facts), adds the facts only these rules read, and returns the engine with
the derived relations for the writer (sdylog/reshard/writer.py). A
concatenate of slices that their own step reshards takes one more
evaluation (with_walk_rules), on such modules only.

In a pipeline the engine stays in its census scope for the next run: the
export's full insert-explicit-reshards runs on the module the propagation
pipeline's own (non-full) run left as it was, the same facts; it then
replaces the run_option facts only, and evaluates again only the strata
that depend on them (about two thirds, and most of the engine's work
on a small model; facts and their load are not made again).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from jaxlib.mlir import ir

from sdylog import RULES_DIR
from sdylog.datalog import make_engine
from sdylog.datalog.cache import rule_program
from sdylog.datalog.gc_pause import gc_paused
from sdylog.datalog.memory_engine import merged_facts
from sdylog.facts.extract import divisors, post_order
from sdylog.facts.op_kinds import OWN_SHARDING_ATTR
from sdylog.facts.shared import module_facts
from sdylog.ir.diagnostics import SdylogError, error_at
from sdylog.model.mesh import Mesh, meshes_of_module
from sdylog.partition import ir_shardings as irs
from sdylog.passes import phase_clock
from sdylog.passes.census import census, changes
from sdylog.reshard.writer import WRITER_RELATIONS

PROGRAM_FILE = RULES_DIR / "reshard.dl"


@dataclass(frozen=True)
class ReshardOptions:
    full_version: bool = False     # Shardy's enable-full-version


@dataclass
class ReshardDecisions:
    engine: object                 # the Datalog engine, holding every input and derived relation
    facts: object                  # the FactSet (ids back to IR ops and values)
    timings: dict = field(default_factory=dict)


def reshard_program():
    return rule_program(str(PROGRAM_FILE))


def run_facts(options: ReshardOptions, facts) -> dict[str, list[tuple]]:
    """The facts that tell the rules what this run does, and those of the
    module only these rules read. With maximal meshes (single-device ops),
    the fully closed replicated sharding of each rank on each mesh is added
    to the facts' shardings (the rules pick the one a reshard goes to)."""
    if facts.rows("maximal_mesh"):
        ranks = {r for _, _, r, _ in facts.rows("value")}
        for name in facts.mesh_symbols:
            if facts.meshes[name].axes:
                for r in sorted(ranks):
                    facts.add_replicated_sharding(name, r)
    sizes = {z for _, _, _, z in facts.rows("mesh_axis")}
    return {
        "run_option": [("full", int(options.full_version))],
        "axis_divisor": [(z, d) for z in sorted(sizes) for d in divisors(z)],
        "mesh_position": [(name, i) for i, name in enumerate(facts.mesh_symbols)],
        "ranked_type": [(t,) for t, ranked in enumerate(facts.type_is_ranked) if ranked],
        "all_reduce_op_axis": all_reduce_op_axes(facts),
        "resultless_sharding": resultless_shardings(facts),
    }


def resultless_shardings(facts) -> list[tuple]:
    """(o, s): op o has no results and its `sdy.sharding` list holds
    sharding s (JAX's result-less host callbacks, jax.debug.print, which it
    places on device 0: rules/reshard/single_device.dl). The extractor
    keeps no row of it (a sharding list is its results')."""
    ops = sorted(o for o in facts.sharded_ops if facts.ops[o] is not None and not facts.op_results[o])
    if not ops:
        return []
    ids: dict = {}
    for sid, sharding in enumerate(facts.shardings):
        ids.setdefault(sharding, sid)
    reader = irs.CachedShardingReader()
    return [(o, ids[s]) for o in ops for s in reader.per_value(facts.ops[o].attributes["sdy.sharding"])
            if s in ids]


def all_reduce_op_axes(facts) -> list[tuple]:
    """(o, p, axis, pre, size): the axis ref at p of the reduction axes of
    each sdy.all_reduce o of the module (a full axis: pre 1, its size)."""
    reader = irs.CachedShardingReader()
    rows = []
    for o, kind, _, _ in facts.rows("op"):
        if kind != "sdy.all_reduce":
            continue
        op = facts.ops[o]
        sharding = reader.op_result_sharding(op, 0)
        mesh = sharding.mesh if isinstance(sharding.mesh, Mesh) else facts.meshes.get(sharding.mesh)
        sizes = {} if mesh is None else mesh.axis_sizes
        for p, ref in enumerate(reader.axes(op.attributes["reduction_axes"])):
            if ref.sub is not None:
                rows.append((o, p, ref.name, ref.sub.pre_size, ref.sub.size))
            elif ref.name in sizes:
                rows.append((o, p, ref.name, 1, sizes[ref.name]))
    return rows


# The census scope's key of the decisions kept for the next run.
KEPT = "reshard_decisions"


def decide(module, options: ReshardOptions, ctx=None) -> ReshardDecisions:
    """Evaluate the reshard rules on `module` (not changed here); an error
    at the first op Shardy rejects (rules/reshard/errors.dl)."""
    write_back = getattr(ctx, "derive", "all") == "write-back"
    wanted = WRITER_RELATIONS + NO_COMMON_MESH_RELATIONS + WALK_RELATIONS if write_back else None
    scope = getattr(ctx, "census", None)
    kept = None if scope is None else scope.get(KEPT)
    decisions = evaluate(reshard_program(), module, ctx, lambda facts: run_facts(options, facts), wanted,
                         keep=scope is not None, kept=kept)
    if scope is not None:
        scope[KEPT] = decisions
    decisions = with_walk_rules(decisions, module, ctx, options, wanted)
    first_error(decisions, decisions.engine.select("reshard_error", "o", "message"), ctx)
    return decisions


# The concatenates whose rule Shardy's walk builds otherwise (rules/reshard/walk_concat.dl).
WALK_RELATIONS = ["concat_walk_replicates"]

# The input relations of a sharding rule (rules/schema.dl), the rule's id first.
RULE_RELATIONS = ("rule_factor", "rule_blocked_factor", "rule_dim_factor", "custom_rule")


def with_walk_rules(decisions: ReshardDecisions, module, ctx, options: ReshardOptions, wanted) -> ReshardDecisions:
    """`decisions`; when they find concatenates whose rule Shardy's walk
    builds otherwise (rules/reshard/walk_concat.dl: slice operands that the
    slices' own step reshards, as from jnp.roll on a sub-axis), those of
    one more evaluation with the walk's rules instead. Never a third: the
    dependence is one level deep (a slice's decisions read its own rule and
    the shardings as propagated; a concatenate's result reshard hands later
    uses the sharding they had), so the second finds no new such
    concatenate; checked. (Op ids are the module's facts', the same in
    both evaluations.)"""
    found = sorted(decisions.engine.select("concat_walk_replicates", "o", "f"))
    if not found:
        return decisions
    again = evaluate(reshard_program(), module, ctx,
                     lambda facts: {**run_facts(options, facts), **walk_rule_facts(facts.relations, found)}, wanted)
    left = sorted(again.engine.select("concat_walk_replicates", "o", "f"))
    if left:   # (never, by the argument above)
        op = again.facts.ops[left[0][0]]
        raise RuntimeError("the reshard rules' second evaluation found another concatenate whose rule Shardy's "
                           f"walk builds otherwise (rules/reshard/walk_concat.dl): {op.name} at {op.location}")
    return again


def walk_rule_facts(relations: dict, replicates: list) -> dict:
    """The walk_rule facts (rules/reshard/inputs.dl) of the (op, factor)
    rows `replicates` and the rows of their rules: each op a copy of its
    op_rule in which the factors of its rows need replication, with an id
    after every id used."""
    rule_of = dict(relations["op_rule"])
    ops = sorted({o for o, _ in replicates})
    first = 1 + max([*rule_of.values(), *(r for r, *_ in relations["rule_factor"])])
    new = {o: first + i for i, o in enumerate(ops)}
    copies: dict = {}   # rule -> the ops of `replicates` applying it
    for o in ops:
        copies.setdefault(rule_of[o], []).append(o)
    facts = {"walk_rule": sorted(new.items())}
    for name in RULE_RELATIONS:
        facts[name] = [(new[o], *row[1:]) for row in relations.get(name, ()) for o in copies.get(row[0], ())]
    op_of, replicated = {r: o for o, r in new.items()}, set(replicates)
    facts["rule_factor"] = [(r, f, z, "need_replication" if (op_of[r], f) in replicated else k)
                            for r, f, z, k in facts["rule_factor"]]
    return facts


# The relations of an op left without a per-device program (rules/reshard/errors.dl: no common mesh).
NO_COMMON_MESH_RELATIONS = ["no_common_mesh", "no_common_mesh_mesh"]


@dataclass(frozen=True)
class NoCommonMesh:
    """What insert-explicit-reshards found of the module it wrote, for
    convert-global-to-local (PassContext.no_common_mesh_hand_over): the
    error of an op left without a common mesh, or None. It holds for that
    module while the module stays as the pass left it: in the same census
    scope, with as many changes counted (sdylog/passes/census.py) as after
    the pass. `full_version`: whether the pass ran with enable-full-version
    (only then did it insert everything the module needs)."""
    module: object
    scope: dict                    # the census scope the pass ran in
    changes: int                   # census.changes after the pass
    error: SdylogError | None
    full_version: bool = False


def hand_over(ctx, module, error: SdylogError | None, wrote: bool, full_version: bool = False) -> None:
    """Leave the insert pass's no_common_mesh_error (of the module it read;
    it left such ops as they were) in ctx for convert-global-to-local,
    replacing any earlier one; none outside a census scope, where nothing
    would tell whether the module changed since. Called by the pass, before
    census.follow_step counts its change (one, if it wrote)."""
    scope = getattr(ctx, "census", None)
    ctx.no_common_mesh_hand_over = (None if scope is None
                                    else NoCommonMesh(module, scope, changes(ctx) + int(wrote), error, full_version))


def current_hand_over(module, ctx) -> NoCommonMesh | None:
    """The insert pass's hand-over when it still holds for `module`: the
    pass wrote this module, in this census scope, and nothing changed it
    since; else None."""
    handed = getattr(ctx, "no_common_mesh_hand_over", None)
    if (handed is not None and handed.module is module and handed.scope is getattr(ctx, "census", None)
            and handed.changes == changes(ctx)):
        return handed
    return None


def no_common_mesh(module, ctx, ops: list | None = None) -> SdylogError | None:
    """The no_common_mesh_error of `module` as it is: the insert pass's when
    it ran on this module and nothing changed it since (hand_over), else the
    reshard rules' (their no-common-mesh relations only) on the module.
    `ops`: the module's ops, pre-order, if the caller has them."""
    handed = current_hand_over(module, ctx)
    if handed is not None:
        return handed.error
    if not meshes_of_other_axes(module, census(module, ctx).all_ops() if ops is None else ops):
        return None   # (no axes_clash: the rules would find nothing)
    decisions = evaluate(reshard_program(), module, ctx, lambda facts: run_facts(ReshardOptions(), facts),
                         NO_COMMON_MESH_RELATIONS, strict_rules=False)
    return no_common_mesh_error(decisions, getattr(ctx, "filename", "-"))


def meshes_of_other_axes(module, ops: list) -> bool:
    """Whether the shardings of a module whose ops are `ops` are on two
    meshes with axes, and not the same axes: without such a pair
    (rules/reshard/errors.dl, axes_clash) no op is left without a common
    mesh, and no_common_mesh skips the facts (the rules' cost, on a module
    that convert-global-to-local alone reads). The meshes are those of the
    ops' result shardings and of the arguments of functions and
    computations (every other block argument takes its sharding from an
    op); a mesh name without its `sdy.mesh` is left out (the rules know no
    such mesh either)."""
    reader = irs.CachedShardingReader()
    attrs = set()   # (a few distinct attributes over many ops)
    shardings = []
    for op in ops:
        name, op_attrs = op.name, op.attributes
        attrs.add(irs.result_sharding_attr(name, op_attrs))
        own = OWN_SHARDING_ATTR.get(name)   # (data-flow edges too: the facts read their shardings)
        if own is not None and own in op_attrs:
            attrs.add((op_attrs[own], True))
        if name == "func.func" and "arg_attrs" in op_attrs:
            count = len(ir.ArrayAttr(op_attrs["arg_attrs"]))
            shardings += [reader.func_arg_sharding(op, i) for i in range(count)]
        elif name in ("sdy.named_computation", "sdy.manual_computation") and "in_shardings" in op_attrs:
            attrs.add((op_attrs["in_shardings"], False))
    shardings += [s for attr, one in attrs for s in reader.result_shardings(attr, one)]
    named = meshes_of_module(module)
    axes = {m.axes for m in (s.mesh if isinstance(s.mesh, Mesh) else named.get(s.mesh)
                             for s in shardings if s is not None) if m is not None and m.axes}
    return len(axes) > 1


def no_common_mesh_error(decisions: ReshardDecisions, filename: str) -> SdylogError | None:
    """The error convert-global-to-local reports for the first op (in walk
    order) that the rules find left without a common mesh though it needs
    a reshard (rules/reshard/errors.dl); None when there is none. Meshes
    are named as the module names them: `@name`, or an inline mesh as sdy
    prints it."""
    engine, facts = decisions.engine, decisions.facts
    rows = sorted(engine.select("no_common_mesh", "o", "j", "d"))
    if not rows:
        return None
    o, j, d = rows[0]
    op = facts.ops[o]
    operands = len(op.operands)
    tensor = f"operand {j}" if j < operands else f"result {j - operands}"
    named = set(facts.mesh_symbols)
    meshes = sorted((first, m) for o2, m, first in engine.select("no_common_mesh_mesh", "o", "m", "j") if o2 == o)
    names = ", ".join(f"@{m}" if m in named else str(facts.meshes[m]) for _, m in meshes)
    return error_at(op, f"'{op.name}' op has sharded tensors on meshes with different axes ({names}): "
                        "insert-explicit-reshards leaves such an op as it is, so it has no per-device program "
                        f"(dimension {d} of {tensor} needs a reshard; reshard its operands onto one mesh first)",
                    filename)


# The facts of a run that change with the pass options only (run_facts).
OPTION_RELATIONS = ("run_option",)


def evaluate(program, module, ctx, more_facts, wanted=None, strict_rules: bool = True, keep: bool = False,
             kept: ReshardDecisions | None = None) -> ReshardDecisions:
    """One evaluation of `program` on the facts of `module` and
    more_facts(facts) (relation -> rows); `wanted`: the relations asked
    for (None: all); `strict_rules`: an op the rule registry does not know
    is an error; `keep`: nothing freed, so that a later run may go on from
    this one. `kept`: the decisions of such an earlier run: when they were
    made on the same facts, their engine goes on with the OPTION_RELATIONS
    replaced (see the module docstring)."""
    timings: dict[str, float] = {}
    clock = phase_clock(ctx)
    t0 = clock()
    with gc_paused(promote_survivors=True), module.context:
        facts = module_facts(module, ctx, strict_rules=strict_rules)
        t1 = clock()
        timings["facts"] = t1 - t0
        more = more_facts(facts)
        if kept and kept.facts is facts and kept.engine.program is program:
            engine = kept.engine
            for r in OPTION_RELATIONS:
                engine.replace(r, more[r])
            since = OPTION_RELATIONS
        else:
            engine = make_engine(program, provenance=bool(getattr(ctx, "provenance", False)))
            engine.load_all(merged_facts(program.relations, facts.relations, more))
            since = None
        t2 = clock()
        timings["load"] = t2 - t1
        engine.run(relations=wanted, keep=keep, since=since)
        timings["rules"] = clock() - t2
    return ReshardDecisions(engine, facts, timings)


def first_error(decisions: ReshardDecisions, rows, ctx) -> None:
    """Errors at the ops of `rows` (op, [order,] message: an error relation
    of the decisions' engine), when there are any: in each function (a
    function pass), the first in Shardy's walk order, with its smallest
    message."""
    rows = list(rows)
    if not rows:
        return
    facts, filename = decisions.facts, getattr(ctx, "filename", "-")
    func_of = {o: f for o, _, f, _ in facts.rows("op")}
    firsts: dict = {}   # function -> its first op with an error (filled in walk order)
    for o in post_order(facts, {r[0] for r in rows}):
        firsts.setdefault(func_of[o], o)
    errors = [error_at(facts.ops[o], min(r for r in rows if r[0] == o)[-1], filename) for o in firsts.values()]
    first = errors[0]
    if len(errors) > 1:   # (one error, every function's diagnostic on its lines)
        first.message = "\n".join([first.message] + [str(e) for e in errors[1:]])
    raise first

