"""The FFT ops (the Array API fft extension and torch.fft); the public face is
``omnitensor.fft``.

Two transforms run natively: the complex one (``fftn``/``ifftn`` over some axes) and the
real pair (``rfft``/``irfft`` along one axis), on the device when the backend has them
(``backend.fft_<name>``: NumPy, CuPy's cuFFT, dpnp's oneMKL) and on the host otherwise
(``host_fallbacks()`` lists those). Each has its backward here (the adjoint transform with
the dual normalisation). Everything else is written from them and from differentiable
ops, so every transform has a gradient: ``n=``/``s=`` crop or zero-pad the input first,
``rfftn`` is an ``rfft`` then an ``fftn``, ``hfft`` is ``irfft`` of the conjugate,
the 2-D variants are the n-D ones over the last two axes.

Signatures take both spellings: the standard's keyword-only ``axis``/``axes`` and torch's
positional ``n, dim, norm`` (``norm=None`` is ``"backward"``).
"""
from __future__ import annotations

from typing import Any, Sequence

from .. import dtypes as _dt, host_fallback
from ..graph import needs_grad, record
from ..shape_util import normalize_axis
from ..tensor import Tensor, _make
from .creation import arange, resolve_device, zeros
from .join import cat, roll

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "hfftn", "ihfftn",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift", "host_fallbacks"]

_NORMS = ("backward", "ortho", "forward")
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def host_fallbacks() -> list[str]:
    """FFT routines that ran on the host this session (the backend has no native one)."""
    return host_fallback.host_fallbacks("fft")


def _norm(name: str, norm: Any) -> str:
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f"fft.{name}: norm must be one of {_NORMS}, got {norm!r}")
    return norm


def _complex_input(x: Tensor) -> Tensor:
    if x.dtype.kind == "c":
        return x
    return x.to(x.dtype.to_complex() if x.dtype.kind == "f" else
                _dt.get_default_dtype().to_complex())


def _real_input(name: str, x: Tensor) -> Tensor:
    if x.dtype.kind == "c":
        raise _dt.DTypeError(f"fft.{name} expects a real tensor, got {x.dtype.name}")
    return x if x.dtype.kind == "f" else x.to(_dt.get_default_dtype())


def _native(name: str, x: Tensor, want: _dt.DType, **kw: Any) -> Tensor:
    data = host_fallback.run("fft", name, x.device, [x._data], **kw)
    out = _make(data, x.device, _dt.as_dtype(data.dtype))
    return out if out.dtype is want else out.to(want)


def _resize(x: Tensor, axis: int, n: int | None) -> Tensor:
    """``x`` cropped or zero-padded to ``n`` along ``axis`` (differentiable)."""
    size = x.shape[axis]
    if n is None or n == size:
        return x
    if n < 1:
        raise ValueError(f"fft: invalid number of data points ({n}) specified")
    if n < size:
        return x.narrow(axis, 0, n)
    shape = list(x.shape)
    shape[axis] = n - size
    return cat([x, zeros(tuple(shape), dtype=x.dtype, device=x.device)], axis)


def _axes(x: Tensor, s: Any, axes: Any, default: Any = None) -> tuple[list, tuple]:
    """(sizes or Nones, normalised axes) of an n-D transform."""
    if isinstance(axes, int):
        axes = (axes,)
    if axes is None:
        axes = default if s is None else tuple(range(x.ndim - len(s), x.ndim))
    axes = tuple(range(x.ndim)) if axes is None else tuple(normalize_axis(a, x.ndim)
                                                           for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"fft: repeated axis in {axes}")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"fft: s ({list(s)}) and dim ({list(axes)}) must have the same "
                         f"length")
    sizes = [None] * len(axes) if s is None else [None if v == -1 else v for v in s]
    return sizes, axes


