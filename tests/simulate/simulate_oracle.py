"""Test oracle: the StableHLO reference interpreter inside jaxlib (eval_module).

`run_both(text, inputs)` runs @main of `text` with sdylog's executor and with
the reference interpreter on the same inputs and returns both results. Only
tests use this; sdylog never calls the reference interpreter.
"""
from __future__ import annotations

import numpy as np


def reference(text: str, inputs) -> list[np.ndarray]:
    return reference_timed(text, inputs)[0]


def reference_timed(text: str, inputs) -> tuple[list[np.ndarray], float]:
    """The reference interpreter's results, and the seconds its run took."""
    import time

    from jax._src.interpreters import mlir as jmlir
    from jaxlib.mlir import ir
    from jaxlib.mlir._mlir_libs import _stablehlo
    ctx = jmlir.make_ir_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(text)
        main = next(op for op in module.body.operations if op.operation.name == "func.func"
                    and ir.StringAttr(op.attributes["sym_name"]).value == "main")
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        args = [_attr(np.asarray(x), t) for x, t in zip(inputs, ftype.inputs)]
        t0 = time.perf_counter()
        outs = _stablehlo.eval_module(module, args)
        seconds = time.perf_counter() - t0
        return [np.array(o) for o in outs], seconds


def _attr(x, t):
    from jaxlib.mlir import ir
    import ml_dtypes
    if x.dtype == ml_dtypes.bfloat16:
        x = x.view(np.uint16)
    return ir.DenseElementsAttr.get(np.ascontiguousarray(x), type=t)


def mine(text: str, inputs) -> list[np.ndarray]:
    from sdylog.ir import parse_module
    from sdylog.simulate.program import Program
    module = parse_module(text)
    with module.context:
        return [np.asarray(r) for r in Program(module, "test.mlir").run("main", list(inputs))]


def assert_same(got, want, rtol=1e-5, atol=1e-6):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g.astype(w.dtype), w, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g.astype(w.dtype), w)


def check(text: str, inputs, rtol=1e-5, atol=1e-6):
    assert_same(mine(text, inputs), reference(text, inputs), rtol, atol)
