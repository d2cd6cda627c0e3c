"""Dense elements attributes <-> numpy arrays.

jaxlib's bindings expose a dense attribute's data through the buffer protocol
for the common element types (f16/f32/f64, integers, i1). For the others
(bf16, f8*, complex, i4/i2) they raise; there the values are taken from the
attribute's own printed element list (MLIR's printer), which is a Python
literal once `true`/`false` are spelled in Python: numbers, `(re, im)` pairs,
hex bit patterns for special floats, or one hex string of raw little-endian
data. Nothing else of MLIR's syntax is read here.
"""
from __future__ import annotations

import ast

import numpy as np
from jaxlib.mlir import ir

from sdylog.simulate.dtypes import bit_width, element_dtype, is_complex, uint_of_width


def elements_to_array(attr) -> np.ndarray:
    """The value of a DenseElementsAttr as a numpy array of the attribute's type."""
    t = ir.RankedTensorType(attr.type)
    dtype = element_dtype(t.element_type)
    shape = tuple(t.shape)
    try:
        arr = np.array(attr, copy=True)
        if arr.dtype == dtype:
            return arr.reshape(shape)
    except (TypeError, ValueError, BufferError):
        pass
    return _from_printed(str(attr), dtype, shape)


def _from_printed(text: str, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    start = text.index("dense<") + len("dense<")
    end = text.rindex(">", 0, text.rindex(":"))
    body = text[start:end].strip()
    if body.startswith('"0x'):
        raw = bytes.fromhex(body[3:-1])
        n = int(np.prod(shape, dtype=np.int64))
        bits = bit_width(dtype)
        store = dtype if bits >= 8 else np.dtype(np.int8)
        arr = np.frombuffer(raw, dtype=store)
        if arr.size == 1 and n != 1:
            arr = np.broadcast_to(arr, (n,))
        return arr.astype(dtype).reshape(shape).copy()
    lit = ast.literal_eval(body.replace("true", "True").replace("false", "False"))
    flat = list(_flatten(lit))
    if is_complex(dtype):
        part = np.float32 if dtype == np.complex64 else np.float64
        vals = [complex(_float_of(v[0], part), _float_of(v[1], part)) if isinstance(v, tuple) else complex(v)
                for v in flat]
        arr = np.array(vals, dtype=dtype)
    elif np.dtype(dtype).kind == "V" and _is_float_like(dtype):
        arr = np.array([_narrow_float(v, dtype) for v in flat], dtype=dtype)
    else:
        arr = np.array(flat).astype(dtype)
    if arr.size == 1 and int(np.prod(shape, dtype=np.int64)) != 1:
        arr = np.broadcast_to(arr, shape)
    return arr.reshape(shape).copy()


def _is_float_like(dtype) -> bool:
    try:
        import ml_dtypes
        ml_dtypes.finfo(dtype)
        return True
    except Exception:
        return False


def _flatten(lit):
    if isinstance(lit, list):
        for x in lit:
            yield from _flatten(x)
    else:
        yield lit


def _float_of(v, part):
    """A printed float: a number, or an int that is the float's bit pattern (hex)."""
    if isinstance(v, int) and not isinstance(v, bool):
        width = np.dtype(part).itemsize * 8
        return np.array([v], dtype=uint_of_width(width)).view(part)[0]
    return v


def _narrow_float(v, dtype):
    if isinstance(v, int) and not isinstance(v, bool):
        return np.array([v], dtype=uint_of_width(max(8, bit_width(dtype)))).view(dtype)[0]
    return np.array(v, dtype=np.float32).astype(dtype)


def elements_from_op(op, name: str = "value") -> np.ndarray:
    """An op's dense attribute as an array (complex ones too: make_context's
    attribute caster hands every dense attribute out as a DenseElementsAttr)."""
    op = op.operation if hasattr(op, "operation") else op
    return elements_to_array(op.attributes[name])
