"""Module-level symbols: a symbol table that names clones as MLIR does, symbol
DCE, and the call graph orders Shardy walks functions and calls in.

We keep our own table instead of `ir.SymbolTable`: inserting a detached op
through the binding's table leaves the op owned by Python (it is freed twice).
"""
from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.ir.diagnostics import error_at
from sdylog.ir.rewrite import as_operation
from sdylog.ir.walk import walk_ops

SYM_NAME = "sym_name"
ORIGINAL_FUNC_NAME = "sdy.original_func_name"


def symbol_name_of(op) -> str | None:
    op = as_operation(op)
    if SYM_NAME not in op.attributes:
        return None
    return ir.StringAttr(op.attributes[SYM_NAME]).value


class SymbolTable:
    """The symbols directly in a module, with MLIR's renaming on insert: a taken
    name gets `_N` appended, N from one counter shared by all inserts."""

    def __init__(self, module: ir.Module):
        self.module = module
        self.ops: dict[str, ir.Operation] = {}
        for op in module.body.operations:
            name = symbol_name_of(op)
            if name is not None:
                self.ops[name] = as_operation(op)
        self._counter = 0

    def lookup(self, name: str) -> ir.Operation | None:
        return self.ops.get(name)

    def __contains__(self, name: str) -> bool:
        return name in self.ops

    def append_clone(self, op) -> ir.Operation:
        """A deep copy of `op` at the end of the module, not yet in the table;
        `insert_at_end` it once its body is final. (Shardy clones detached ops;
        the bindings need the copy attached to keep ownership straight.)"""
        return as_operation(op).clone(ip=ir.InsertionPoint(self.module.body))

    def insert_at_end(self, op) -> str:
        """Move `op` to the end of the module and `insert` it: what MLIR's
        SymbolTable::insert does with a detached op."""
        op = as_operation(op)
        last = as_operation(self.module.body.operations[-1])
        if last != op:
            op.move_after(last)
        return self.insert(op)

    def insert(self, op) -> str:
        """Register `op` (already in the module body) under a unique name: its own
        if free, else `name_N`. Returns the name it got."""
        op = as_operation(op)
        name = symbol_name_of(op)
        if self.ops.get(name, op) == op:
            self.ops[name] = op
            return name
        while True:
            candidate = f"{name}_{self._counter}"
            self._counter += 1
            if candidate not in self.ops:
                break
        op.attributes[SYM_NAME] = ir.StringAttr.get(candidate)
        self.ops[candidate] = op
        return candidate

    def erase(self, op) -> None:
        op = as_operation(op)
        name = symbol_name_of(op)
        if name is not None and self.ops.get(name) == op:
            del self.ops[name]
        op.erase()


# --- symbol references ---------------------------------------------------------
def _refs_in_attr(attr) -> Iterator[str]:
    if isinstance(attr, ir.FlatSymbolRefAttr):
        yield attr.value
    elif isinstance(attr, ir.SymbolRefAttr):
        yield str(attr).split("::")[0].lstrip("@").strip('"')
    elif isinstance(attr, ir.ArrayAttr):
        for a in attr:
            yield from refs_in_attr(a)
    elif isinstance(attr, ir.DictAttr):
        for named in attr:
            yield from _refs_in_attr(named.attr)
    elif type(attr) is ir.Attribute:   # (a dialect's attribute: the bindings give builtin ones their class)
        # MLIR finds references inside every attribute (its sub-elements walk,
        # which the bindings do not offer): sdy's shardings name their mesh, so
        # a private sdy.mesh that only shardings use is live.
        if sdy.TensorShardingAttr.isinstance(attr):
            yield from _refs_in_attr(sdy.TensorShardingAttr(attr).mesh_or_ref)
        elif sdy.TensorShardingPerValueAttr.isinstance(attr):
            for sharding in sdy.TensorShardingPerValueAttr(attr).shardings:
                yield from _refs_in_attr(sharding)


# The names each attribute references are kept (at most _KEPT attributes):
# attributes are uniqued per context, and the ops of a module, and of every
# run of a process, repeat the same few (shardings, function types,
# precisions, dimension numbers). The kept function's __wrapped__ looks.
_KEPT = 4096


@lru_cache(maxsize=_KEPT)
def refs_in_attr(attr) -> tuple[str, ...]:
    """Root names of the symbols `attr` references (see _refs_in_attr)."""
    return tuple(_refs_in_attr(attr))


