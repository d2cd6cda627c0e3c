"""The input module's values by name: as MLIR prints them (`%0`, `%arg0`,
`%cst_1`, `%0#1`, `@main:result0`) and as JAX names them (an argument's
`loc("x")` or `loc("params['w1']")`, a result's `jax.result_info`,
`result['out']`), and where the import passes left each of them.

Names are those of the input as MLIR prints it: the names of a file MLIR or
JAX printed. Names an author chose in a hand-written file (`%x`) are not
kept by MLIR's parser.
"""
from __future__ import annotations

import copy
import re
from collections import defaultdict
from dataclasses import dataclass

from jaxlib.mlir import ir

from sdylog.ir.diagnostics import SdylogError
from sdylog.ir.locations import NameLoc, op_where_text, parse_location
from sdylog.ir.rewrite import as_operation
from sdylog.ir.walk import symbol_name

RESULT_INFO = "jax.result_info"


@dataclass
class InputValue:
    """A value of the input module, named as MLIR prints it."""
    func: str
    name: str            # "%0", "%arg1", "%0#1"
    handle: object       # the ir.Value (compared by identity only once passes ran)
    type: object         # its ir.Type (types are unique in a context: compared and hashed without printing)
    key: tuple           # how to find its copies after import: (kind, location (_loc_key), index, type)
    where: str           # "stablehlo.add at f.mlir:3:8"
    annotated: bool = False     # the input gives it a sharding (else one the import added is not the user's)
    jax_name: str | None = None  # a main argument's name in JAX's signature (`x`, `params['w1']`)
    op: str | None = None       # the op whose result it is (None for a block argument)
    source: str = "?"           # its location: `m.py:7:20 (jit(f)/dot_general)` (loc_text)


def input_values(module, filename: str, describe: bool = True) -> list[InputValue]:
    """Every value of every function of the freshly parsed module; without
    `describe`, only what names and finds them (no `where`, `source`,
    `annotated`: half the work, for naming ids)."""
    from sdylog.ir.shardings import get_sharding
    from sdylog.ir.walk import func_ops, walk_ops
    out, calls = [], {}   # (calls: op_where_text's, on this module)
    with module.context:
        state = ir.AsmState(module.operation)
        main = main_name(module)
        for fn in func_ops(module):
            func = symbol_name(fn)
            if not len(fn.regions[0].blocks):
                continue
            for i, arg in enumerate(fn.regions[0].blocks[0].arguments):
                src = loc_text(arg, filename, calls) if describe else "?"
                jax_name = arg_jax_name(arg) if func == main else None
                at = f" at {src}" if src not in ("?", jax_name) else ""   # (JAX's `loc("x")` is only a name)
                out.append(InputValue(func, arg.get_name(state), arg, arg.type, ("farg", func, i),
                                      f"argument {i} of @{func}{at}", jax_name=jax_name, source=src))
            for op in walk_ops(fn.operation):
                if op == fn.operation:
                    continue
                key = _loc_key(op)
                loc = op_where_text(op, filename, calls) if describe else "?"
                for r, region in enumerate(op.regions):
                    for block in region.blocks:
                        for i, arg in enumerate(block.arguments):
                            src = loc_text(arg, filename, calls) if describe else "?"
                            t = arg.type
                            out.append(InputValue(func, arg.get_name(state), arg, t, ("barg", key, r, i, t),
                                                  f"block argument {i} of {op.name} at {src}", source=src))
                name = op.name
                kind = _IMPORTED_KIND.get(name, name)
                for i, res in enumerate(op.results):
                    t = res.type
                    out.append(InputValue(func, res.get_name(state), res, t, ("res", kind, key, i, t),
                                          f"{name} at {loc}", op=name, source=loc))
        if describe:
            for iv in out:
                iv.annotated = get_sharding(iv.handle) is not None
    return out


def display_name(iv: InputValue, main: str | None) -> str:
    """How the API, query and the --db file name an input value: its JAX
    name, else `%3` in the entry function, `@f:%3` in another."""
    return iv.jax_name or (iv.name if iv.func == main else f"@{iv.func}:{iv.name}")


def loc_text(op, filename: str, calls: dict | None = None) -> str:
    """`file:line:col (jit(f)/dot_general)` of an op or block argument: its
    source position and JAX's name, what there is of them ("?" for neither);
    one without a file location has its nearest enclosing op's place
    (sdylog.ir.locations.op_where_text, `calls` as there)."""
    return op_where_text(op, filename, calls)


