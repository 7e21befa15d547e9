"""Data types and the one promotion table every op uses.

A :class:`DType` is an interned object (``omnitensor.float32 is omnitensor.float32``) that
knows its NumPy equivalent; backends receive NumPy dtypes, which every stack we bind
(NumPy, CuPy, dpnp, PyOpenCL) understands.

Promotion follows the Array API lattice inside a kind (bool, signed, unsigned, real
floating, complex floating) and torch across kinds, where the standard leaves the result
open: bool < integers < floating < complex, and the higher kind's dtype wins
(``int64 + float32 -> float32``). Python scalars are *weak*: they take the tensor's dtype
when their kind is not higher (``float32 tensor + 2.5 -> float32``), else the default dtype
of their kind (``int tensor + 2.5 -> get_default_dtype()``).

``bfloat16`` (NumPy's through ml_dtypes) is a floating dtype outside the Array API lattice,
placed as torch places it: with float16 it promotes to float32, with float32/float64 to
those, with every integer and bool to bfloat16. It is a *storage* dtype: ops compute on it
in float32 (its :attr:`DType.compute`) and round once to bfloat16 (round to nearest even),
as torch does on CPU, so a backend only has to hold it and cast it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from ..errors import DTypeError

__all__ = [
    "DType", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128", "all_dtypes", "as_dtype",
    "result_type", "promote_types", "can_cast", "finfo", "iinfo", "get_default_dtype",
    "set_default_dtype", "scalar_dtype",
]

# kind order used for cross-kind promotion (torch's category order)
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


class DType:
    """An omnitensor data type. Interned: compare with ``is`` or ``==``."""

    __slots__ = ("name", "np", "itemsize", "kind", "compute", "unsupported")

    def __init__(self, name: str, np_dtype: Any, kind: str = "") -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        # 'b', 'i', 'u', 'f', 'c' (ml_dtypes' bfloat16 says 'V' to NumPy: given here)
        self.kind = kind or self.np.kind
        #: the dtype ops compute in: itself, except for storage dtypes (bfloat16 -> float32)
        self.compute: DType = self
        #: why no backend holds this dtype yet (None: supported where the device allows)
        self.unsupported: str | None = None

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype. NumPy reads this attribute wherever it accepts a dtype-like
        object, so ``np.dtype(ot.float64)`` and ``arr.astype(t.dtype)`` work (SciPy and
        scikit-learn convert between namespaces this way)."""
        return self.np

    # torch-style predicates -------------------------------------------------
    @property
    def is_floating_point(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def is_signed(self) -> bool:
        return self.kind in "ifc"

    @property
    def is_integer(self) -> bool:
        return self.kind in "iu"

    @property
    def is_inexact(self) -> bool:
        return self.kind in "fc"

    @property
    def is_quantized(self) -> bool:
        """Whether this is one of torch's quantized dtypes (qint8, quint8, qint32...)."""
        return self.kind == "q"

    @property
    def bits(self) -> int:
        return self.itemsize * 8

    def to_real(self) -> "DType":
        """complex64 -> float32, complex128 -> float64; other dtypes unchanged."""
        return _COMPLEX_TO_REAL.get(self, self)

    def to_complex(self) -> "DType":
        """float32 -> complex64, float64 -> complex128 (float16 -> complex64)."""
        if self.kind == "c":
            return self
        return complex128 if self is float64 else complex64

    def __repr__(self) -> str:
        return f"omnitensor.{self.name}"

    def __str__(self) -> str:
        return f"omnitensor.{self.name}"

    # interned: identity is equality, and the C-level identity hash keeps the per-op
    # dtype-rule lookups (dict keys of dtypes) cheap
    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other

    def __reduce__(self):
        return (as_dtype, (self.name,))


bool_ = DType("bool", np.bool_)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
uint32 = DType("uint32", np.uint32)
uint64 = DType("uint64", np.uint64)
float16 = DType("float16", np.float16)
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16, kind="f")
float32 = DType("float32", np.float32)
bfloat16.compute = float32
float64 = DType("float64", np.float64)
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)

