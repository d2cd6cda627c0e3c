"""Reading a Soufflé facts file (`.input` relations, Soufflé's outputs): one
tuple a line, columns split by the delimiter, no quoting."""
from __future__ import annotations

import re

from sdylog.datalog.ast import RelationDecl
from sdylog.datalog.lexer import Loc, error
from sdylog.ir.diagnostics import decode_utf8

_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*$")
_KIND_NAMES = {"number": "a number", "unsigned": "an unsigned number", "float": "a float"}


def read_facts_file(decl: RelationDecl, path: str, delimiter: str = "\t", display: str | None = None,
                    skip_header: bool = False) -> list[tuple]:
    """The tuples of the file; a value that does not read as its column's
    kind, or a line of another width, is an error at its line and column."""
    name = display or path
    try:
        with open(path, "rb") as f:
            text = decode_utf8(f.read(), name)
    except OSError as e:
        raise error(None, f"cannot open fact file '{name}' of relation '{decl.name}': {e.strerror}") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    rows = []
    for number, line in enumerate(lines[int(skip_header):], start=1 + int(skip_header)):
        line = line.rstrip("\r")
        if decl.arity == 0:
            if line.strip():
                return [()]
            continue
        if not line:
            continue
        values = line.split(delimiter)
        if len(values) != decl.arity:
            raise error(Loc(name, number, 1), f"facts of '{decl.name}': {len(values)} columns, "
                        f"the relation has {decl.arity}")
        row, col = [], 1
        for value, column in zip(values, decl.columns):
            row.append(_value(value, column.kind, Loc(name, number, col), decl.name))
            col += len(value.encode("utf-8")) + len(delimiter.encode("utf-8"))
        rows.append(tuple(row))
    return rows


def _value(text: str, kind: str, loc: Loc, relation: str):
    if kind == "symbol":
        return text
    try:
        if kind == "float":
            if "_" in text:
                raise ValueError
            return float(text)
        if not _INTEGER.match(text):
            raise ValueError
        v = int(text)
        if kind == "unsigned" and v < 0:
            raise ValueError
        return v
    except ValueError:
        raise error(loc, f"facts of '{relation}': cannot read '{text}' as {_KIND_NAMES[kind]}") from None
