"""Shardy itself (inside jaxlib) as the test oracle for the import/export passes.

Tests only: product code never runs Shardy's passes.
"""
from __future__ import annotations

from sdylog.ir import parse_module, print_module
from sdylog.passes import PassContext, lookup
from sdylog.passes.pipelines import Step, run_steps


def shardy(text: str, *passes: str) -> str:
    """The module Shardy prints after running `passes` (textual pipeline elements
    such as "sdy-close-shardings" or "sdy-import-func-calls{...}")."""
    from jax._src.interpreters import mlir as jax_mlir
    from jaxlib.mlir import ir, passmanager

    with jax_mlir.make_ir_context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(text)
        for spec in passes:
            errors = []
            for pipeline in (f"builtin.module({spec})", f"builtin.module(func.func({spec}))"):
                try:
                    passmanager.PassManager.parse(pipeline).run(module.operation)
                    break
                except Exception as e:  # a pass is anchored on module or on func
                    errors.append(e)
            else:
                raise RuntimeError(f"Shardy's {spec} failed: {errors[0]}")
        return str(module)


def ours(text: str, *flags: str, options: dict | None = None) -> str:
    """Our module after running the passes named by `flags` (default options,
    updated with `options` for every pass that has them)."""
    module = parse_module(text, allow_unregistered=True)
    with module.context:
        ctx = PassContext()
        for flag in flags:
            info = lookup(flag)
            opts = dict(info.options)
            opts.update({k: v for k, v in (options or {}).items() if k in opts})
            info.load()(module, opts, ctx)
        return print_module(module)


def ours_steps(text: str, steps: list[Step]) -> str:
    module = parse_module(text, allow_unregistered=True)
    with module.context:
        run_steps(module, PassContext(), steps)
        return print_module(module)


def same_text(a: str, b: str) -> bool:
    return a.strip() == b.strip()