# the key of an unknown location (a text, not None: an attribute cannot be compared with None);
# _loc_key returns this very object, so match_values tests a key for it by identity
UNKNOWN_LOC = "loc(unknown)"


def _loc_key(op) -> ir.Attribute | str:
    """What tells copies of an op apart: its whole location (UNKNOWN_LOC
    when unknown), as the attribute its context holds once for each location
    (equal locations: the same attribute; no text made, a fifth of the time)."""
    loc = op.location
    return UNKNOWN_LOC if isinstance(loc, ir.UnknownLoc) else loc.attr


def arg_jax_name(arg) -> str | None:
    """`x` of an argument located `loc("x")` (JAX's debug info names them so)."""
    loc = parse_location(str(arg.location))
    return loc.name if isinstance(loc, NameLoc) and loc.child is None else None


def main_name(module) -> str | None:
    """The entry function: `main`, or the only function."""
    from sdylog.ir.walk import func_ops
    names = [symbol_name(fn) for fn in func_ops(module)]
    if "main" in names:
        return "main"
    return names[0] if len(names) == 1 else None


def result_jax_names(module) -> list[str | None]:
    """`jax.result_info` of each result of the entry function (`result`,
    `result[1]`, `result['out']`)."""
    from sdylog.ir.shardings import _FuncAttrs
    from sdylog.ir.walk import func_ops
    main = main_name(module)
    with module.context:
        for fn in func_ops(module):
            if symbol_name(fn) == main:
                infos = _FuncAttrs(fn, "res_attrs").all_of(RESULT_INFO)
                return [ir.StringAttr(a).value if a is not None else None for a in infos]
    return []


def op_name(op) -> str:
    """The op's MLIR name (an OpView's `.name` may be its symbol name)."""
    return as_operation(op).name


# ---------------------------------------------------------------- naming a value
@dataclass(frozen=True)
class ValueSpec:
    func: str | None     # None: the main (or only) function
    name: str | None     # "%0", or None for a function result
    result: int | None = None


_SPEC = re.compile(r"^(?:@(?P<func>[\w.$-]+):)?(?:(?P<name>%[\w$.#-]+)|arg(?P<arg>\d+)|result(?P<res>\d+))$")


def parse_spec(text: str) -> ValueSpec:
    m = _SPEC.match(text.strip())
    if not m or (m["func"] is None and m["name"] is None):
        raise SdylogError(f"cannot read the value '{text}': write %name, @func:%name, @func:argN or @func:resultN, "
                          "or a JAX name (an argument's, a result's)")
    if m["arg"] is not None:
        return ValueSpec(m["func"], f"%arg{m['arg']}")
    if m["res"] is not None:
        return ValueSpec(m["func"], None, int(m["res"]))
    return ValueSpec(m["func"], m["name"])


def name_ranges(names) -> str:
    """`%arg0..%arg3, %0..%41, %cst, %cst_0..%cst_2`: names with a numeric
    suffix collapsed into runs, in first-seen order."""
    groups: dict[str, list] = {}
    for n in names:
        m = re.match(r"^(.*?)(\d+)$", n)
        prefix, num = (m[1], int(m[2])) if m else (n, None)
        groups.setdefault(prefix, []).append(num)
    parts = []
    for prefix, nums in groups.items():
        plain = [x for x in nums if x is None]
        if plain:
            parts.append(prefix)
        ints = sorted({x for x in nums if x is not None})
        start = prev = None
        for x in ints + [None]:
            if x is not None and prev is not None and x == prev + 1:
                prev = x
                continue
            if start is not None:
                parts.append(f"{prefix}{start}" if start == prev else f"{prefix}{start}..{prefix}{prev}")
            start = prev = x
    return ", ".join(parts)


@dataclass
class Target:
    """What to explain: an input value, or a function result."""
    func: str
    label: str                       # "@main:%3"
    value: InputValue | None = None
    result: int | None = None


