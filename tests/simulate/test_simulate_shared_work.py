"""Work the simulator does once instead of per device or per index, and the
plain versions it must agree with bit for bit: a collective's combination
computed once per process group (Communicator.exchange's `combine`), and the
in-order float dot with all its products at once (linalg.in_order_matmul)."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sdylog.simulate.ops.linalg import in_order_matmul, in_order_matmul_reference


# ---------------------------------------------------------------- in-order dot
_FLOATS = st.sampled_from([np.float16, np.float32, np.float64])


@st.composite
def _operands(draw):
    dt = draw(_FLOATS)
    b, m, k, n = (draw(st.integers(0 if i == 2 else 1, 9)) for i in range(4))
    elements = st.floats(width=np.finfo(dt).bits, allow_nan=True, allow_infinity=True, allow_subnormal=True)
    a = draw(hnp.arrays(dt, (b, m, k), elements=elements | st.sampled_from([0.0, -0.0])))
    c = draw(hnp.arrays(dt, (b, k, n), elements=elements | st.sampled_from([0.0, -0.0])))
    return a, c


@settings(max_examples=200, deadline=None)
@given(_operands())
def test_in_order_matmul_is_the_loop_bit_for_bit(ops):
    a, b = ops
    with np.errstate(all="ignore"):
        want, got = in_order_matmul_reference(a, b), in_order_matmul(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_in_order_matmul_of_negative_zeros_is_positive_zero():
    """(0 + -0) is +0: the sum starts from zero, as the loop's does."""
    a = np.full((1, 2, 3), -0.0, np.float32)
    b = np.ones((1, 3, 2), np.float32)
    assert not np.signbit(in_order_matmul(a, b)).any()
