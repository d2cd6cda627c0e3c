"""Shardy itself (inside jaxlib) as the test oracle: the rule it attaches to each op.

Tests only: product code never runs Shardy's passes.
"""
from __future__ import annotations

from sdylog.ir import parse_module
from sdylog.ir.walk import walk_ops
from sdylog.oprules import rule_for_op


def _rule_text(op) -> str | None:
    attrs = op.attributes
    return str(attrs["sdy.sharding_rule"]) if "sdy.sharding_rule" in attrs else None


def shardy_rules(text: str, conservative: bool = False) -> list[tuple[str, str | None]]:
    """(op name, printed rule or None) for every op, in walk order, as Shardy populates them."""
    from jax._src.interpreters import mlir as jax_mlir
    from jaxlib.mlir import ir, passmanager

    flag = "true" if conservative else "false"
    spec = f"sdy-populate-op-sharding-rules{{conservative-propagation={flag}}}"
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(text)
        errors = []
        for pipeline in (f"builtin.module({spec})", f"builtin.module(func.func({spec}))"):
            try:
                passmanager.PassManager.parse(pipeline).run(module.operation)
                break
            except Exception as e:  # the pass is anchored on one of the two
                errors.append(e)
        else:
            raise RuntimeError(f"Shardy's pass did not run: {errors}")
        return [(op.name, _rule_text(op)) for op in walk_ops(module.operation)]


def our_rules(text: str, conservative: bool = False) -> list[tuple[str, str | None]]:
    module = parse_module(text)
    with module.context:
        out = []
        for op in walk_ops(module.operation):
            rule = rule_for_op(op, conservative=conservative)
            out.append((op.name, str(rule.to_attr()) if rule is not None else None))
        return out
