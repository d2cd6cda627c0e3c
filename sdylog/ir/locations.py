"""Source locations and JAX's names, read from MLIR locations.

JAX gives each op a location `loc("jit(f)/dot_general"(callsite("f"("m.py":7:20
to :26) at "<module>"("m.py":12:5))))` with `as_text(debug_info=True)` (and
`jax.export` keeps them): the op's JAX name (its name stack and primitive),
the user's frame where the op comes from, and the frames that called it. A
function argument gets `loc("x")`: the argument's name in the Python
signature (`params['w1']` for a pytree leaf). A module parsed from text
without locations has the parser's `"file":line:col` of each op.

jaxlib's bindings give a location only as text (`str(loc)`; no accessors for
its parts), so this reads that text: the location grammar only (`unknown`,
file locations with an optional `to` range, names with an optional child,
`callsite(... at ...)`, `fused[...]`), not MLIR's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class FileLoc:
    file: str
    line: int
    col: int

    def text(self, filename: str | None = None) -> str:
        """`file:line:col`; a module parsed from text carries the buffer name
        "-" (or none), which `filename` replaces."""
        name = filename if filename is not None and self.file in ("-", "") else self.file
        return f"{name}:{self.line}:{self.col}"


@dataclass(frozen=True)
class NameLoc:
    name: str
    child: Loc | None


@dataclass(frozen=True)
class CallSiteLoc:
    callee: Loc
    caller: Loc


@dataclass(frozen=True)
class FusedLoc:
    parts: tuple[Loc, ...]


@dataclass(frozen=True)
class UnknownLoc:
    pass


Loc = FileLoc | NameLoc | CallSiteLoc | FusedLoc | UnknownLoc

_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_PLAIN_FILE = re.compile(r'loc\("([^"\\]*)":(\d+):(\d+)\)$')   # what MLIR's parser gives an op
_LINE_COL = re.compile(r":(\d+):(\d+)(?:\s+to\s+(?:\d+)?:\d+)?")


@lru_cache(maxsize=65536)
def parse_location(text: str) -> Loc:
    """The location printed as `text` (`loc(...)`); UnknownLoc for what it
    does not read (an opaque location, say)."""
    text = text.strip()
    m = _PLAIN_FILE.match(text)
    if m:
        return FileLoc(m[1], int(m[2]), int(m[3]))
    if not (text.startswith("loc(") and text.endswith(")")):
        return UnknownLoc()
    try:
        loc, end = _Reader(text).inner(4)
    except (IndexError, ValueError):
        return UnknownLoc()
    return loc if text[end:].strip() == ")" else UnknownLoc()


class _Reader:
    def __init__(self, text: str):
        self.s = text

    def inner(self, i: int) -> tuple[Loc, int]:
        s = self.s
        i = self._space(i)
        if s.startswith("unknown", i):
            return UnknownLoc(), i + 7
        if s.startswith("callsite(", i):
            callee, i = self.inner(i + 9)
            i = self._expect(self._space(i), "at")
            caller, i = self.inner(i)
            return CallSiteLoc(callee, caller), self._expect(self._space(i), ")")
        if s.startswith("fused", i):
            i += 5
            if s[i] == "<":   # fused<#metadata>[...]: the metadata is skipped
                i = self._closing(i, "<", ">")
            i = self._expect(self._space(i), "[")
            parts = []
            while True:
                part, i = self.inner(i)
                parts.append(part)
                i = self._space(i)
                if s[i] == "]":
                    return FusedLoc(tuple(parts)), i + 1
                i = self._expect(i, ",")
        m = _STRING.match(s, i)
        if not m:
            raise ValueError(f"not a location at {i}")
        name = bytes(m[1], "utf-8").decode("unicode_escape") if "\\" in m[1] else m[1]
        i = m.end()
        lc = _LINE_COL.match(s, i)
        if lc:
            return FileLoc(name, int(lc[1]), int(lc[2])), lc.end()
        if i < len(s) and s[i] == "(":
            child, i = self.inner(i + 1)
            return NameLoc(name, child), self._expect(self._space(i), ")")
        return NameLoc(name, None), i

    def _space(self, i: int) -> int:
        while self.s[i] == " ":
            i += 1
        return i

    def _expect(self, i: int, word: str) -> int:
        if not self.s.startswith(word, i):
            raise ValueError(f"expected {word!r} at {i}")
        return i + len(word)

    def _closing(self, i: int, open_: str, close: str) -> int:
        depth = 0
        for j in range(i, len(self.s)):
            depth += (self.s[j] == open_) - (self.s[j] == close)
            if depth == 0:
                return j + 1
        raise ValueError("unbalanced")


def source_of(loc: Loc) -> FileLoc | None:
    """The innermost frame's file location: a name's child, a call site's
    callee before its caller, a fused location's parts in order."""
    if isinstance(loc, FileLoc):
        return loc
    if isinstance(loc, NameLoc):
        return source_of(loc.child) if loc.child is not None else None
    if isinstance(loc, CallSiteLoc):
        return source_of(loc.callee) or source_of(loc.caller)
    if isinstance(loc, FusedLoc):
        for part in loc.parts:
            found = source_of(part)
            if found is not None:
                return found
    return None


