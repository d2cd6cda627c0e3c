"""Element types: MLIR element type -> numpy dtype (ml_dtypes for the narrow floats)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir

_BY_NAME = {
    "i1": np.dtype(np.bool_),
    "i2": np.dtype(ml_dtypes.int2), "i4": np.dtype(ml_dtypes.int4),
    "i8": np.dtype(np.int8), "i16": np.dtype(np.int16), "i32": np.dtype(np.int32), "i64": np.dtype(np.int64),
    "ui2": np.dtype(ml_dtypes.uint2), "ui4": np.dtype(ml_dtypes.uint4),
    "ui8": np.dtype(np.uint8), "ui16": np.dtype(np.uint16), "ui32": np.dtype(np.uint32), "ui64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn), "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E4M3FNUZ": np.dtype(ml_dtypes.float8_e4m3fnuz), "f8E5M2FNUZ": np.dtype(ml_dtypes.float8_e5m2fnuz),
    "f8E4M3B11FNUZ": np.dtype(ml_dtypes.float8_e4m3b11fnuz), "f8E4M3": np.dtype(ml_dtypes.float8_e4m3),
    "f8E3M4": np.dtype(ml_dtypes.float8_e3m4),
    "complex<f32>": np.dtype(np.complex64), "complex<f64>": np.dtype(np.complex128),
}

# Floats numpy cannot compute in natively (or only slowly): math runs in f32, then rounds.
NARROW_FLOATS = frozenset(np.dtype(t) for t in (
    ml_dtypes.bfloat16, np.float16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2,
    ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e4m3b11fnuz,
    ml_dtypes.float8_e4m3, ml_dtypes.float8_e3m4))

_NAME_BY_DTYPE = {v: k for k, v in _BY_NAME.items()}


class UnsupportedType(Exception):
    pass


def element_dtype(element_type) -> np.dtype:
    name = str(element_type)
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UnsupportedType(f"element type {name} is not supported by the simulator") from None


def tensor_dtype(t) -> np.dtype:
    """The dtype of a ranked tensor type (or of a value's type)."""
    t = t.type if hasattr(t, "type") and not isinstance(t, ir.Type) else t
    return element_dtype(ir.RankedTensorType(t).element_type)


def tensor_shape(t) -> tuple[int, ...]:
    t = t.type if hasattr(t, "type") and not isinstance(t, ir.Type) else t
    return tuple(ir.RankedTensorType(t).shape)


def mlir_element_name(dtype) -> str:
    return _NAME_BY_DTYPE[np.dtype(dtype)]


def is_float(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype.kind == "f" or dtype in NARROW_FLOATS


def is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def is_bool(dtype) -> bool:
    return np.dtype(dtype) == np.bool_


def is_unsigned(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype.kind == "u" or dtype in (np.dtype(ml_dtypes.uint4), np.dtype(ml_dtypes.uint2))


def is_integer(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype.kind in "iu" or dtype in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4),
                                          np.dtype(ml_dtypes.int2), np.dtype(ml_dtypes.uint2))


def compute_dtype(dtype) -> np.dtype:
    """The dtype arithmetic runs in: f32 for narrow floats, int32 for 2/4-bit ints."""
    dtype = np.dtype(dtype)
    if dtype in NARROW_FLOATS:
        return np.dtype(np.float32)
    if dtype in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.int2)):
        return np.dtype(np.int32)
    if dtype in (np.dtype(ml_dtypes.uint4), np.dtype(ml_dtypes.uint2)):
        return np.dtype(np.uint32)
    return dtype


def bit_width(dtype) -> int:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return 1
    if dtype in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4)):
        return 4
    if dtype in (np.dtype(ml_dtypes.int2), np.dtype(ml_dtypes.uint2)):
        return 2
    return dtype.itemsize * 8


def int_range(dtype) -> tuple[int, int]:
    if is_bool(dtype):
        return 0, 1
    info = ml_dtypes.iinfo(dtype) if not np.issubdtype(np.dtype(dtype), np.integer) else np.iinfo(dtype)
    return int(info.min), int(info.max)


def uint_of_width(bits: int) -> np.dtype:
    return np.dtype({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits])