all_dtypes: tuple[DType, ...] = (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, bfloat16, float32, float64, complex64, complex128,
)
_COMPLEX_TO_REAL = {complex64: float32, complex128: float64}

_BY_NAME: dict[str, DType] = {d.name: d for d in all_dtypes}
_BY_NAME.update({
    # torch spellings
    "float": float32, "double": float64, "half": float16, "long": int64, "int": int32,
    "short": int16, "cfloat": complex64, "cdouble": complex128, "bool_": bool_,
})
_BY_NP: dict[np.dtype, DType] = {d.np: d for d in all_dtypes}

# torch's float8 formats: named, so that libraries can compare and map them (quantization
# configs, dtype tables), but no backend holds them yet: a tensor of one is refused with
# UnsupportedDTypeError (core.device.check_dtype). Not in all_dtypes, so no promotion rule.
float8_e4m3fn = DType("float8_e4m3fn", ml_dtypes.float8_e4m3fn, kind="f")
float8_e4m3fnuz = DType("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz, kind="f")
float8_e5m2 = DType("float8_e5m2", ml_dtypes.float8_e5m2, kind="f")
float8_e5m2fnuz = DType("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz, kind="f")
float8_e8m0fnu = DType("float8_e8m0fnu", ml_dtypes.float8_e8m0fnu, kind="f")
float8_dtypes = (float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu)


def name_placeholders(dtypes: Any, why: Any) -> None:
    """Register dtypes that are named but hold no ordinary tensor (float8, quantized, the
    shell dtypes): findable by name, refused with ``why(dtype)`` by core.device.check_dtype."""
    for d in dtypes:
        d.unsupported = why(d)
        _BY_NAME[d.name] = d


name_placeholders(float8_dtypes, lambda d: f"{d.name} tensors are not supported by omnitensor "
                                           f"yet; keep such weights in bfloat16 or float16")
for _d in float8_dtypes:
    _BY_NP[_d.np] = _d  # ml_dtypes' own NumPy dtypes map back (the others share NumPy's)
# torch's quantized dtypes: the dtype of a quantized tensor (core/quantized), whose integer
# representation is an ordinary int8/uint8/int32 tensor (``storage``). Not in all_dtypes, so
# no promotion rule; an ordinary tensor of one is refused (use quantize_per_tensor). The
# sub-byte ones (quint4x2, quint2x4: two or four values packed in a byte) are named only.
qint8 = DType("qint8", np.int8, kind="q")
quint8 = DType("quint8", np.uint8, kind="q")
qint32 = DType("qint32", np.int32, kind="q")
quint4x2 = DType("quint4x2", np.uint8, kind="q")
quint2x4 = DType("quint2x4", np.uint8, kind="q")
quantized_dtypes = (qint8, quint8, qint32, quint4x2, quint2x4)
name_placeholders(quantized_dtypes, lambda d: (
    f"an ordinary tensor cannot have the quantized dtype {d.name}; make a quantized tensor "
    f"with quantize_per_tensor / quantize_per_channel"))
for _d in (quint4x2, quint2x4):
    _d.unsupported = (f"{_d.name} (sub-byte packed) quantized tensors are not supported by "
                      f"omnitensor; use quint8 or qint8")
# torch's complex32 (chalf: two float16 halves) is named the same way; NumPy has no such
# dtype, so it carries complex64's as a stand-in (never registered by NumPy dtype) and
# torch's 4-byte itemsize
complex32 = DType("complex32", np.complex64, kind="c")
complex32.itemsize = 4
complex32.unsupported = ("complex32 (chalf) tensors are not supported by omnitensor: no "
                         "backend holds half-precision complex numbers; use complex64")
_BY_NAME["complex32"] = _BY_NAME["chalf"] = complex32


#: torch's C++ scalar type names (``Double``, ``Long``...), which its messages print
_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
                 "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
                 "int8": "Char", "uint8": "Byte", "bool": "Bool",
                 "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def scalar_type_name(d: DType) -> str:
    """torch's scalar type name of ``d`` (``float64`` -> ``Double``), else its own name."""
    return _SCALAR_NAMES.get(d.name, d.name)


def as_dtype(obj: Any) -> DType:
    """Turn a DType, a name (``"float32"``, ``"float"``), a NumPy dtype or a Python type
    (``float``, ``int``, ``bool``, ``complex``) into a :class:`DType`."""
    if isinstance(obj, DType):
        return obj
    if obj is float:
        return get_default_dtype()
    if obj is int:
        return int64
    if obj is bool:
        return bool_
    if obj is complex:
        return get_default_dtype().to_complex()
    if isinstance(obj, str) and obj in _BY_NAME:
        return _BY_NAME[obj]
    try:
        found = _BY_NP.get(np.dtype(obj))
    except (TypeError, ValueError):
        found = None
    if found is None:
        what = (f"a {type(obj).__name__} (pass its .dtype)" if hasattr(obj, "shape")
                else repr(obj))
        raise DTypeError(
            f"unknown dtype {what}; omnitensor supports "
            + ", ".join(d.name for d in all_dtypes))
    return found


# ---------------------------------------------------------------------------- promotion
def _build_table() -> dict[tuple[DType, DType], DType]:
    table: dict[tuple[DType, DType], DType] = {}
    signed = [int8, int16, int32, int64]
    unsigned = [uint8, uint16, uint32, uint64]
    floats = [float16, float32, float64]
    complexes = [complex64, complex128]

    def put(a: DType, b: DType, r: DType) -> None:
        table[(a, b)] = r
        table[(b, a)] = r

    put(bool_, bool_, bool_)
    for chain in (signed, unsigned, floats, complexes):
        for i, a in enumerate(chain):
            for b in chain[i:]:
                put(a, b, b)
    # bfloat16 (torch): float16's neighbour, neither holding the other -> float32
    put(bfloat16, bfloat16, bfloat16)
    put(bfloat16, float16, float32)
    put(bfloat16, float32, float32)
    put(bfloat16, float64, float64)
    floats = floats + [bfloat16]
    # mixed signed/unsigned: the smallest signed type holding both (none for uint64)
    for u in unsigned:
        for s in signed:
            if u.itemsize < s.itemsize:
                put(u, s, s)
            elif u is not uint64:
                put(u, s, {1: int16, 2: int32, 4: int64}[u.itemsize])
    # real float with complex: complex of the higher precision
    for f in floats:
        for c in complexes:
            put(f, c, complex128 if (f is float64 or c is complex128) else complex64)
    # across kinds (torch): the operand of the higher kind decides
    everything = [bool_] + signed + unsigned + floats + complexes
    for a in everything:
        for b in everything:
            if (a, b) in table:
                continue
            ra, rb = _KIND_RANK[a.kind], _KIND_RANK[b.kind]
            if ra > rb:
                table[(a, b)] = a
            elif rb > ra:
                table[(a, b)] = b
    return table


_PROMOTION = _build_table()


def promote_types(a: DType, b: DType) -> DType:
    """The dtype two tensor operands promote to; TypeError when the lattice has none
    (only ``uint64`` with a signed integer)."""
    r = _PROMOTION.get((a, b))
    if r is None:
        if not (isinstance(a, DType) and isinstance(b, DType)):
            return promote_types(as_dtype(a), as_dtype(b))  # names, NumPy dtypes...
        if a.kind == "q" or b.kind == "q":
            raise DTypeError(
                f"ops on quantized tensors ({a.name}, {b.name}) are not supported: call "
                f".dequantize() for a float tensor first (docs/quantized.md)")
        raise DTypeError(
            f"no common dtype for {a.name} and {b.name}: uint64 does not promote with signed "
            f"integers; cast one operand first, e.g. x.to(omnitensor.int64)")
    return r


def scalar_dtype(value: Any, other: DType) -> DType:
    """The dtype a weak Python scalar takes next to a tensor of dtype ``other``."""
    if isinstance(value, bool):
        return other
    if isinstance(value, int):
        return int64 if other is bool_ else other
    if isinstance(value, float):
        return other if other.kind in "fc" else get_default_dtype()
    if isinstance(value, complex):
        if other.kind == "c":
            return other
        if other.kind == "f":
            return other.to_complex()
        return get_default_dtype().to_complex()
    raise DTypeError(f"expected a Tensor or a Python scalar, got {type(value).__name__}")


def result_type(*arrays_and_dtypes: Any) -> DType:
    """Array API ``result_type``: promote tensors, dtypes and (weakly) Python scalars."""
    strong: DType | None = None
    scalars = []
    for obj in arrays_and_dtypes:
        if isinstance(obj, (bool, int, float, complex)):
            scalars.append(obj)
            continue
        d = obj if isinstance(obj, DType) else getattr(obj, "dtype", obj)
        d = as_dtype(d)
        strong = d if strong is None else promote_types(strong, d)
    if strong is None:
        if not scalars:
            raise DTypeError("result_type needs at least one array or dtype")
        # only Python scalars: their default dtypes, promoted
        strong = _python_default(scalars[0])
        scalars = scalars[1:]
    for s in scalars:
        strong = promote_types(strong, scalar_dtype(s, strong))
    return strong


def _python_default(value: Any) -> DType:
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return get_default_dtype()
    return get_default_dtype().to_complex()


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """True when ``from_`` promotes to ``to`` without losing information (Array API), or
    for ``casting="same_kind"``, when the kind does not go down (torch's in-place rule)."""
    f = as_dtype(getattr(from_, "dtype", from_))
    t = as_dtype(to)
    if casting == "same_kind":
        return _KIND_RANK[f.kind] <= _KIND_RANK[t.kind]
    return _PROMOTION.get((f, t)) is t


class finfo:
    """Machine limits of a floating (or complex: of its real part) dtype."""

    def __init__(self, dtype: Any) -> None:
        d = as_dtype(getattr(dtype, "dtype", dtype))
        if d.kind not in "fc":
            raise DTypeError(f"finfo needs a floating-point dtype, got {d.name}")
        # NumPy's finfo refuses ml_dtypes' bfloat16; ml_dtypes' own gives the same fields
        info = ml_dtypes.finfo(d.np) if d is bfloat16 else np.finfo(d.np)
        self.dtype = d.to_real()
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.smallest_normal = float(info.smallest_normal)
        self.tiny = self.smallest_normal
        # 10 ** -(decimal digits): torch's bfloat16 says 0.01 where ml_dtypes rounds
        # through its own type (0.010009765625)
        self.resolution = 10.0 ** -int(info.precision)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, "
                f"eps={self.eps}, smallest_normal={self.smallest_normal}, bits={self.bits}, "
                f"dtype={self.dtype.name})")


class iinfo:
    """Machine limits of an integer dtype."""

    def __init__(self, dtype: Any) -> None:
        d = as_dtype(getattr(dtype, "dtype", dtype))
        if d.kind not in "iu":
            raise DTypeError(f"iinfo needs an integer dtype, got {d.name}")
        info = np.iinfo(d.np)
        self.dtype = d
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, bits={self.bits}, dtype={self.dtype.name})"


# --------------------------------------------------------------------------- defaults
class _Defaults:
    """Process-wide, like torch's default dtype."""
    float_dtype: DType = float32


_defaults = _Defaults()
# callbacks run when the default dtype changes: caches of dtype rules that read it (an int
# tensor divided by an int gives the default dtype) register one here to forget their entries
_on_default_dtype_change: list[Callable[[], None]] = []


def on_default_dtype_change(callback: Callable[[], None]) -> None:
    """Call ``callback()`` whenever :func:`set_default_dtype` changes the default."""
    _on_default_dtype_change.append(callback)


def get_default_dtype() -> DType:
    """The dtype of Python floats turned into tensors (float32 unless changed)."""
    return _defaults.float_dtype


def set_default_dtype(dtype: Any) -> None:
    """Set the default floating dtype (float16, bfloat16, float32 or float64), like
    torch."""
    d = as_dtype(dtype)
    if d.kind != "f":
        raise DTypeError(f"the default dtype must be a floating dtype, got {d.name}")
    if d is not _defaults.float_dtype:
        _defaults.float_dtype = d
        for callback in _on_default_dtype_change:
            callback()
