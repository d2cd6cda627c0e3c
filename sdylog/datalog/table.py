"""A relation as a readable table, optionally filtered by column=value."""
from __future__ import annotations

from sdylog.datalog.lexer import error


def parse_filters(engine, relation: str, where) -> list[tuple[int, object]]:
    """`where`: a dict {column: value} or strings 'COL=VAL' (values converted
    to the column's type)."""
    decl = engine.decl(relation)
    names = [c.name for c in decl.columns]
    items = list(where.items()) if isinstance(where, dict) else []
    if not isinstance(where, dict):
        for w in where or ():
            if "=" not in w:
                raise error(None, f"filter '{w}' is not COLUMN=VALUE")
            k, v = w.split("=", 1)
            items.append((k.strip(), v))
    out = []
    for k, v in items:
        if k not in names:
            raise error(None, f"'{relation}' has no column '{k}' (columns: {', '.join(names)})")
        i = names.index(k)
        kind = decl.columns[i].kind
        try:
            value = v if kind == "symbol" else (float(v) if kind == "float" else int(v, 0) if isinstance(v, str)
                                                 else int(v))
        except ValueError:
            raise error(None, f"column '{k}' of '{relation}' holds {kind} values, given '{v}'") from None
        out.append((i, value))
    return out


def format_relation(engine, relation: str, where=None, limit: int | None = None) -> str:
    """Column names from the .decl as a header, one row a tuple, sorted, and
    a last line with the count (of matching tuples, when filtered)."""
    decl = engine.decl(relation)
    filters = parse_filters(engine, relation, where)
    names = [c.name for c in decl.columns]
    # (engine.read: sorted tuples, on every engine)
    rows = [r for r in engine.read(relation) if all(r[i] == v for i, v in filters)]
    total = len(rows)
    shown = rows if limit is None else rows[:limit]
    cells = [[_cell(v) for v in r] for r in shown]
    widths = [max([len(n)] + [len(r[i]) for r in cells]) for i, n in enumerate(names)]
    lines = []
    if names:
        lines.append("  ".join(n.ljust(w) for n, w in zip(names, widths)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        for r in cells:
            lines.append("  ".join(c.rjust(w) if _numeric(c) else c.ljust(w) for c, w in zip(r, widths)).rstrip())
    if len(shown) < total:
        lines.append(f"... ({total - len(shown)} more)")
    lines.append(f"{relation}: {total} tuple{'s' if total != 1 else ''}" + (" (filtered)" if filters else ""))
    return "\n".join(lines) + "\n"


def _cell(v) -> str:
    return format(v, "g") if isinstance(v, float) else str(v)


def _numeric(c: str) -> bool:
    try:
        float(c)
        return True
    except ValueError:
        return False


__all__ = ["format_relation", "parse_filters"]