def symbol_refs(op) -> Iterator[str]:
    """Root names of the symbols referenced by `op` and the ops nested in it
    (through builtin attributes: func.call callees, custom_call
    called_computations, composite decompositions; and sdy shardings' meshes)."""
    for inner in walk_ops(op):
        for attr in inner.attributes.values():
            yield from refs_in_attr(attr)


def symbol_dce(module: ir.Module, calls=None) -> int:
    """MLIR's `symbol-dce` on a top-level module: erase private symbols that
    no live op references (transitively from the non-private symbols and the
    non-symbol ops). Returns how many it erased.

    `calls()`: the module's `func.call` ops, when the caller has them
    without a walk (a census; asked only when there are private symbols).
    If the calls alone keep every private symbol live,
    none is dead: the references are not looked for (calls are some of the
    references, and more references keep more alive). This spares reading
    every attribute of every op on each of the pipeline's five symbol-dce
    steps, most of which erase nothing."""
    private = {}   # name -> op
    roots = []     # the non-private symbols and the non-symbol ops
    for op in module.body.operations:
        op = as_operation(op)
        name = symbol_name_of(op)
        if name is not None and _is_private(op):
            private[name] = op
        else:
            roots.append(op)
    if not private:
        return 0  # nothing to erase, no reference to follow
    if calls is not None and len(_live(private, roots, _callees_by_top(module, calls()))) == len(private):
        return 0
    live = _live(private, roots, symbol_refs)
    dead = [op for name, op in private.items() if name not in live]
    for op in dead:
        op.erase()
    return len(dead)


def _live(private: dict, roots: list, refs) -> set[str]:
    """The names of the `private` symbols reached from the ops `roots`
    through refs(op) (names referenced by op)."""
    live, worklist = set(), list(roots)
    while worklist:
        for ref in refs(worklist.pop()):
            target = private.get(ref)
            if target is not None and ref not in live:
                live.add(ref)
                worklist.append(target)
    return live


def _callees_by_top(module: ir.Module, calls: list):
    """refs(top) of the calls alone: the callees of the calls nested in a
    top-level op, by its symbol name (each call's top-level ancestor found
    through its parents). The non-symbol ops share the key None: all are
    roots, so the callees of each count for all."""
    callees: dict = {}
    for call in calls:
        callees.setdefault(symbol_name_of(top_level_op(module, call)), []).append(callee_name(call))
    return lambda op: callees.get(symbol_name_of(op), ())


def top_level_op(module: ir.Module, op) -> ir.Operation:
    """The op of the module's body that `op` is (or is nested in), found
    through its parents."""
    body = module.operation
    top = as_operation(op)
    while (parent := as_operation(top.parent)) != body:
        top = parent
    return top


def _is_private(op) -> bool:
    vis = op.attributes["sym_visibility"] if "sym_visibility" in op.attributes else None
    return vis is not None and ir.StringAttr(vis).value == "private"


# --- call graph ------------------------------------------------------------------
def _func_ops(module: ir.Module) -> list[ir.Operation]:
    return [as_operation(op) for op in module.body.operations if op.operation.name == "func.func"]


def _has_body(func) -> bool:
    return len(func.regions[0].blocks) > 0


def _calls_in(func) -> list[ir.Operation]:
    return [op for op in walk_ops(func) if op.name == "func.call"]


def callee_name(call) -> str:
    return ir.FlatSymbolRefAttr(as_operation(call).attributes["callee"]).value


def funcs_in_call_graph_post_order(module: ir.Module, has_calls: bool = True,
                                   calls_in=None) -> list[ir.Operation]:
    """Functions with a body in post order of MLIR's CallGraph (callees before
    callers): a depth-first search from the external caller node, whose
    children are all functions in module order; a function's children are its
    callees in the order of their first call. `has_calls=False` (the caller
    knows the module has no func.call) spares looking for calls; `calls_in(f)`,
    if given, lists the calls in a function instead of a walk (e.g. a
    census' Census.calls_in)."""
    return _call_graph_search(module, has_calls, calls_in=calls_in)


