"""Reading relations by their `.decl` column names, so that a column added,
moved or renamed in a `.dl` file cannot shift what a consumer reads (every
such read outside sdylog/datalog is checked against the rules'
declarations by tests/datalog/test_named_reads.py)."""
from __future__ import annotations

import keyword
from collections import namedtuple
from functools import lru_cache
from operator import itemgetter

from sdylog.datalog.ast import RelationDecl
from sdylog.datalog.lexer import error


def field_name(column: str) -> str:
    """A column's name as a row field: its .decl name, with `_` after a
    Python keyword (`from` -> `from_`)."""
    return column + "_" if keyword.iskeyword(column) else column


def row_type(decl: RelationDecl) -> type:
    """The named tuple class of DECL's rows (one per name and columns: equal
    declarations of several programs share it)."""
    return _row_type(decl.name, tuple(field_name(c.name) for c in decl.columns))


_row_type = lru_cache(maxsize=None)(namedtuple)


# (id(decl), columns) -> (decl, their positions): every run reads the same;
# the decl is stored to pin its id (no other decl gets it while the entry lives)
_positions: dict = {}


def positions(decl: RelationDecl, columns) -> tuple[int, ...]:
    """The positions of the named columns (.decl or field names) in DECL; an
    error naming the relation and its columns for a name it does not declare."""
    key = (id(decl), tuple(columns))
    got = _positions.get(key)
    if got is None:
        if len(_positions) >= 4096:   # (decls of programs made and dropped: tests)
            _positions.clear()
        got = _positions[key] = (decl, _find_positions(decl, key[1]))
    return got[1]


def _find_positions(decl: RelationDecl, columns: tuple) -> tuple[int, ...]:
    fields = [field_name(c.name) for c in decl.columns]
    try:
        return tuple(fields.index(field_name(c)) for c in columns)
    except ValueError:
        bad = [c for c in columns if field_name(c) not in fields]
        raise error(None, f"relation '{decl.name}' has no column '{bad[0]}' "
                          f"(its columns: {', '.join(c.name for c in decl.columns) or 'none'})") from None


def _project(rows, at: tuple) -> list:
    """The rows as tuples of their values at positions AT."""
    if len(at) == 1:
        (i,) = at
        return [(r[i],) for r in rows]
    return list(map(itemgetter(*at), rows))


class NamedReads:
    """Reading an engine's relations by column name; the engine gives `decl`,
    `scan` (rows in any order) and `read` (rows sorted)."""

    def select(self, relation: str, *columns: str, ordered: bool = False):
        """The rows of RELATION as tuples of COLUMNS (its `.decl` names), in
        the order named: sorted as `read` sorts the whole rows when
        `ordered`, else in no particular order. Naming the whole declaration
        in order gives the stored tuples themselves (no copy: do not change them)."""
        decl = self.decl(relation)
        if not columns and decl.arity:
            raise error(None, f"select from '{relation}': name the columns to read")
        at = positions(decl, columns)
        if at == tuple(range(decl.arity)):
            return self.read(relation) if ordered else self.scan(relation)
        return _project(self.read(relation) if ordered else self.scan(relation), at)

    def named(self, relation: str, ordered: bool = False) -> list:
        """The rows of RELATION as its row_type (fields named as declared)."""
        make = row_type(self.decl(relation))._make
        return list(map(make, self.read(relation) if ordered else self.scan(relation)))


class Lookup:
    """Rows of an engine's relations by the values of some of their columns,
    as named rows (sorted): `lookup.where("visit_tensor", o=op, j=j)`. Each
    (relation, columns) is indexed once, on first use."""

    def __init__(self, engine):
        self.engine = engine
        self._indexes: dict = {}
        self._rows: dict = {}   # relation -> its named rows, sorted

    def where(self, relation: str, **values) -> list:
        """The rows whose columns (the keywords) hold these values."""
        key = (relation, tuple(values))
        index = self._indexes.get(key)
        if index is None:
            index = self._indexes[key] = self._index(relation, tuple(values))
        wanted = tuple(values.values())
        return index.get(wanted[0] if len(wanted) == 1 else wanted, [])

    def first(self, relation: str, **values):
        """The first such row (sorted); None when there is none."""
        rows = self.where(relation, **values)
        return rows[0] if rows else None

    def exists(self, relation: str, **values) -> bool:
        return bool(self.where(relation, **values))

    def _index(self, relation: str, columns: tuple) -> dict:
        at = positions(self.engine.decl(relation), columns)
        # (one column: the bare value; none: every row, under ())
        key = itemgetter(*at) if at else lambda row: ()
        index: dict = {}
        rows = self._rows.get(relation)
        if rows is None:
            rows = self._rows[relation] = self.engine.named(relation, ordered=True)
        for row in rows:
            index.setdefault(key(row), []).append(row)
        return index