def resolve(spec: ValueSpec, values: list[InputValue], funcs: list[str], result_counts: dict) -> list[Target]:
    """The input values the spec names (several when sibling regions reuse a name)."""
    if spec.func is None:
        if "main" in funcs:
            func = "main"
        elif len(funcs) == 1:
            func = funcs[0]
        else:
            raise SdylogError(f"no function @main and {len(funcs)} functions: write @func:%name "
                              f"(functions are {', '.join('@' + f for f in funcs)})")
    else:
        func = spec.func
        if func not in funcs:
            raise SdylogError(f"no function @{func}; functions are {', '.join('@' + f for f in funcs)}")
    if spec.name is None:
        n = result_counts.get(func, 0)
        if spec.result >= n:
            raise SdylogError(f"@{func} has {n} result{'s' if n != 1 else ''}; results are "
                              f"{', '.join(f'result{i}' for i in range(n)) or 'none'}")
        return [Target(func, f"@{func}:result{spec.result}", result=spec.result)]
    in_func = [v for v in values if v.func == func]
    hits = [v for v in in_func if v.name == spec.name]
    if not hits:
        raise SdylogError(f"no value {spec.name} in @{func}; values are {name_ranges(v.name for v in in_func)}")
    return [Target(func, f"@{func}:{spec.name}", value=v) for v in hits]


def resolve_name(text: str, values: list[InputValue], funcs: list[str], result_counts: dict,
                 result_names: list[str | None]) -> list[Target]:
    """The values `text` names: a JAX name (an argument's `x`, a result's
    `result['out']`) of the entry function, else an MLIR name (parse_spec)."""
    text = text.strip()
    args = [v for v in values if v.jax_name == text]
    if args:
        return [Target(v.func, v.jax_name, value=v) for v in args]
    if text in result_names:
        func = "main" if "main" in funcs else funcs[0]
        return [Target(func, text, result=i) for i, n in enumerate(result_names) if n == text]
    try:
        spec = parse_spec(text)
    except SdylogError as e:
        names = [v.jax_name for v in values if v.jax_name] + [n for n in result_names if n]
        if names:
            e.message += f" (JAX names here: {', '.join(names[:12])}{', ...' if len(names) > 12 else ''})"
        raise
    return resolve(spec, values, funcs, result_counts)


# ---------------------------------------------------------------- after the import
def match_values(facts, values: list[InputValue]) -> tuple[dict, dict]:
    """Find each input value among the propagated module's values: the same
    IR value when the import kept it (checked by its key: the import frees
    values, a call's results among them, and a new value may take a freed
    one's address), else copies made by the import (inlined calls, split
    constants) found by location, index and type. Returns
    {fact value id: InputValue} (the first value a copy stands for) and
    {id(InputValue): [fact value ids]}."""
    names, copies = {}, {}
    with facts.module.context:
        keys = _value_keys(facts)
        kept = {}
        for iv in values:
            vid = facts.value_ids.get(iv.handle)
            if vid is not None and iv.key in keys.get(vid, ()):
                kept[id(iv)] = vid
        # copies are values the import made: only those are looked up by key
        by_key = defaultdict(list)
        for vid in sorted(set(facts.func_args) | set(facts.live_value_ids()) - set(kept.values())):
            for key in keys.get(vid, ()):
                by_key[key].append(vid)
        for iv in values:
            vid = kept.get(id(iv))
            found = [] if vid is None else [vid]
            if not any(k is UNKNOWN_LOC for k in iv.key):   # copies need a real location to be told apart
                found += [v for v in by_key.get(iv.key, []) if v not in found]
            copies[id(iv)] = found
            for v in found:
                names.setdefault(v, iv)
    return names, copies


def _value_keys(facts) -> dict[int, list[tuple]]:
    """The keys (as InputValue.key) each of the propagated module's values
    answers to, by value id: read from the facts' rows (an op's kind, a
    value's op and index), the IR asked only for each op's location and
    each value's type (half the time of reading it all from the IR)."""
    kinds = {row[0]: row[1] for row in facts.rows("op")}
    ops, values = facts.ops, facts.values
    locations = {}

    def location(o):
        key = locations.get(o)
        if key is None:
            key = locations[o] = _loc_key(ops[o])
        return key
    out = {v: [("farg", f, i)] for f, i, v in facts.rows("func_arg")}
    for o, i, v in facts.rows("op_result"):
        kind = kinds[o]
        out[v] = [("res", _IMPORTED_KIND.get(kind, kind), location(o), i, values[v].type)]
    for o, r, i, v in facts.rows("block_arg"):
        if v in out:   # (a function's argument: its farg key only)
            continue
        out[v] = [("barg", location(o), r, i, values[v].type)]
        if kinds[o] == "sdy.named_computation":   # a call's copy of the callee's argument
            out[v].append(("farg", ir.StringAttr(ops[o].attributes["name"]).value, i))
    return out