def _call_graph_search(module: ir.Module, has_calls: bool = True, on_cycle=None,
                       calls_in=None) -> list[ir.Operation]:
    """funcs_in_call_graph_post_order's search; `on_cycle(call, names)` is
    called at a call to a function still being visited (`names`: the cycle,
    `@a -> @b -> @a`)."""
    calls_in = calls_in or _calls_in
    funcs = [f for f in _func_ops(module) if _has_body(f)]
    by_name = {symbol_name_of(f): f for f in funcs}
    visited: set = set()
    order: list[ir.Operation] = []

    def children(f):
        """(callee, its first call) in the order of first calls."""
        if not has_calls:
            return []
        first: dict = {}
        for call in calls_in(f):
            callee = by_name.get(callee_name(call))
            if callee is not None:
                first.setdefault(callee, call)
        return list(first.items())

    for root in funcs:
        if root in visited:
            continue
        visited.add(root)
        stack = [(root, iter(children(root)))]
        while stack:
            node, it = stack[-1]
            child, call = next(it, (None, None))
            if child is None:
                stack.pop()
                order.append(node)
            elif child not in visited:
                visited.add(child)
                stack.append((child, iter(children(child))))
            elif on_cycle is not None and any(child is n for n, _ in stack):
                path = [symbol_name_of(n) for n, _ in stack]
                names = path[path.index(symbol_name_of(child)):] + [symbol_name_of(child)]
                on_cycle(call, " -> ".join(f"@{n}" for n in names))
    return order


def funcs_in_call_graph_pre_order(module: ir.Module, has_calls: bool = True) -> list[ir.Operation]:
    """Reverse of the post order: callers before callees."""
    return list(reversed(funcs_in_call_graph_post_order(module, has_calls)))


def check_no_recursion(module: ir.Module, filename: str | None = None, calls_in=None) -> list[ir.Operation]:
    """An error at the first call (call-graph order) that closes a cycle of
    calls: the passes that inline or clone callees (Shardy's too) assume the
    call graph is acyclic, and would clone forever. `calls_in`: as
    funcs_in_call_graph_post_order's. Returns what that function would (the
    same search)."""
    def fail(call, cycle: str):
        raise error_at(call, f"recursive call ({cycle}): the call graph must be acyclic", filename)
    return _call_graph_search(module, on_cycle=fail, calls_in=calls_in)


def calls_in_call_graph_post_order(module: ir.Module, calls_in=None, filename: str | None = None
                                   ) -> list[ir.Operation]:
    """Every func.call, function by function in call-graph post order, in
    program order within a function. (Collected up front: passes that rewrite
    calls change the bodies they walk.) `calls_in`: as funcs_in_call_graph_post_order's.
    `filename` (the input's name), if given: check_no_recursion's error, located
    in it, if any, first (None: no check)."""
    calls_in = calls_in or _calls_in
    funcs = (funcs_in_call_graph_post_order(module, calls_in=calls_in) if filename is None
             else check_no_recursion(module, filename, calls_in))
    return [call for f in funcs for call in calls_in(f)]


def lookup_func(symbols: SymbolTable, name: str, user, filename: str | None = None) -> ir.Operation:
    """The `func.func` named `name`, or an error at `user` (Shardy dies here)."""
    op = symbols.lookup(name)
    if op is None or op.name != "func.func":
        raise error_at(user, f"Failed to lookup function: {name}", filename)
    return op


def callee_of(symbols: SymbolTable, call, filename: str | None = None) -> ir.Operation:
    """The `func.func` a call calls, or an error at the call."""
    return lookup_func(symbols, callee_name(call), call, filename)


def main_func(module: ir.Module, filename: str | None = None) -> ir.Operation:
    """The module's only function if it has one, else `@main` (Shardy's
    getMainFuncOrDie with useSingleFunc)."""
    funcs = _func_ops(module)
    if len(funcs) == 1:
        return funcs[0]
    for f in funcs:
        if symbol_name_of(f) == "main":
            return f
    raise error_at(module.operation, "Failed to lookup function: main", filename)


def original_func_name(func) -> str:
    func = as_operation(func)
    if ORIGINAL_FUNC_NAME in func.attributes:
        return ir.StringAttr(func.attributes[ORIGINAL_FUNC_NAME]).value
    return symbol_name_of(func)


def clone_func_recursively(func, symbols: SymbolTable) -> ir.Operation:
    """Shardy's cloneFuncRecursively: a copy of `func` marked with its original
    name, whose calls go to fresh copies of their callees (inserted first).
    The copy is at the end of the module; the caller registers it."""
    clone = symbols.append_clone(func)
    clone.attributes[ORIGINAL_FUNC_NAME] = ir.StringAttr.get(original_func_name(func))
    for call in [op for op in walk_ops(clone) if op.name == "func.call"]:
        callee = callee_of(symbols, call)
        sub = clone_func_recursively(callee, symbols)
        call.attributes["callee"] = ir.FlatSymbolRefAttr.get(symbols.insert_at_end(sub))
    return clone
