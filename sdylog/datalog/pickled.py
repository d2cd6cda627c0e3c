"""Values kept pickled until first read, inside something pickled whole.

A program saved on disk (cache.py) holds much that one run does not read:
the clauses' syntax trees (read by planning, explain, error messages), the
plans kept for other sizes of data (plan.PlanCache) and the C programs of
plans its layout bound already (native_db._lower). Each is pickled on
its own, as bytes inside the program's pickle, and unpickled when first
read: loading the program costs what a run reads, not what it holds.
"""
from __future__ import annotations

import pickle
import zlib
from array import array
from collections.abc import Sequence
from itertools import accumulate

_UNREAD = object()


class Pickled:
    """A value kept as its pickle, compressed, until `.value` is first read
    (one made of a value, of(), is pickled when what holds it is). Saved
    compressed: most are read seldom (a rank-ordered stratum's Python plans,
    hundreds of kilobytes, only without the C evaluator), and every start
    reads and checks the whole file that holds them."""

    __slots__ = ("data", "_value")

    def __init__(self, data: bytes | None, value=_UNREAD):
        self.data, self._value = data, value   # (data: the pickle, compressed)

    @classmethod
    def of(cls, value) -> Pickled:
        return value if isinstance(value, cls) else cls(None, value)

    @property
    def read(self) -> bool:
        return self._value is not _UNREAD

    @property
    def value(self):
        if self._value is _UNREAD:
            self._value = pickle.loads(zlib.decompress(self.data))
        return self._value

    def __reduce__(self):
        if self.data is None:
            self.data = zlib.compress(pickle.dumps(self._value), 1)
        return Pickled, (self.data,)


class PickledItems(Sequence):
    """A list whose items are each kept as their own pickle, unpickled when
    first read: the pickles joined in one bytes object (item i ends at
    ends[i]), so that loading the list makes a few objects, not a few per
    item; saved compressed (a sixth of the size: the program's file, most
    of it clauses, is read and checked whole at each start), decompressed
    when first read."""

    def __init__(self, data: bytes | None, ends: array, compressed: bytes | None = None):
        self._data, self.ends, self._compressed = data, ends, compressed
        self._values = [_UNREAD] * len(ends)

    @property
    def data(self) -> bytes:
        if self._data is None:
            self._data = zlib.decompress(self._compressed)
        return self._data

    @classmethod
    def of(cls, values) -> PickledItems:
        if isinstance(values, cls):
            return values
        pickles = [pickle.dumps(v) for v in values]
        return cls(b"".join(pickles), array("q", accumulate(map(len, pickles))))

    @property
    def read(self) -> list[bool]:
        """Per item, whether it has been unpickled."""
        return [v is not _UNREAD for v in self._values]

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(len(self))[i]]
        i = range(len(self))[i]   # (IndexError beyond the end: iter() stops there)
        if self._values[i] is _UNREAD:
            start = self.ends[i - 1] if i else 0
            self._values[i] = pickle.loads(memoryview(self.data)[start:self.ends[i]])
        return self._values[i]

    def __reduce__(self):
        if self._compressed is None:
            self._compressed = zlib.compress(self._data, 1)
        return PickledItems, (None, self.ends, self._compressed)


def same_programs(lowered: Pickled | None) -> bytes | None:
    """What makes two plans of a stratum the same (plan.PlanCache.get): their
    C programs (native_db._lower's), pickled; None for a plan that does not lower."""
    return None if lowered is None else pickle.dumps(lowered.value)