def op_source(op, calls: dict | None = None) -> FileLoc | None:
    """Where an op is in the user's source: its own location's file location
    (source_of), else that of the nearest enclosing op that has one. JAX gives
    the ops of its private helpers (`@log_softmax`, `@_pad`, `@cholesky`)
    only a name (`loc("reduce_max")`); their function (or the
    sdy.named_computation that holds their body) carries the call site
    (`loc("jit:"(callsite(...)))`). A module parsed from text without
    locations gives every op its own position in the file. A function with
    none (a helper JAX's helper calls: `@solve` of `@inv`) goes on at its
    first caller. None when nothing up to the module has one (line 0, e.g.
    an empty module's, is none). A value (ir.Value) is placed as the op
    defining it, or holding its block, when its own location has none.

    `calls`: a dict kept over the calls on one module that is not changed
    meanwhile (the first caller of each function, found in one walk);
    without it each function without a place walks the module."""
    op, seen = getattr(op, "operation", op), set()
    while op is not None:
        src = source_of(parse_location(str(op.location)))
        if src is not None and src.line != 0:
            return src
        if getattr(op, "name", None) == "func.func":
            op = _first_caller(op, seen, calls)
        elif hasattr(op, "parent"):
            op = op.parent
        else:   # a value: the op defining it, or holding its block
            owner = op.owner
            op = getattr(owner.owner if hasattr(owner, "arguments") else owner, "operation", None)
    return None


def with_source(location, fallback):
    """`location` (an MLIR location) when it has a file location (source_of),
    else `fallback`. A reshard written at a use of a value takes the value's
    location, as Shardy's do; an entry argument's is only JAX's name
    (`loc("x")`) and no enclosing op has a place (@main has no caller): it
    takes the using op's location (a while's, a call's) instead."""
    return location if source_of(parse_location(str(location))) is not None else fallback


def _first_caller(func, seen: set, calls: dict | None):
    """The first `func.call` of `func` in its module (None if none, or if
    the calls go round to a function already passed)."""
    from jaxlib.mlir import ir
    name = ir.StringAttr(func.attributes["sym_name"]).value
    module = func.parent
    if name in seen or module is None:
        return None
    seen.add(name)
    if calls is None:
        return _first_calls(module).get(name)
    if not calls:
        calls.update(_first_calls(module))
        calls[None] = None     # (filled)
    return calls.get(name)


def _first_calls(module) -> dict:
    """Each called function's name -> its first func.call in `module`."""
    from jaxlib.mlir import ir

    from sdylog.ir.walk import walk_ops
    out = {}
    for op in walk_ops(module):
        if op.name == "func.call":
            out.setdefault(ir.FlatSymbolRefAttr(op.attributes["callee"]).value, op)
    return out


def name_of(loc: Loc) -> str | None:
    """The location's own name (the outermost one; a fused location's first):
    JAX's name of the op (`jit(f)/dot_general`) or argument (`x`)."""
    if isinstance(loc, NameLoc):
        return loc.name
    if isinstance(loc, FusedLoc):
        for part in loc.parts:
            found = name_of(part)
            if found is not None:
                return found
    return None


@dataclass(frozen=True)
class Where:
    """What a location tells a user: the source position and JAX's name."""
    source: str | None       # "m.py:7:20"
    name: str | None         # "jit(f)/dot_general"

    def __str__(self) -> str:
        if self.name and self.source:
            return f"{self.source} ({self.name})"
        return self.source or self.name or "?"


def where_text(location: str, filename: str | None = None) -> str:
    """str(where(...)) of a location's text; a plain file location (what
    MLIR's parser gives the ops of a text without locations) read at once."""
    m = _PLAIN_FILE.match(location)
    if m:
        return f"{filename if filename is not None and m[1] in ('-', '') else m[1]}:{m[2]}:{m[3]}"
    return str(where(location, filename))


def op_where_text(op, filename: str | None = None, calls: dict | None = None) -> str:
    """where_text of an op's location; when that has no file location, the
    nearest enclosing op's place (op_source, `calls` as there) beside the
    op's own name."""
    text = str(op.location)
    if source_of(parse_location(text)) is not None:
        return _where_text(text, filename)
    return str(where(op, filename, calls))


_where_text = lru_cache(maxsize=65536)(where_text)


def where(op_or_location, filename: str | None = None, calls: dict | None = None) -> Where:
    """The Where of an op (its source: op_source, `calls` as there; its name:
    its own location's) or of an MLIR location (ir.Location, or its text)."""
    if hasattr(op_or_location, "location"):
        return Where(_text(op_source(op_or_location, calls), filename),
                     name_of(parse_location(str(op_or_location.location))))
    loc = parse_location(str(op_or_location))
    return Where(_text(source_of(loc), filename), name_of(loc))


def _text(src: FileLoc | None, filename: str | None) -> str | None:
    return src.text(filename) if src is not None else None