# Ops the import replaces by another kind: a call by a named computation, a
# constant by sdy.constant (cloned per use).
_IMPORTED_KIND = {"func.call": "sdy.named_computation", "stablehlo.constant": "sdy.constant"}


# ---------------------------------------------------------------- what propagation gave them
def functions_of(module) -> tuple[list[str], dict[str, int]]:
    """The module's function names, in order, and each one's result count."""
    from sdylog.ir.shardings import func_type
    from sdylog.ir.walk import func_ops
    funcs, result_counts = [], {}
    with module.context:
        for fn in func_ops(module):
            name = symbol_name(fn)
            funcs.append(name)
            result_counts[name] = len(func_type(fn).results)
    return funcs, result_counts


@dataclass
class NamedValues:
    """The input's values by name (taken before the import passes), and the
    sharding propagation gave each copy of each (after it)."""
    values: list[InputValue]
    funcs: list[str]
    result_counts: dict
    result_names: list                              # the entry function's results' JAX names
    types: dict                                     # id(InputValue) -> (shape, element type text, its bytes)
    # after take_propagated (match_values):
    names: dict = None                              # fact value id -> InputValue
    copies: dict = None                             # id(InputValue) -> [fact value ids]
    shardings: dict = None                          # id(InputValue) -> [TensorSharding | None], one per copy

    @staticmethod
    def of_input(module, filename: str) -> NamedValues:
        from sdylog.ir.types import element_type_text, shape_of
        values = input_values(module, filename)
        funcs, result_counts = functions_of(module)
        with module.context:
            types = {id(iv): (shape_of(iv.handle), element_type_text(iv.handle.type), _bytes(iv.handle))
                     for iv in values}
        return NamedValues(values, funcs, result_counts, result_jax_names(module), types)

    def take_propagated(self, facts) -> None:
        """The propagated module's values each input value is (`names`,
        `copies`: match_values) and the shardings propagation wrote on them
        (call between propagation and export: export rewrites some of them)."""
        from sdylog.ir.shardings import get_sharding
        from sdylog.model.sharding import TensorSharding
        self.names, self.copies = match_values(facts, self.values)
        self.shardings = {}
        with facts.module.context:
            for iv in self.values:
                out = []
                for v in self.copies[id(iv)]:
                    a = get_sharding(facts.values[v])
                    out.append(None if a is None else TensorSharding.from_attr(a))   # (kept per attribute)
                self.shardings[id(iv)] = out


def _bytes(value) -> int:
    from sdylog.ir.types import element_bytes
    try:
        return element_bytes(value)
    except ValueError:   # (an element type of no known size)
        return 0