# ------------------------------------------------------------------ native transforms
def _c2c(x: Tensor, axes: tuple, norm: str, inverse: bool) -> Tensor:
    xc = _complex_input(x)
    if not axes:
        return xc
    out = _native("ifftn" if inverse else "fftn", xc, xc.dtype, axes=axes, norm=norm)
    if needs_grad(xc):
        record("FftC2CBackward0", _c2c_backward, out, (xc,), axes=axes, norm=norm,
               inverse=inverse)
    return out


def _c2c_backward(node: Any, g: Tensor) -> tuple:
    return (_c2c(g, node.axes, _DUAL[node.norm], not node.inverse),)


def _r2c(x: Tensor, axis: int, norm: str) -> Tensor:
    """``rfft`` along one axis: the n//2 + 1 non-negative frequencies."""
    xr = x
    out = _native("rfft", xr, xr.dtype.to_complex(), axis=axis, norm=norm)
    if needs_grad(xr):
        record("FftR2CBackward0", _r2c_backward, out, (xr,), axis=axis, norm=norm,
               n=xr.shape[axis])
    return out


def _r2c_backward(node: Any, g: Tensor) -> tuple:
    # rfft = the first n//2+1 bins of the complex transform: pad the gradient back to n
    # bins and apply that transform's adjoint, keeping the real part
    full = _resize(g, node.axis, node.n)
    return (_c2c(full, (node.axis,), _DUAL[node.norm], True).real,)


def _c2r(x: Tensor, axis: int, n: int, norm: str) -> Tensor:
    """``irfft`` along one axis to ``n`` real points (x holds n//2 + 1 bins)."""
    out = _native("irfft", x, x.dtype.to_real(), n=n, axis=axis, norm=norm)
    if needs_grad(x):
        record("FftC2RBackward0", _c2r_backward, out, (x,), axis=axis, norm=norm,
               bins=x.shape[axis])
    return out


def _c2r_backward(node: Any, g: Tensor) -> tuple:
    # torch's fft_c2r_backward: rfft of the gradient, the bins that stand for two
    # (a frequency and its mirror) doubled
    gi = _r2c(g, node.axis, _DUAL[node.norm])
    double = g.shape[node.axis] - gi.shape[node.axis]
    if double > 0:
        scale = [1.0] + [2.0] * double + [1.0] * (gi.shape[node.axis] - 1 - double)
        view = [1] * gi.ndim
        view[node.axis] = len(scale)
        from .creation import tensor
        gi = gi * tensor(scale, dtype=gi.dtype.to_real(), device=gi.device).reshape(view)
    return (gi,)


# ------------------------------------------------------------------- the 1-D transforms
def _one_axis(x: Tensor, dim: Any, axis: Any) -> int:
    a = dim if axis is None else axis
    return normalize_axis(-1 if a is None else a, x.ndim)


def fft(x: Tensor, /, n: int | None = None, dim: Any = None, norm: str | None = None, *,
        axis: Any = None) -> Tensor:
    """1-D discrete Fourier transform along ``dim``/``axis`` (last by default)."""
    a = _one_axis(x, dim, axis)
    return _c2c(_resize(_complex_input(x), a, n), (a,), _norm("fft", norm), False)


def ifft(x: Tensor, /, n: int | None = None, dim: Any = None, norm: str | None = None, *,
         axis: Any = None) -> Tensor:
    """1-D inverse discrete Fourier transform."""
    a = _one_axis(x, dim, axis)
    return _c2c(_resize(_complex_input(x), a, n), (a,), _norm("ifft", norm), True)


def rfft(x: Tensor, /, n: int | None = None, dim: Any = None, norm: str | None = None, *,
         axis: Any = None) -> Tensor:
    """FFT of a real signal: the non-negative frequencies."""
    a = _one_axis(x, dim, axis)
    return _r2c(_resize(_real_input("rfft", x), a, n), a, _norm("rfft", norm))


