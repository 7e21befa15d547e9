"""torch's complex-number functions: ``angle``, ``complex``, ``polar``, ``view_as_real``,
``view_as_complex``, ``conj_physical``, ``resolve_conj``/``resolve_neg``.

Composites of the elementwise ops (so every backend has them and gradients follow torch's
convention for complex outputs of real inputs). omnitensor keeps no lazy conjugate or
negative bit, so ``resolve_conj``/``resolve_neg`` return their input, and the two ``view_as``
functions return new tensors holding the same numbers rather than views of one storage.
"""
from __future__ import annotations

import math
from typing import Any

from ...errors import ShapeError, UnsupportedDTypeError
from .. import dtypes as _dt
from ..tensor import Tensor
from . import join
from .elementwise import atan2, imag, isnan, real
from .out_arg import write_out
from .ternary import where

__all__ = ["angle", "complex", "polar", "view_as_real", "view_as_complex", "conj_physical",
           "resolve_conj", "resolve_neg", "chalf"]

_COMPLEX_OF = {_dt.float32: _dt.complex64, _dt.float64: _dt.complex128}


def angle(input: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """The argument of each element: ``atan2(imag, real)`` for complex tensors; for real
    ones 0 (x >= 0), pi (x < 0) or NaN, in a floating dtype (integers and bool: the
    default float)."""
    if input.dtype.kind == "c":
        return write_out("angle", atan2(imag(input), real(input)), out)
    x = input if input.dtype.kind == "f" else input.to(_dt.get_default_dtype())
    phase = where(x < 0, math.pi, 0.0).to(x.dtype)
    if x.dtype.kind == "f":
        phase = where(isnan(x), x, phase)
    return write_out("angle", phase, out)


def _check_parts(op: str, a: Tensor, b: Tensor, names: tuple[str, str]) -> None:
    for t, n in zip((a, b), names):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{n}' must be Tensor, not {type(t).__name__}")
    if a.dtype is not b.dtype:
        raise _dt.DTypeError(f"{op}: expected {names[0]} and {names[1]} of one dtype, got "
                             f"{a.dtype.name} and {b.dtype.name}")
    if a.dtype not in _COMPLEX_OF:
        raise _dt.DTypeError(f"{op}: expected float32 or float64 tensors, got "
                             f"{a.dtype.name}")


def complex(real: Tensor, imag: Tensor, *, out: Any = None) -> Tensor:  # noqa: A001
    """The complex tensor ``real + 1j * imag`` (both float32 or both float64;
    broadcasting)."""
    _check_parts("complex", real, imag, ("real", "imag"))
    return write_out("complex", real + imag * 1j, out)


def polar(abs: Tensor, angle: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """The complex tensor of modulus ``abs`` and argument ``angle``."""
    _check_parts("polar", abs, angle, ("abs", "angle"))
    return complex(abs * angle.cos(), abs * angle.sin(), out=out)


def view_as_real(input: Tensor) -> Tensor:  # noqa: A002
    """A complex tensor's real and imaginary parts on a new last axis of size 2."""
    if input.dtype.kind != "c":
        raise _dt.DTypeError(f"view_as_real is only supported for complex tensors, got "
                             f"{input.dtype.name}")
    return join.stack([real(input), imag(input)], -1)


def view_as_complex(input: Tensor) -> Tensor:  # noqa: A002
    """The complex tensor whose real and imaginary parts are the last axis (size 2) of a
    float32 or float64 tensor."""
    if input.dtype not in _COMPLEX_OF:
        raise _dt.DTypeError(f"view_as_complex is only supported for float32 and float64 "
                             f"tensors, got {input.dtype.name}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise ShapeError(f"view_as_complex: the last dimension must have size 2, got shape "
                         f"{tuple(input.shape)}")
    return complex(input[..., 0], input[..., 1])


def conj_physical(input: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """The complex conjugate, materialised (real tensors: a copy)."""
    res = input.conj() if input.dtype.kind == "c" else input.clone()
    return write_out("conj_physical", res, out)


def resolve_conj(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` itself: omnitensor materialises conjugates, there is no bit to resolve."""
    return input


def resolve_neg(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` itself: omnitensor materialises negations, there is no bit to resolve."""
    return input


def chalf(self: Tensor, memory_format: Any = None) -> Tensor:
    """``Tensor.chalf()``: complex32 is not a dtype omnitensor holds; refused clearly."""
    raise UnsupportedDTypeError(
        "chalf(): complex32 (torch.chalf) is not supported by omnitensor on any backend; "
        "use x.to(omnitensor.complex64)")
