"""Facts given from Python, as an Arrow table with columns c0..c{n-1} typed
for a relation: lists of tuples, dicts or lists of columns (lists, numpy
arrays), 2-D numpy arrays, Arrow tables and pandas data frames."""
from __future__ import annotations

from sdylog.datalog.ast import RelationDecl
from sdylog.datalog.lexer import error

_ARROW_TYPE = {"number": "int64", "unsigned": "int64", "float": "float64", "symbol": "string"}


def to_arrow(decl: RelationDecl, data):
    import pyarrow as pa

    names = [f"c{i}" for i in range(decl.arity)] or ["u"]
    cols = _columns_of(decl, data, pa)
    if decl.arity == 0:
        n = len(cols[0]) if cols else 0
        return pa.table({names[0]: pa.array([True] * min(n, 1), pa.bool_())})
    arrays = []
    for col, decl_col in zip(cols, decl.columns):
        want = getattr(pa, _ARROW_TYPE[decl_col.kind])()
        try:
            if isinstance(col, (pa.Array, pa.ChunkedArray)):
                arr = col if col.type == want else col.cast(want)
            else:
                arr = pa.array(col, type=want)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError) as e:
            raise error(None, f"facts for '{decl.name}': column '{decl_col.name}' must hold "
                        f"{decl_col.kind} values ({e})") from None
        if arr.null_count:
            raise error(None, f"facts for '{decl.name}': column '{decl_col.name}' has missing values")
        arrays.append(arr)
    lengths = {len(a) for a in arrays}
    if len(lengths) > 1:
        raise error(None, f"facts for '{decl.name}': columns have different lengths {sorted(lengths)}")
    return pa.table(dict(zip(names, arrays)))


def _columns_of(decl: RelationDecl, data, pa) -> list:
    arity = decl.arity
    if isinstance(data, dict):
        names = [c.name for c in decl.columns]
        if set(data) != set(names):
            raise error(None, f"facts for '{decl.name}': columns {sorted(data)} given, "
                        f"the relation has {names}")
        return [data[n] for n in names]
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        cols = data.columns
    elif type(data).__name__ == "DataFrame" and hasattr(data, "columns"):
        cols = [data.iloc[:, i].to_numpy() for i in range(len(data.columns))]
    elif type(data).__module__ == "numpy" and getattr(data, "ndim", 0) == 2:
        cols = list(data.T)
    else:   # rows
        rows = data if isinstance(data, (list, tuple)) else list(data)
        if arity == 0:
            return [[True] * len(rows)]
        for r in rows:
            if len(r) != arity:
                raise error(None, f"facts for '{decl.name}': tuple {tuple(r)!r} has {len(r)} values, "
                            f"the relation has {arity} columns")
        return [list(c) for c in zip(*rows)] if rows else [[] for _ in range(arity)]
    if len(cols) != arity:
        raise error(None, f"facts for '{decl.name}': {len(cols)} columns given, the relation has {arity}")
    return cols