def irfft(x: Tensor, /, n: int | None = None, dim: Any = None, norm: str | None = None, *,
          axis: Any = None) -> Tensor:
    """Inverse of :func:`rfft`: a real signal of ``n`` points (``2 * (bins - 1)`` by
    default)."""
    a = _one_axis(x, dim, axis)
    xc = _complex_input(x)
    out_n = 2 * (xc.shape[a] - 1) if n is None else n
    if out_n < 1:
        raise ValueError(f"fft.irfft: invalid number of data points ({out_n}) specified")
    return _c2r(_resize(xc, a, out_n // 2 + 1), a, out_n, _norm("irfft", norm))


def hfft(x: Tensor, /, n: int | None = None, dim: Any = None, norm: str | None = None, *,
         axis: Any = None) -> Tensor:
    """FFT of a Hermitian-symmetric signal (a real spectrum): ``irfft`` of the conjugate
    with the dual normalisation."""
    return irfft(_complex_input(x).conj(), n, dim, _DUAL[_norm("hfft", norm)], axis=axis)


def ihfft(x: Tensor, /, n: int | None = None, dim: Any = None, norm: str | None = None, *,
          axis: Any = None) -> Tensor:
    """Inverse of :func:`hfft`: the conjugate ``rfft`` with the dual normalisation."""
    return rfft(x, n, dim, _DUAL[_norm("ihfft", norm)], axis=axis).conj()


# ------------------------------------------------------------------- the n-D transforms
def _c2c_n(name: str, x: Tensor, s: Any, dim: Any, axes: Any, norm: Any, inverse: bool,
           default: Any = None) -> Tensor:
    xc = _complex_input(x)
    sizes, ax = _axes(xc, s, dim if axes is None else axes, default)
    for a, n in zip(ax, sizes):
        xc = _resize(xc, a, n)
    return _c2c(xc, ax, _norm(name, norm), inverse)


def fftn(x: Tensor, /, s: Sequence[int] | None = None, dim: Any = None,
         norm: str | None = None, *, axes: Any = None) -> Tensor:
    """N-D discrete Fourier transform over ``dim``/``axes`` (all when None)."""
    return _c2c_n("fftn", x, s, dim, axes, norm, False)


def ifftn(x: Tensor, /, s: Sequence[int] | None = None, dim: Any = None,
          norm: str | None = None, *, axes: Any = None) -> Tensor:
    """N-D inverse discrete Fourier transform."""
    return _c2c_n("ifftn", x, s, dim, axes, norm, True)


def fft2(x: Tensor, /, s: Sequence[int] | None = None, dim: Any = (-2, -1),
         norm: str | None = None) -> Tensor:
    return _c2c_n("fft2", x, s, dim, None, norm, False)


def ifft2(x: Tensor, /, s: Sequence[int] | None = None, dim: Any = (-2, -1),
          norm: str | None = None) -> Tensor:
    return _c2c_n("ifft2", x, s, dim, None, norm, True)


def rfftn(x: Tensor, /, s: Sequence[int] | None = None, dim: Any = None,
          norm: str | None = None, *, axes: Any = None) -> Tensor:
    """N-D FFT of a real signal: ``rfft`` over the last axis, then the complex FFT over
    the others."""
    xr = _real_input("rfftn", x)
    sizes, ax = _axes(xr, s, dim if axes is None else axes)
    for a, n in zip(ax, sizes):
        xr = _resize(xr, a, n)
    nm = _norm("rfftn", norm)
    return _c2c(_r2c(xr, ax[-1], nm), ax[:-1], nm, False) if ax else _complex_input(xr)


def irfftn(x: Tensor, /, s: Sequence[int] | None = None, dim: Any = None,
           norm: str | None = None, *, axes: Any = None) -> Tensor:
    """Inverse of :func:`rfftn`: the complex inverse over all but the last axis, then
    ``irfft`` on it (``s[-1]`` real points, ``2 * (bins - 1)`` by default)."""
    xc = _complex_input(x)
    sizes, ax = _axes(xc, s, dim if axes is None else axes)
    if not ax:
        return xc.real
    for a, n in zip(ax[:-1], sizes[:-1]):
        xc = _resize(xc, a, n)
    nm = _norm("irfftn", norm)
    last = ax[-1]
    out_n = 2 * (xc.shape[last] - 1) if sizes[-1] is None else sizes[-1]
    y = _c2c(xc, ax[:-1], nm, True)
    return _c2r(_resize(y, last, out_n // 2 + 1), last, out_n, nm)


def rfft2(x: Tensor, /, s: Sequence[int] | None = None, dim: Any = (-2, -1),
          norm: str | None = None) -> Tensor:
    return rfftn(x, s, dim, norm)


def irfft2(x: Tensor, /, s: Sequence[int] | None = None, dim: Any = (-2, -1),
           norm: str | None = None) -> Tensor:
    return irfftn(x, s, dim, norm)


def hfftn(x: Tensor, /, s: Sequence[int] | None = None, dim: Any = None,
          norm: str | None = None) -> Tensor:
    """N-D FFT of a Hermitian-symmetric signal: ``irfftn`` of the conjugate, dual norm."""
    return irfftn(_complex_input(x).conj(), s, dim, _DUAL[_norm("hfftn", norm)])


def ihfftn(x: Tensor, /, s: Sequence[int] | None = None, dim: Any = None,
           norm: str | None = None) -> Tensor:
    """Inverse of :func:`hfftn`: the conjugate ``rfftn``, dual norm."""
    return rfftn(x, s, dim, _DUAL[_norm("ihfftn", norm)]).conj()


def hfft2(x: Tensor, /, s: Sequence[int] | None = None, dim: Any = (-2, -1),
          norm: str | None = None) -> Tensor:
    return hfftn(x, s, dim, norm)


def ihfft2(x: Tensor, /, s: Sequence[int] | None = None, dim: Any = (-2, -1),
           norm: str | None = None) -> Tensor:
    return ihfftn(x, s, dim, norm)


# ----------------------------------------------------------------- frequencies, shifts
def _freq_dtype(dtype: Any) -> _dt.DType:
    return _dt.get_default_dtype() if dtype is None else _dt.as_dtype(dtype)


def fftfreq(n: int, /, d: float = 1.0, *, dtype: Any = None, device: Any = None,
            requires_grad: bool = False, **_: Any) -> Tensor:
    """Sample frequencies ``[0, 1, ..., n/2-1, -n/2, ..., -1] / (d * n)``."""
    if n <= 0:
        raise ValueError(f"fftfreq: n must be positive, got {n}")
    k = arange(n, device=resolve_device(device))
    k = k - (k >= (n + 1) // 2).to(_dt.int64) * n
    return (k.to(_freq_dtype(dtype)) / (d * n)).requires_grad_(requires_grad)


def rfftfreq(n: int, /, d: float = 1.0, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, **_: Any) -> Tensor:
    """Sample frequencies of :func:`rfft`: ``[0, 1, ..., n//2] / (d * n)``."""
    if n <= 0:
        raise ValueError(f"rfftfreq: n must be positive, got {n}")
    out = arange(n // 2 + 1, device=resolve_device(device)).to(_freq_dtype(dtype)) / (d * n)
    return out.requires_grad_(requires_grad)


def _shift(x: Tensor, axes: Any, inverse: bool) -> Tensor:
    axes = tuple(range(x.ndim)) if axes is None else (
        (axes,) if isinstance(axes, int) else tuple(axes))
    shifts = [(-(x.shape[a] // 2) if inverse else x.shape[a] // 2) for a in axes]
    return roll(x, shifts, axis=axes) if axes else x.clone()


def fftshift(x: Tensor, /, dim: Any = None, *, axes: Any = None) -> Tensor:
    """Move the zero frequency to the centre."""
    return _shift(x, axes if axes is not None else dim, False)


def ifftshift(x: Tensor, /, dim: Any = None, *, axes: Any = None) -> Tensor:
    """Inverse of :func:`fftshift`."""
    return _shift(x, axes if axes is not None else dim, True)
