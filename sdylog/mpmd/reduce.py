"""--reduce-locally: the add trees rules/mpmd/reduce.dl picks, regrouped by
where their leaves are: each device other than the root's sums its own
leaves (an add chain placed there, `sdylog.device`), and the root sums the
leaves at its device and those partial sums. The rules then run again on
the rewritten program (the driver): the partial sums travel instead of the
leaves."""
from __future__ import annotations

from collections import defaultdict

from jaxlib.mlir import ir

from sdylog.ir.rewrite import create_op
from sdylog.mpmd.hints import DEVICE_ATTR


def regroup_sums(engine, facts) -> int:
    """Rewrite the trees in place (the facts' module); returns how many."""
    # (left in Python: IR building; which trees, and which device adds which leaf, are reduce.dl's)
    roots = sorted(r for (r,) in engine.select("reduce_tree", "root"))
    if not roots:
        return 0
    leaves = defaultdict(list)
    for root, x, i, v in engine.select("sum_leaf", "root", "x", "i", "v"):
        leaves[root].append((x, i, v))
    home = {(root, v): d for root, v, d in engine.select("leaf_home", "root", "v", "d", ordered=True)}
    root_device = {op: d for op, d in engine.select("placed_core", "op", "d", ordered=True)}
    members = defaultdict(list)
    for x, root in engine.select("tree_of", "x", "root"):
        members[root].append(x)
    for root in roots:
        op = facts.ops[root]
        groups = defaultdict(list)
        for _x, _i, v in sorted(leaves[root]):
            groups[home[(root, v)]].append(facts.values[v])
        ip, loc = ir.InsertionPoint(op), op.location
        partials = [_sum(groups[d], d, ip, loc) for d in sorted(groups) if d != root_device[root]]
        total = _sum(groups.get(root_device[root], []) + partials, None, ip, loc)
        op.result.replace_all_uses_with(total)
        for x in sorted(members[root], reverse=True):   # users before their operands' producers
            facts.ops[x].erase()
    return len(roots)


def _sum(values: list, device: int | None, ip, loc):
    """values[0] + values[1] + ... (left to right), on `device` if given."""
    total = values[0]
    attrs = {} if device is None else {DEVICE_ATTR: ir.IntegerAttr.get(ir.IntegerType.get_signless(64), device)}
    for v in values[1:]:
        total = create_op("stablehlo.add", results=[total.type], operands=[total, v], attributes=dict(attrs),
                          loc=loc, ip=ip).result
    return total
