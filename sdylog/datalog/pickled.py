"""Values kept pickled until first read, inside something pickled whole.

A program saved on disk (cache.py) holds much that one run does not read:
the clauses' syntax trees (read by planning, explain, error messages) and
the plans kept for other sizes of data (plan.PlanCache). Each is pickled on
its own, as bytes inside the program's pickle, and unpickled when first
read: loading the program costs what a run reads, not what it holds.
"""
from __future__ import annotations

import pickle
from collections.abc import Sequence

_UNREAD = object()


class Pickled:
    """A value kept as its pickle until `.value` is first read."""

    __slots__ = ("data", "_value")

    def __init__(self, data: bytes):
        self.data = data
        self._value = _UNREAD

    @classmethod
    def of(cls, value) -> Pickled:
        return value if isinstance(value, cls) else cls(pickle.dumps(value))

    @property
    def read(self) -> bool:
        return self._value is not _UNREAD

    @property
    def value(self):
        if self._value is _UNREAD:
            self._value = pickle.loads(self.data)
        return self._value

    def __reduce__(self):
        return Pickled, (self.data,)


class PickledItems(Sequence):
    """A list whose items are each Pickled (unpickled when first read)."""

    def __init__(self, items: list[Pickled]):
        self.items = items

    @classmethod
    def of(cls, values) -> PickledItems:
        return values if isinstance(values, cls) else cls([Pickled.of(v) for v in values])

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [p.value for p in self.items[i]]
        return self.items[i].value

    def __reduce__(self):
        return PickledItems, (self.items,)
