"""Collectives written per device: StableHLO collectives of a global
program's `sdy.manual_computation` bodies (what `shard_map` and halo
exchanges write), and those of any per-device program (an XLA-partitioned
HLO module, in the benchmarks). Each is known by its kind, the size of its
device groups and S, the bytes of its operands on one device; the bytes one
device sends come from rules/collectives.dl like the sdy collectives' (each
given as a block of S bytes over one axis of the group's size), so that
both kinds are counted by the same ring model.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir

from sdylog.ir.diagnostics import error_at, format_location
from sdylog.ir.types import element_bytes
from sdylog.ir.walk import walk_ops

# StableHLO collective -> the rules' kind.
KINDS = {"stablehlo.all_reduce": "all_reduce", "stablehlo.all_gather": "all_gather",
         "stablehlo.reduce_scatter": "reduce_scatter", "stablehlo.all_to_all": "all_to_all",
         "stablehlo.collective_permute": "collective_permute"}


@dataclass(frozen=True)
class BlockCollective:
    """A collective as the ring model needs it."""
    kind: str            # all_reduce, all_gather, reduce_scatter, all_to_all, collective_permute
    group_size: int
    block_bytes: int     # S: one device's operands


def block_rows(collectives: list[BlockCollective], first: int = 0) -> dict[str, list[tuple]]:
    """The collectives as rows of rules/collectives.dl, numbered from `first`:
    each a block of S bytes over one axis of its group's size."""
    rows: dict[str, list] = {"collective": [], "collective_tensor": [], "collective_dim": [],
                             "collective_axis": [], "collective_group_axis": [], "collective_all_to_all": []}
    for c, col in enumerate(collectives, first):
        rows["collective"].append((c, col.kind))
        rows["collective_tensor"].append((c, 1))
        rows["collective_dim"].append((c, 0, col.block_bytes))
        if col.kind == "all_reduce":
            rows["collective_group_axis"].append((c, 0, "group", 1, col.group_size))
        else:
            rows["collective_axis"].append((c, 0, 0, "group", 1, col.group_size))
        if col.kind == "all_to_all":
            rows["collective_all_to_all"].append((c, 0, 0))
    return rows


def ring_bytes(collectives: list[BlockCollective]) -> list[int]:
    """The bytes one device sends for each collective (one evaluation of
    rules/collectives.dl)."""
    from sdylog.partition.collective_costs import evaluate
    if not collectives:
        return []
    by_id = dict(evaluate(block_rows(collectives)).select("collective_bytes", "c", "bytes"))
    return [by_id[c] for c in range(len(collectives))]


def manual_collectives(module, filename: str = "-") -> list[tuple[dict, BlockCollective]]:
    """Every StableHLO collective inside a manual computation of `module`:
    its entry as module_collectives lists the sdy ones ({"kind", "axes",
    "location"}; "axes": the manual axes its groups run over when they are
    those of some axes, else the groups) and the block the ring model costs."""
    from sdylog.ir.shardings import Meshes
    meshes = Meshes(module)
    found = []
    for manual in walk_ops(module.operation):
        if manual.name != "sdy.manual_computation":
            continue
        mesh = _mesh_of(manual, meshes)
        for op in walk_ops(manual):
            if op.name in KINDS:
                groups = _replica_groups(op, meshes)
                block = BlockCollective(KINDS[op.name], len(groups[0]) if groups else 1,
                                        sum(_value_bytes(v) for v in op.operands))
                found.append(({"kind": block.kind, "axes": _axes_text(groups, mesh),
                               "location": format_location(op, filename)}, block))
    return found


def _value_bytes(value) -> int:
    t = ir.RankedTensorType(value.type)
    return int(np.prod(t.shape, dtype=np.int64)) * element_bytes(value)


def _replica_groups(op, meshes) -> list[list[int]]:
    from sdylog.partition.shards import replica_groups
    if op.name == "stablehlo.collective_permute":
        pairs = np.array(ir.DenseIntElementsAttr(op.attributes["source_target_pairs"])).reshape(-1, 2)
        return [[int(a), int(b)] for a, b in pairs if a != b] or [[0]]
    groups = replica_groups(op.attributes["replica_groups"], meshes.named)
    if groups is None:
        raise error_at(op, "replica groups name a mesh the module does not define")
    return groups


def _mesh_of(manual, meshes):
    from sdylog.model.sharding import sharding_per_value
    for key in ("in_shardings", "out_shardings"):
        for s in sharding_per_value(manual.attributes[key]):
            return meshes.named(s.mesh) if isinstance(s.mesh, str) else s.mesh
    return None


def _axes_text(groups: list[list[int]], mesh) -> str:
    """The mesh axes whose device groups these are (`{"x", "y"}`), or the groups."""
    from itertools import combinations

    from sdylog.model.axis import AxisRef
    from sdylog.partition.shards import device_groups
    if mesh is not None and groups:
        want = sorted(sorted(g) for g in groups)
        names = [a.name for a in mesh.axes]
        for k in range(1, len(names) + 1):
            for axes in combinations(names, k):
                if sorted(sorted(g) for g in device_groups([AxisRef(a) for a in axes], mesh)) == want:
                    return "{" + ", ".join(f'"{a}"' for a in axes) + "}"
    return str(groups)
