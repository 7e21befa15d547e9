"""NumPy dtype -> C type facts used by every kernel generator (OpenCL C names; a
:class:`~omnitensor.kernels.dialect.Dialect` renders them for other languages).

Each dtype gets a :class:`CType`: its storage type in buffers, the type arithmetic is done in
(``float`` for ``half``: values are loaded with ``vload_half`` and stored with
``vstore_half_rte``, so float16 math is float32 math rounded on store, as torch does on CPU),
the load/store spelling, and how a Python scalar of that dtype is packed into a by-value
kernel argument. Complex numbers are ``float2``/``double2`` vectors (real, imag), which have
NumPy's complex memory layout.

"Bit containers" (``V1``...``V16``) move bytes without looking at them: copies, ``where``,
gathers and flips only depend on the item size, so they are generated once per size rather
than once per dtype.
"""
from __future__ import annotations

import struct
from typing import Any, Callable

import ml_dtypes
import numpy as np

from .dialect import OPENCL_C, Dialect


def _identity(v: bytes) -> bytes:
    return v


class CType:
    """How one dtype looks in OpenCL C."""

    __slots__ = ("key", "np", "c", "comp", "kind", "itemsize", "real", "wide", "pack",
                 "half", "bf16", "scalar_c", "zero")

    def __init__(self, key: str, np_dtype: Any, c: str, comp: str, kind: str,
                 fmt: str, real: str = "", wide: str = "") -> None:
        self.key = key                 # short name used in kernel names: f32, c64, u8...
        self.np = np.dtype(np_dtype) if np_dtype is not None else None
        self.c = c                     # storage type
        self.comp = comp               # compute type (differs for half only)
        self.kind = kind               # numpy kind letter; "V" for bit containers
        self.itemsize = struct.calcsize("=" + fmt) if fmt else 0
        self.real = real or comp       # real component type of complex
        self.wide = wide               # unsigned type wide enough for wrapping int math
        self.half = c == "half"
        self.bf16 = key == "bf16"      # bfloat16: its bits in a ushort, computed in float
        self.scalar_c = comp           # type of a by-value scalar argument
        packer = struct.Struct("=" + fmt)
        self.pack: Callable[..., bytes]
        if kind == "V":  # bit containers receive the raw bytes already
            self.pack = _identity
        elif kind == "c":
            self.pack = lambda v, p=packer.pack: p(v.real, v.imag)
        elif kind == "b":
            self.pack = lambda v, p=packer.pack: p(1 if v else 0)
        else:
            self.pack = packer.pack
        #: bytes of a zero scalar argument (passed where the operand is an array)
        self.zero = bytes(packer.size)

    def load(self, ptr: str, idx: str, d: Dialect = OPENCL_C) -> str:
        """C expression loading element ``idx`` of ``ptr`` into the compute type."""
        if self.bf16:  # the high half of a float
            return f"{d.bits_as_float}((uint){ptr}[{idx}] << 16)"
        return d.load_half(idx, ptr) if self.half else f"{ptr}[{idx}]"

    def store(self, ptr: str, idx: str, val: str, d: Dialect = OPENCL_C) -> str:
        """C statement storing ``val`` (compute type) at element ``idx`` of ``ptr``."""
        if self.half:
            return d.store_half(val, idx, ptr)
        if self.bf16:  # round to nearest even (ml_dtypes', torch's); NaN -> sign | 0x7fc0
            return (f"{{ float bv_ = {val}; uint bb_ = {d.float_as_bits}(bv_); {ptr}[{idx}] = (ushort)("
                    f"isnan(bv_) ? ((bb_ >> 16) & 0x8000u) | 0x7fc0u : "
                    f"(bb_ + 0x7fffu + ((bb_ >> 16) & 1u)) >> 16); }}")
        return f"{ptr}[{idx}] = {val};"

    def __repr__(self) -> str:
        return f"CType({self.key})"


_TABLE = [
    CType("b1", np.bool_, "uchar", "uchar", "b", "B", wide="uint"),
    CType("i8", np.int8, "char", "char", "i", "b", wide="uint"),
    CType("i16", np.int16, "short", "short", "i", "h", wide="uint"),
    CType("i32", np.int32, "int", "int", "i", "i", wide="uint"),
    CType("i64", np.int64, "long", "long", "i", "q", wide="ulong"),
    CType("u8", np.uint8, "uchar", "uchar", "u", "B", wide="uint"),
    CType("u16", np.uint16, "ushort", "ushort", "u", "H", wide="uint"),
    CType("u32", np.uint32, "uint", "uint", "u", "I", wide="uint"),
    CType("u64", np.uint64, "ulong", "ulong", "u", "Q", wide="ulong"),
    CType("f16", np.float16, "half", "float", "f", "f"),
    CType("bf16", ml_dtypes.bfloat16, "ushort", "float", "f", "f"),
    CType("f32", np.float32, "float", "float", "f", "f"),
    CType("f64", np.float64, "double", "double", "f", "d"),
    CType("c64", np.complex64, "float2", "float2", "c", "ff", real="float"),
    CType("c128", np.complex128, "double2", "double2", "c", "dd", real="double"),
]
# the float16 scalar is passed as float (its compute type), so its size is 4; the storage
# item size is 2
_TABLE[9].itemsize = 2
_TABLE[10].itemsize = 2  # bfloat16 likewise (its scalar is a float)

BY_NP: dict[np.dtype, CType] = {t.np: t for t in _TABLE if t.np is not None}
BY_KEY: dict[str, CType] = {t.key: t for t in _TABLE}

#: bit containers by item size
BITS: dict[int, CType] = {
    1: CType("v1", None, "uchar", "uchar", "V", "B"),
    2: CType("v2", None, "ushort", "ushort", "V", "H"),
    4: CType("v4", None, "uint", "uint", "V", "I"),
    8: CType("v8", None, "ulong", "ulong", "V", "Q"),
    16: CType("v16", None, "ulong2", "ulong2", "V", "QQ"),
}


def ctype(dtype: np.dtype) -> CType:
    """The CType of a NumPy dtype (KeyError for dtypes OpenCL kernels cannot hold)."""
    return BY_NP[dtype]


def bits_of(dtype: np.dtype) -> CType:
    """The bit container with ``dtype``'s item size."""
    return BITS[dtype.itemsize]


def pack_bits(value: Any, dtype: np.dtype) -> bytes:
    """The raw bytes of the Python scalar ``value`` stored as ``dtype``."""
    return np.asarray(value, dtype=dtype).tobytes()


#: bytes of one int64 kernel argument
pack_i64 = struct.Struct("=q").pack
pack_i32 = struct.Struct("=i").pack
pack_u32 = struct.Struct("=I").pack
pack_f64 = struct.Struct("=d").pack
