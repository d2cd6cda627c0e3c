"""-sdy-propagate-to-func-results: each non-main function's result shardings
become the shardings of the values it returns (removed where those have
none). The main function is `main`, or the only function.

One departure from Shardy: a sharding on a maximal mesh (a value on one
device: JAX's host callback in a scan body's function) is not copied.
Shardy copies it, and its own insert-explicit-reshards then refuses the
function ("function result N cannot have a single-device (maximal)
sharding attribute", since 2026-08-18); jaxlib's older Shardy copies it
and XLA, which inlines calls, runs the op on its device and broadcasts
the result. Left without a sharding, the result is what the returned
value becomes after the op (insert-explicit-reshards brings a
single-device op's result to the global mesh's replicated sharding), and
the call's result is that value for every device, as XLA runs it."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.rewrite import as_operation
from sdylog.ir.shardings import Meshes, get_sharding, replace_func_shardings
from sdylog.ir.symbols import main_func
from sdylog.passes.census import PRESERVED, SHARDINGS_ONLY


def run(module: ir.Module, options: dict, ctx):
    changed = False
    with module.context:
        main = main_func(module, ctx.filename)
        meshes = Meshes(module)
        for func in [as_operation(op) for op in module.body.operations if op.operation.name == "func.func"]:
            if func == main or not func.regions[0].blocks:
                continue
            ret = as_operation(func.regions[0].blocks[0].operations[-1])
            if ret.name != "func.return":
                continue
            changed |= replace_func_shardings(func, [_off_device(get_sharding(v), meshes) for v in ret.operands],
                                              results=True)
    return SHARDINGS_ONLY if changed else PRESERVED


def _off_device(sharding, meshes: Meshes):
    """`sharding`, or None when it is on a maximal mesh (one device)."""
    mesh = None if sharding is None else meshes.of(sharding)
    return None if mesh is not None and mesh.is_maximal else sharding
