"""A relation as a readable table (or CSV, or JSON), filtered by column=value.

`select` reads a relation's tuples with columns added beside some of them
(a caller's names for ids: `t_name` beside a tensor id `t`), filtered on
any column; `render` prints the result as a table (a header, the rows,
a last line with the count), CSV or JSON.
"""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from sdylog.datalog.lexer import error

FORMATS = ("table", "csv", "json")


@dataclass(frozen=True)
class Extra:
    """A column shown right after declared column `after`: fn(value of that column)."""
    after: int
    name: str
    fn: Callable


@dataclass
class Selection:
    relation: str
    columns: list[str]
    rows: list[tuple]                 # the shown rows (after `limit`)
    total: int                        # rows that pass the filters
    filtered: bool = False
    numeric: list[bool] = field(default_factory=list)   # per column: numbers (right-aligned)


def _filters(columns: list[str], kinds: list[str], relation: str, where) -> list[tuple[int, object]]:
    """`where`: strings 'COL=VAL' (VAL may be quoted: "x" or 'x'), each value
    converted to its column's kind."""
    out = []
    for w in where or ():
        if "=" not in w:
            raise error(None, f"filter '{w}' is not COLUMN=VALUE")
        k, v = w.split("=", 1)
        k, v = k.strip(), _unquote(v.strip())
        if k not in columns:
            raise error(None, f"'{relation}' has no column '{k}' (columns: {', '.join(columns)})")
        i = columns.index(k)
        kind = kinds[i]
        try:
            value = v if kind == "symbol" else float(v) if kind == "float" else int(v, 0)
        except ValueError:
            raise error(None, f"column '{k}' of '{relation}' holds {kind} values, given '{v}'") from None
        out.append((i, value))
    return out


def _unquote(v: str) -> str:
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        return v[1:-1].replace("\\" + v[0], v[0])
    return v


def select(engine, relation: str, where=None, limit: int | None = None,
           extras: list[Extra] = ()) -> Selection:
    """The relation's tuples (sorted, as engine.read gives them on every
    engine) with the extra columns, those passing the filters."""
    decl = engine.decl(relation)
    order = []   # (declared column index or None, Extra or None), in display order
    for i in range(decl.arity):
        order.append((i, None))
        order.extend((None, x) for x in extras if x.after == i)
    names = [decl.columns[i].name if x is None else x.name for i, x in order]
    kinds = [decl.columns[i].kind if x is None else "symbol" for i, x in order]
    filters = _filters(names, kinds, relation, where)
    rows = []
    for r in engine.read(relation):
        full = tuple(r[i] if x is None else x.fn(r[x.after]) for i, x in order) if extras else r
        if all(full[i] == v for i, v in filters):
            rows.append(full)
    total = len(rows)
    shown = rows if limit is None else rows[:limit]
    return Selection(relation, names, shown, total, bool(filters), [k != "symbol" for k in kinds])


def render(sel: Selection, fmt: str = "table") -> str:
    if fmt == "csv":
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(sel.columns)
        w.writerows(sel.rows)
        return out.getvalue()
    if fmt == "json":
        return json.dumps([dict(zip(sel.columns, r)) for r in sel.rows], indent=1) + "\n"
    if fmt != "table":
        raise error(None, f"unknown format '{fmt}' (choose from {', '.join(FORMATS)})")
    cells = [[cell(v) for v in r] for r in sel.rows]
    widths = [max([len(n)] + [len(r[i]) for r in cells]) for i, n in enumerate(sel.columns)]
    lines = []
    if sel.columns:
        lines.append("  ".join(n.ljust(w) for n, w in zip(sel.columns, widths)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        for r in cells:
            lines.append("  ".join(c.rjust(w) if num else c.ljust(w)
                                   for c, w, num in zip(r, widths, sel.numeric)).rstrip())
    if len(sel.rows) < sel.total:
        lines.append(f"... ({sel.total - len(sel.rows)} more)")
    lines.append(f"{sel.relation}: {sel.total} tuple{'s' if sel.total != 1 else ''}"
                 + (" (filtered)" if sel.filtered else ""))
    return "\n".join(lines) + "\n"


def cell(v) -> str:
    """A value as a table or a facts file shows it."""
    return format(v, "g") if isinstance(v, float) else str(v)

