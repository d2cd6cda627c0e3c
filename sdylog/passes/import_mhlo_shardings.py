"""-sdy-import-mhlo-shardings: read a GSPMD module's `mhlo.sharding`
attributes into sdy meshes and shardings (sdylog's own import: what XLA's
`xla-sdy-import-shardings` and its round-trip import of `@Sharding` custom
calls do, as far as the forms go that sdylog/model/gspmd.py reads).

JAX lowers with `jax_use_shardy_partitioner=False` (and older JAX always) to
`mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"` strings
on function arguments and results, on `stablehlo.custom_call @Sharding` (a
`with_sharding_constraint`) and on other ops. The pass builds one mesh `@mesh`
with axes `axis_0`, `axis_1`, ... on which all of them are sdy shardings (plus
`@maximal_mesh_<d>` for each device a maximal sharding names), writes
`sdy.sharding` in their place (closed: a GSPMD sharding is complete), and
turns each `@Sharding` custom call into an `sdy.sharding_constraint` (its
`unspecified_dims=[...]` open).

A sharding in a form it cannot read gets a warning naming the form, and
stays as it was: propagation then treats that value as unannotated. The
custom calls of shard_map's GSPMD form (`@SPMDFullToShardShape`,
`@SPMDShardToFullShape`) get one warning each and are left alone.
"""
from __future__ import annotations

import re

from jaxlib.mlir import ir

from sdylog.ir.rewrite import as_operation, create_op, emit_note, emit_warning
from sdylog.ir.shardings import SHARDING, _FuncAttrs, set_op_shardings
from sdylog.ir.symbols import SymbolTable
from sdylog.ir.types import rank_of
from sdylog.ir.walk import func_ops, op_list
from sdylog.model.gspmd import (Maximal, Tiled, UnreadableSharding, maximal_mesh_name, mesh_for, parse_gspmd,
                                to_sdy)
from sdylog.model.mesh import Mesh
from sdylog.passes.census import PRESERVED

MHLO_SHARDING = "mhlo.sharding"
_SHARD_MAP_CALLS = ("SPMDFullToShardShape", "SPMDShardToFullShape")
_UNSPECIFIED = re.compile(r"unspecified_dims=\[([\d,\s]*)\]")


class _Site:
    """Where one `mhlo.sharding` string sits: a function argument or result,
    or an op; `set` writes the sdy shardings in its place."""

    def __init__(self, text: str, ranks: list[int], loc, set_fn, what: str, op=None):
        self.text, self.ranks, self.loc, self.set, self.what, self.op = text, ranks, loc, set_fn, what, op
        self.leaves = None        # parsed shardings, one per value (None: unreadable)


def has_mhlo_shardings(module: ir.Module) -> bool:
    """Some function argument, result or op carries an `mhlo.sharding`."""
    return bool(_sites(module, collect=False))


def _sites(module: ir.Module, collect: bool = True) -> list[_Site]:
    sites: list[_Site] = []
    for fn in func_ops(module):
        fn = as_operation(fn)
        body = fn.regions[0].blocks[0] if len(fn.regions[0].blocks) else None
        for key in ("arg_attrs", "res_attrs"):
            attrs = _FuncAttrs(fn, key)
            for i, text in enumerate(attrs.all_of(MHLO_SHARDING)):
                if text is None:
                    continue
                if not collect:
                    return [None]
                is_arg = key == "arg_attrs"
                loc = body.arguments[i].location if is_arg and body is not None else fn.location
                ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
                rank = rank_of((ftype.inputs if is_arg else ftype.results)[i])
                sites.append(_Site(ir.StringAttr(text).value, [rank], loc, _func_setter(attrs, i),
                                   f"{'argument' if is_arg else 'result'} {i} of @{_sym(fn)}"))
        for op in op_list(fn)[1:]:
            if MHLO_SHARDING not in op.attributes:
                continue
            if not collect:
                return [None]
            sites.append(_Site(ir.StringAttr(op.attributes[MHLO_SHARDING]).value,
                               [rank_of(r.type) for r in op.results] or [0], op.location,
                               _op_setter(op), op.name, op))
    return sites


def _sym(fn) -> str:
    return ir.StringAttr(fn.attributes["sym_name"]).value


def _func_setter(attrs, index: int):
    def set_fn(shardings):
        attrs.set(index, SHARDING, shardings[0])
        attrs.set(index, MHLO_SHARDING, None)
        attrs.write()
    return set_fn


def _op_setter(op):
    def set_fn(shardings):
        del op.attributes[MHLO_SHARDING]
        if op.name == "stablehlo.custom_call" and _target(op) == "Sharding":
            _to_sharding_constraint(op, shardings[0])
        elif len(op.results):
            set_op_shardings(op, shardings)
        else:   # an op without results (e.g. an outfeed): its operand's sharding, as Shardy keeps it
            set_op_shardings(op, shardings[:1])
    return set_fn


def _target(op) -> str:
    return ir.StringAttr(op.attributes["call_target_name"]).value


