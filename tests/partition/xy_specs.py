"""Shardings over a mesh of two axes "x" and "y", as text and as
hypothesis strategies, for the tests that write small programs by hand."""
from __future__ import annotations

from hypothesis import strategies as st

AXES = [(), ("x",), ("y",), ("x", "y"), ("y", "x")]


def ty(shape) -> str:
    return "tensor<" + "x".join(str(n) for n in shape) + "xf32>"


def spec(axes_per_dim) -> str:
    """`[{"x"}, {}]` from [("x",), ()]."""
    return "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in axes) + "}" for axes in axes_per_dim) + "]"


@st.composite
def axes_per_dim(draw, rank):
    """One entry of AXES per dimension, no axis used twice."""
    used, out = set(), []
    for _ in range(rank):
        axes = draw(st.sampled_from([a for a in AXES if not used & set(a)]))
        used |= set(axes)
        out.append(axes)
    return out
