"""Before placement: the entry function with every call and named
computation inlined. Each inlined op keeps the names of the functions and
named computations it came from, innermost first, in the attribute
`sdylog.scope` (what `--assign NAME@DEV` matches, as Shardy MPMD assigns
named computations: the innermost one assigned wins), and the ops at the top
of what a placed call or named computation inlines record its placement,
innermost first, in `sdylog.calls` ([kind, name, device] each: the call is
erased, so its placement is written on what replaces it; rules/mpmd/placement.dl
decides from them, call_hint); the emitter drops both."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.diagnostics import SdylogError, error_at
from sdylog.ir.rewrite import as_operation, post_order_ops
from sdylog.ir.shardings import Meshes
from sdylog.ir.symbols import (SymbolTable, calls_in_call_graph_post_order, callee_of, original_func_name,
                               symbol_dce, symbol_name_of)
from sdylog.ir.walk import func_ops, walk_ops
from sdylog.mpmd.hints import op_devices

SCOPE = "sdylog.scope"
CALLS = "sdylog.calls"


def prepare(module: ir.Module, filename: str, entry: str | None = None) -> str:
    """Inline in place; returns the name of the entry function."""
    with module.context:
        inliner = _Inliner(Meshes(module), filename)
        for nc in [op for op in post_order_ops(module.operation) if op.name == "sdy.named_computation"]:
            inliner.inline(nc, nc.regions[0].blocks[0], ir.StringAttr(nc.attributes["name"]).value)
        symbols = SymbolTable(module)
        for call in calls_in_call_graph_post_order(module):
            callee = callee_of(symbols, call, filename)
            if not len(callee.regions[0].blocks):
                raise error_at(call, f"cannot inline @{symbol_name_of(callee)}: it has no body", filename)
            copy = symbols.append_clone(callee)
            inliner.inline(call, copy.regions[0].blocks[0], original_func_name(callee))
            copy.erase()
        name = entry_name(module, entry, filename)
        fn = symbols.lookup(name)
        for op in walk_ops(fn):
            if op.name == "func.call":
                raise error_at(op, "a recursive call cannot be partitioned", filename)
        symbol_dce(module)
    return name


def entry_name(module: ir.Module, entry: str | None, filename: str) -> str:
    """`entry`, else @main, else the only public function."""
    funcs = [as_operation(f) for f in func_ops(module)]
    names = [symbol_name_of(f) for f in funcs]
    if entry is not None:
        if entry not in names:
            raise SdylogError(f"no function @{entry} in {filename}")
        return entry
    if "main" in names:
        return "main"
    public = [symbol_name_of(f) for f in funcs if "sym_visibility" not in f.attributes
              or ir.StringAttr(f.attributes["sym_visibility"]).value == "public"]
    if len(public) == 1:
        return public[0]
    raise SdylogError(f"{filename} has no @main and {len(public)} public functions: name the one to "
                      "partition with --entry")


class _Inliner:
    def __init__(self, meshes: Meshes, filename: str):
        self.meshes = meshes
        self.filename = filename

    def inline(self, op, block: ir.Block, scope: str) -> None:
        """Replace `op` (a call or named computation) by the ops of `block`:
        its arguments are op's operands, its terminator's operands op's results."""
        placed = op_devices(self.meshes, op)
        if len(placed) > 1:   # (checked here: the op is erased below; rules/mpmd/checks.dl checks the others)
            raise error_at(op, f"'{op.name}' has results placed on two devices ({', '.join(map(str, sorted(placed)))})",
                           self.filename)
        for arg, operand in zip(block.arguments, op.operands, strict=True):
            arg.replace_all_uses_with(operand)
        name = ir.StringAttr.get(scope)
        # op's placement, then the placements op itself came with (a call inside a named computation)
        calls = [ir.ArrayAttr.get([ir.StringAttr.get(op.name), name,
                                   ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d)]) for d in placed]
        calls += list(ir.ArrayAttr(op.attributes[CALLS])) if CALLS in op.attributes else []
        body = [as_operation(o) for o in block.operations]
        terminator = body.pop()
        for inner in body:
            for nested in walk_ops(inner):
                inner_scopes = list(ir.ArrayAttr(nested.attributes[SCOPE])) if SCOPE in nested.attributes else []
                nested.attributes[SCOPE] = ir.ArrayAttr.get(inner_scopes + [name])
            if calls:
                inner_calls = list(ir.ArrayAttr(inner.attributes[CALLS])) if CALLS in inner.attributes else []
                inner.attributes[CALLS] = ir.ArrayAttr.get(inner_calls + calls)
            inner.move_before(op)
        for result, value in zip(op.results, terminator.operands, strict=True):
            result.replace_all_uses_with(value)
        op.erase()