def _unspecified_dims(op) -> frozenset[int]:
    """A `@Sharding` custom call's `backend_config = "unspecified_dims=[1]"`:
    the dims `with_sharding_constraint` left to propagation (P.UNCONSTRAINED)."""
    if op is None or op.name != "stablehlo.custom_call" or "backend_config" not in op.attributes:
        return frozenset()
    config = op.attributes["backend_config"]
    if not isinstance(config, ir.StringAttr):
        return frozenset()
    m = _UNSPECIFIED.search(config.value)
    return frozenset(int(x) for x in m[1].replace(" ", "").split(",") if x) if m else frozenset()


def _to_sharding_constraint(op, sharding) -> None:
    new = create_op("sdy.sharding_constraint", results=[op.results[0].type], operands=[op.operands[0]],
                    attributes={"sharding": sharding}, loc=op.location, ip=ir.InsertionPoint(op))
    op.results[0].replace_all_uses_with(new.results[0])
    op.erase()


def run(module: ir.Module, options: dict, ctx):
    filename = getattr(ctx, "filename", None)
    with module.context:
        _warn_shard_map(module, filename)
        sites = _sites(module)
        if not sites:
            return PRESERVED
        tiled: list[Tiled] = []
        maximal: set[int] = set()
        for site in sites:
            try:
                site.leaves = parse_gspmd(site.text)
            except UnreadableSharding as e:
                if not _is_shard_map_call(site):
                    emit_warning(site.loc, f"{e.form}: the sharding \"{site.text}\" of {site.what} is not "
                                 "read (propagation treats the value as unannotated)", filename)
                continue
            if len(site.leaves) != len(site.ranks):
                emit_warning(site.loc, f"the sharding \"{site.text}\" of {site.what} has {len(site.leaves)} "
                             f"parts for {len(site.ranks)} values: not read", filename)
                site.leaves = None
                continue
            for leaf, rank in zip(site.leaves, site.ranks):
                if isinstance(leaf, Tiled):
                    if leaf.rank != rank:
                        emit_warning(site.loc, f"the sharding \"{site.text}\" of {site.what} tiles "
                                     f"{leaf.rank} dimensions of a tensor of rank {rank}: not read", filename)
                        site.leaves = None
                        break
                    tiled.append(leaf)
                elif isinstance(leaf, Maximal):
                    maximal.add(leaf.device)
        gmesh, rejected = mesh_for(tiled)
        for site in sites:
            bad = [rejected[leaf] for leaf in site.leaves or () if leaf in rejected]
            if bad:
                emit_warning(site.loc, f"the sharding \"{site.text}\" of {site.what} is not read: {bad[0]}",
                             filename)
                site.leaves = None
        readable = [s for s in sites if s.leaves is not None]
        if not readable:
            return PRESERVED
        symbols = SymbolTable(module)
        mesh = gmesh.mesh if gmesh is not None else Mesh()
        # (each goes before the module's first op: the maximal meshes first, so
        # that @mesh ends up first, then the maximal ones in device order)
        for device in sorted(maximal, reverse=True):
            _add_mesh(module, symbols, maximal_mesh_name(device), Mesh((), (device,)))
        mesh_name = _add_mesh(module, symbols, "mesh", mesh)
        for site in readable:
            open_dims = _unspecified_dims(site.op)
            site.set([to_sdy(leaf, gmesh, mesh_name, rank, open_dims).to_attr()
                      for leaf, rank in zip(site.leaves, site.ranks)])
        emit_note(module.operation.location,
                  f"the module has no sdy.mesh: read {len(readable)} of {len(sites)} mhlo.sharding attributes "
                  f"(GSPMD) into @{mesh_name} = {str(mesh)[4:]}", filename)
    return None


def _is_shard_map_call(site: _Site) -> bool:
    """A custom call of shard_map's GSPMD form (warned about on its own)."""
    op = site.op
    if op is None or op.name != "stablehlo.custom_call":
        return False
    return _target(op) in _SHARD_MAP_CALLS or (_target(op) == "Sharding" and site.text.strip() == "{manual}")


def _warn_shard_map(module: ir.Module, filename) -> None:
    """One warning per shard_map custom call (GSPMD's manual form)."""
    for fn in func_ops(module):
        for op in op_list(fn):
            if op.name == "stablehlo.custom_call" and _target(op) in _SHARD_MAP_CALLS:
                emit_warning(op.location, f"shard_map in GSPMD form (custom_call @{_target(op)}) is not read: "
                             "propagation does not go through it", filename)


def _add_mesh(module: ir.Module, symbols: SymbolTable, base: str, mesh: Mesh) -> str:
    """An `sdy.mesh` before the module's first op, named `base` or, when taken, `base_N`."""
    first = next(iter(module.body.operations), None)
    ip = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(module.body)
    op = create_op("sdy.mesh", attributes={"sym_name": ir.StringAttr.get(base), "mesh": mesh.to_attr()},
                   loc=module.operation.location, ip=ip)
    return symbols.insert(op)