class IdNames:
    """Names for the ids a propagation run's relations hold: a value (or
    tensor) id by the input's name of the value (display_name), an op id by
    its kind and location. What `sdylog query` and the --db file show beside
    the ids. Read whole when made (after propagation, before the export
    passes rewrite the ops the ids name)."""

    def __init__(self, facts, values: list[InputValue], main: str | None, filename: str,
                 result_names: list = (), tensor_of=(), matched: dict | None = None):
        """`result_names`: JAX's names of the entry function's results (None
        where it has none). `tensor_of`: the rules' (value, tensor) rows: a
        tensor (its representative value's id) the import made is named by
        the input values it stands for (`%1`, not `<sdy.data_flow_edge(%1)>`).
        `matched`: match_values(facts, values)[0] when the caller has it."""
        self.main = main
        self._slots: dict = {}
        self._named = (facts.ops, facts.values)   # what the ids name (following() compares)
        names = matched if matched is not None else match_values(facts, values)[0]
        self._values = [None] * len(facts.values)
        for vid, iv in names.items():
            self._values[vid] = display_name(iv, main)
        members: dict = {}
        for v, t in tensor_of:
            if v != t and self._values[v] is not None and self._values[t] is None:
                members.setdefault(t, []).append(self._values[v])
        for t, vs in members.items():
            self._values[t] = "/".join(sorted(vs))
        with facts.module.context:
            for vid, name in enumerate(self._values):
                if name is None and facts.values[vid] is not None:   # (None: erased, facts/follow.py)
                    self._values[vid] = self._made_by_import(facts, vid)
            kinds = {row[0]: row[1] for row in facts.rows("op")}   # (the facts read each op's name once)
            calls: dict = {}
            self._ops = [None if op is None else (kinds.get(o) or op_name(op), loc_text(op, filename, calls))
                         for o, op in enumerate(facts.ops)]
        self._links = [("func.return", f"result {i} of @{main}") for i in range(len(result_names))]
        # a function result's slot is a tensor of its own (facts.func_results)
        with facts.module.context:
            for t, (fn, i) in facts.func_results.items():
                f = symbol_name(fn)
                jax = result_names[i] if f == main and i < len(result_names) else None
                self._slots[t] = jax or f"@{f}:result{i}"
        # where each value comes from: (op id, what it is of the op)
        self._origin = {}
        for o, i, v in facts.rows("op_result"):
            self._origin[v] = (o, f"result {i}")
        for o, r, i, v in facts.rows("block_arg"):
            self._origin[v] = (o, f"block argument {i}")
        self._func_args = {v: (f, i) for f, i, v in facts.rows("func_arg")}

    def following(self, facts) -> IdNames | None:
        """These names for `facts` that followed the facts they were made
        for (sdylog/facts/follow.py: the same ids, the erased ops' and
        values' None), without the erased; None when `facts` number ops or
        values otherwise (extracted afresh). The reshard step's facts
        follow propagation's unless a step made ops: one naming serves both
        (the reshard rules' ids, named afresh, cost a 1.1 s `sdylog run
        --db` of transformer_L48 ~0.05 s). The names are propagation's,
        the import's merged names included (a fresh naming of the reshard
        facts has no tensor_of to merge by): both parts of a file agree."""
        ops, values = self._named
        if not (_same_but_erased(facts.ops, ops) and _same_but_erased(facts.values, values)):
            return None
        out = copy.copy(self)
        out._named = (facts.ops, facts.values)
        out._values = [None if v is None else name for v, name in zip(facts.values, self._values)]
        out._ops = [None if op is None else kl for op, kl in zip(facts.ops, self._ops)]
        return out

    @staticmethod
    def before_import(module, filename: str):
        """What to take before the import passes: (the input's values, the
        entry function, JAX's names of its results)."""
        return input_values(module, filename, describe=False), main_name(module), result_jax_names(module)

    def _made_by_import(self, facts, vid: int) -> str:
        """A value the import made: its op, and the names of what it reads."""
        v = facts.values[vid]
        owner = v.owner
        if isinstance(owner, ir.Block):
            return f"<block argument {ir.BlockArgument(v).arg_number} of {op_name(owner.owner)}>"
        reads = [facts.value_ids.get(x) for x in owner.operands][:2]
        named = [self._values[r] for r in reads if r is not None and self._values[r] is not None]
        return f"<{op_name(owner)}{'(' + ', '.join(named) + ')' if named else ''}>"

    def value(self, vid: int) -> str:
        """`%3`, `x`, `@relu:%1`, `<sdy.data_flow_edge(%0#1)>`, `result['out']`."""
        if 0 <= vid < len(self._values):
            return self._values[vid]
        return self._slots.get(vid, "?")

    def where(self, vid: int) -> str:
        """`stablehlo.add at f.mlir:3:8`, `argument 2 of @main`: where the value comes from."""
        if vid in self._func_args:
            f, i = self._func_args[vid]
            return f"argument {i} of @{f}"
        origin = self._origin.get(vid)
        if origin is None:
            return "?"
        kind, loc = self.op(origin[0])
        return f"{kind} {origin[1]} at {loc}" if origin[1] != "result 0" else f"{kind} at {loc}"

    def op(self, o: int) -> tuple[str, str]:
        """(kind, location) of op id `o` (`-1 - i`: the return of the entry function's result i)."""
        if 0 <= o < len(self._ops) and self._ops[o] is not None:
            return self._ops[o]
        if o < 0 and -1 - o < len(self._links):
            return self._links[-1 - o]
        return ("?", "?")

    def all_values(self) -> list[tuple[int, str]]:
        """(id, name) of every value (not the ids of erased ones: facts/follow.py)."""
        return [(v, n) for v, n in enumerate(self._values) if n is not None] + list(self._slots.items())

    def all_ops(self) -> list[tuple[int, tuple[str, str]]]:
        """(id, (kind, location)) of every op (not the ids of erased ones)."""
        return ([(o, kl) for o, kl in enumerate(self._ops) if kl is not None]
                + [(-1 - i, link) for i, link in enumerate(self._links)])


def _same_but_erased(followed: list, handles: list) -> bool:
    """Whether `followed` holds, at each id, the handle `handles` does, or
    None (erased)."""
    return len(followed) == len(handles) and all(f is None or f is h for f, h in zip(followed, handles))
