"""Reading device placements in the input: maximal shardings (sdy, by mesh
symbol or inlined; mhlo.sharding strings) and sdylog.device attributes."""
from __future__ import annotations

import re

from jaxlib.mlir import ir

from sdylog.ir.shardings import Meshes, mesh_or_ref, per_value

DEVICE_ATTR = "sdylog.device"
_MAXIMAL = re.compile(r"maximal\s+device\s*=\s*(\d+)")
_NON_MAXIMAL = re.compile(r"devices\s*=|manual|last_tile")


def mhlo_devices(text: str) -> tuple[list[int], bool]:
    """The devices an `mhlo.sharding` string names with `{maximal device=N}`
    (tuple forms list one per element), and whether it shards over devices
    (SPMD) instead."""
    return [int(d) for d in _MAXIMAL.findall(text)], bool(_NON_MAXIMAL.search(text))


def sharding_device(meshes: Meshes, sharding) -> tuple[int | None, str | None]:
    """(device, None) for a sharding on a maximal mesh, (None, mesh name) for
    one on a mesh with axes, (None, None) otherwise (an empty mesh); raises
    KeyError for an unknown mesh symbol."""
    mesh = meshes.of(sharding)
    if mesh is None:
        raise KeyError("unknown mesh")
    if mesh.is_maximal:
        return mesh.device_ids[0], None
    if mesh.axes:
        ref = mesh_or_ref(sharding)
        return None, ref.value if isinstance(ref, ir.FlatSymbolRefAttr) else str(ref)
    return None, None


def op_devices(meshes: Meshes, op) -> set[int]:
    """The devices an op's own attributes place it on (sdy.sharding of its
    results, mhlo.sharding, sdylog.device)."""
    attrs = op.attributes
    out = set()
    if "sdy.sharding" in attrs:
        for s in per_value(attrs["sdy.sharding"]):
            d, _ = sharding_device(meshes, s)
            if d is not None:
                out.add(d)
    if "mhlo.sharding" in attrs:
        out.update(mhlo_devices(ir.StringAttr(attrs["mhlo.sharding"]).value)[0])
    if DEVICE_ATTR in attrs:
        out.add(ir.IntegerAttr(attrs[DEVICE_ATTR]).value)
    return out


# The custom_call targets of JAX's host callbacks (jax.debug.print, jax.pure_callback,
# io_callback): JAX places each on device 0 (a maximal sharding) in any program, SPMD ones too.
HOST_CALLBACKS = frozenset({"xla_ffi_python_cpu_callback", "xla_ffi_python_gpu_callback",
                            "xla_ffi_partitioned_python_cpu_callback", "xla_python_cpu_callback",
                            "xla_python_gpu_callback"})


def is_host_callback(op) -> bool:
    return (op.name == "stablehlo.custom_call"
            and ir.StringAttr(op.attributes["call_target_name"]).value in HOST_CALLBACKS)


def places_on_devices(module) -> bool:
    """Whether the module is an MPMD program (rules/mpmd/kind.dl's
    mpmd_module): it places an op, a function, or an argument or result of
    one, on a device (a maximal sharding, `sdylog.device`), JAX's own
    placements of host callbacks aside (an SPMD program with a
    jax.debug.print has one)."""
    return placement_kind(module).size("mpmd_module") > 0


# What placement_kind evaluates (and keeps to be read): kind.dl's relations.
KIND_RELATIONS = ("mpmd_module", "user_op_placement", "user_func_placement")


def placement_kind(module):
    """The engine with rules/mpmd/kind.dl's relations (KIND_RELATIONS) on the
    placements of every function of the module as read (placement_facts):
    one evaluation of only the strata of rules/mpmd.dl they need, on rows
    for the placed ops and the signatures alone, whatever the size of the
    module."""
    from sdylog.datalog import make_engine
    from sdylog.datalog.memory_engine import merged_facts
    from sdylog.mpmd.driver import mpmd_program
    from sdylog.mpmd.facts import placement_facts
    with module.context:
        rows = placement_facts(module)
    program = mpmd_program()
    engine = make_engine(program)
    engine.load_all(merged_facts(program.relations, rows))
    engine.run(relations=list(KIND_RELATIONS))
    return engine
