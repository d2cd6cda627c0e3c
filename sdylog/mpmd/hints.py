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
    """Whether the module is an MPMD program: it places an op, a function,
    or an argument or result of one, on a device (a maximal sharding,
    `sdylog.device`), JAX's own placements of host callbacks aside (an SPMD
    program with a jax.debug.print has one)."""
    from sdylog.ir.walk import func_ops, walk_ops
    with module.context:
        meshes = Meshes(module)

        def device_of(sharding) -> bool:
            try:
                return sharding_device(meshes, sharding)[0] is not None
            except KeyError:   # (an unknown mesh: the run that follows says so, at its place)
                return False

        for fn in func_ops(module):
            fn = fn.operation
            for key in ("arg_attrs", "res_attrs"):
                for d in ir.ArrayAttr(fn.attributes[key]) if key in fn.attributes else ():
                    d = ir.DictAttr(d)
                    if ("sdy.sharding" in d and device_of(d["sdy.sharding"])
                            or "mhlo.sharding" in d and mhlo_devices(ir.StringAttr(d["mhlo.sharding"]).value)[0]):
                        return True
            for op in walk_ops(fn):
                if is_host_callback(op):   # (the function itself is walked: a per-device one has sdylog.device)
                    continue
                if op.name in ("sdy.sharding_constraint", "sdy.reshard"):
                    if device_of(op.attributes["sharding"]):
                        return True
                    continue
                try:
                    if op_devices(meshes, op):
                        return True
                except KeyError:
                    pass
    return False
