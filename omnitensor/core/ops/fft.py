"""The FFT ops (the Array API fft extension, torch.fft names; ``dim=`` works too); the public
face is ``omnitensor.fft``.

Transforms run on the device when the backend has a native FFT (``backend.fft_<name>``:
NumPy, CuPy's cuFFT, dpnp's oneMKL); a backend without one (OpenCL) computes them on the
host, which ``host_fallbacks()`` lists. ``fft``/``ifft``/``fftn``/``ifftn`` are
differentiable (their adjoint is the inverse transform with the dual normalisation).
"""
from __future__ import annotations

from typing import Any, Sequence


from .. import dtypes as _dt, host_fallback
from ..graph import needs_grad, record
from ..shape_util import normalize_axis
from ..tensor import Tensor, _make
from .creation import arange, resolve_device
from .join import roll

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift", "host_fallbacks"]

_NORMS = ("backward", "ortho", "forward")
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
def host_fallbacks() -> list[str]:
    """FFT routines that ran on the host this session (the backend has no native one)."""
    return host_fallback.host_fallbacks("fft")


def _complex_input(x: Tensor) -> Tensor:
    if x.dtype.kind == "c":
        return x
    return x.to(x.dtype.to_complex() if x.dtype.kind == "f" else
                _dt.get_default_dtype().to_complex())


def _real_input(name: str, x: Tensor) -> Tensor:
    if x.dtype.kind == "c":
        raise _dt.DTypeError(f"fft.{name} expects a real tensor, got {x.dtype.name}")
    return x if x.dtype.kind == "f" else x.to(_dt.get_default_dtype())


def _run(name: str, x: Tensor, **kw: Any) -> Tensor:
    if kw.get("norm") not in _NORMS:
        raise ValueError(f"fft.{name}: norm must be one of {_NORMS}, got {kw.get('norm')!r}")
    data = host_fallback.run("fft", name, x.device, [x._data], **kw)
    out = _make(data, x.device, _dt.as_dtype(data.dtype))
    want = x.dtype.to_complex() if name in ("fft", "ifft", "fftn", "ifftn", "rfft", "rfftn",
                                            "ihfft") else x.dtype.to_real()
    return out if out.dtype is want else out.to(want)


def _axis(axis: Any, dim: Any) -> int:
    return -1 if axis is None and dim is None else (dim if axis is None else axis)


def _differentiable(name: str, inverse: str, x: Tensor, out: Tensor, norm: str,
                    axes: Any) -> Tensor:
    if needs_grad(x):
        record(name.upper() + "Backward0", _fft_backward, out, (x,), inverse=inverse,
               norm=_DUAL[norm], axes=axes)
    return out


def _fft_backward(node: Any, g: Tensor) -> tuple:
    fn = globals()[node.inverse]
    if node.inverse in ("ifft", "fft"):
        return (fn(g, axis=node.axes, norm=node.norm),)
    return (fn(g, axes=node.axes, norm=node.norm),)


def _no_grad(name: str, x: Tensor) -> None:
    if needs_grad(x):
        raise NotImplementedError(f"fft.{name} has no backward yet; use fft.fft/ifft/fftn/ifftn "
                                  f"(differentiable) or detach the input")


def fft(x: Tensor, /, *, n: int | None = None, axis: Any = None, norm: str = "backward",
        dim: Any = None) -> Tensor:
    """1-D discrete Fourier transform along ``axis``."""
    a = _axis(axis, dim)
    xc = _complex_input(x)
    out = _run("fft", xc, n=n, axis=a, norm=norm)
    if n is not None and n != x.shape[a]:
        _no_grad("fft(n=...)", x)
        return out
    return _differentiable("fft", "ifft", xc, out, norm, a)


def ifft(x: Tensor, /, *, n: int | None = None, axis: Any = None, norm: str = "backward",
         dim: Any = None) -> Tensor:
    """1-D inverse discrete Fourier transform."""
    a = _axis(axis, dim)
    xc = _complex_input(x)
    out = _run("ifft", xc, n=n, axis=a, norm=norm)
    if n is not None and n != x.shape[a]:
        _no_grad("ifft(n=...)", x)
        return out
    return _differentiable("ifft", "fft", xc, out, norm, a)


def _axes_s(x: Tensor, s: Any, axes: Any) -> tuple[Any, Any]:
    if axes is None and s is not None:
        axes = tuple(range(x.ndim - len(s), x.ndim))
    if axes is not None:
        axes = tuple(normalize_axis(a, x.ndim) for a in axes)
    return s, axes


def fftn(x: Tensor, /, *, s: Sequence[int] | None = None, axes: Any = None,
         norm: str = "backward", dim: Any = None) -> Tensor:
    """N-D discrete Fourier transform over ``axes`` (all when None)."""
    s, axes = _axes_s(x, s, axes if axes is not None else dim)
    xc = _complex_input(x)
    out = _run("fftn", xc, s=s, axes=axes, norm=norm)
    if s is not None:
        _no_grad("fftn(s=...)", x)
        return out
    return _differentiable("fftn", "ifftn", xc, out, norm, axes)


def ifftn(x: Tensor, /, *, s: Sequence[int] | None = None, axes: Any = None,
          norm: str = "backward", dim: Any = None) -> Tensor:
    """N-D inverse discrete Fourier transform."""
    s, axes = _axes_s(x, s, axes if axes is not None else dim)
    xc = _complex_input(x)
    out = _run("ifftn", xc, s=s, axes=axes, norm=norm)
    if s is not None:
        _no_grad("ifftn(s=...)", x)
        return out
    return _differentiable("ifftn", "fftn", xc, out, norm, axes)


def rfft(x: Tensor, /, *, n: int | None = None, axis: Any = None, norm: str = "backward",
         dim: Any = None) -> Tensor:
    """FFT of a real signal: the non-negative frequencies."""
    _no_grad("rfft", x)
    return _run("rfft", _real_input("rfft", x), n=n, axis=_axis(axis, dim), norm=norm)


def irfft(x: Tensor, /, *, n: int | None = None, axis: Any = None, norm: str = "backward",
          dim: Any = None) -> Tensor:
    """Inverse of :func:`rfft` (a real signal of length ``n``)."""
    _no_grad("irfft", x)
    return _run("irfft", _complex_input(x), n=n, axis=_axis(axis, dim), norm=norm)


def rfftn(x: Tensor, /, *, s: Sequence[int] | None = None, axes: Any = None,
          norm: str = "backward", dim: Any = None) -> Tensor:
    _no_grad("rfftn", x)
    s, axes = _axes_s(x, s, axes if axes is not None else dim)
    return _run("rfftn", _real_input("rfftn", x), s=s, axes=axes, norm=norm)


def irfftn(x: Tensor, /, *, s: Sequence[int] | None = None, axes: Any = None,
           norm: str = "backward", dim: Any = None) -> Tensor:
    _no_grad("irfftn", x)
    s, axes = _axes_s(x, s, axes if axes is not None else dim)
    return _run("irfftn", _complex_input(x), s=s, axes=axes, norm=norm)


def hfft(x: Tensor, /, *, n: int | None = None, axis: Any = None, norm: str = "backward",
         dim: Any = None) -> Tensor:
    """FFT of a Hermitian-symmetric signal (a real spectrum)."""
    _no_grad("hfft", x)
    return _run("hfft", _complex_input(x), n=n, axis=_axis(axis, dim), norm=norm)


def ihfft(x: Tensor, /, *, n: int | None = None, axis: Any = None, norm: str = "backward",
          dim: Any = None) -> Tensor:
    _no_grad("ihfft", x)
    return _run("ihfft", _real_input("ihfft", x), n=n, axis=_axis(axis, dim), norm=norm)


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Tensor:
    """Sample frequencies ``[0, 1, ..., n/2-1, -n/2, ..., -1] / (d * n)``."""
    if n <= 0:
        raise ValueError(f"fftfreq: n must be positive, got {n}")
    dt = _dt.get_default_dtype() if dtype is None else _dt.as_dtype(dtype)
    k = arange(n, device=resolve_device(device))
    k = k - (k >= (n + 1) // 2).to(_dt.int64) * n
    return k.to(dt) / (d * n)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Tensor:
    """Sample frequencies of :func:`rfft`: ``[0, 1, ..., n//2] / (d * n)``."""
    if n <= 0:
        raise ValueError(f"rfftfreq: n must be positive, got {n}")
    dt = _dt.get_default_dtype() if dtype is None else _dt.as_dtype(dtype)
    return arange(n // 2 + 1, device=resolve_device(device)).to(dt) / (d * n)


def _shift(x: Tensor, axes: Any, inverse: bool) -> Tensor:
    axes = tuple(range(x.ndim)) if axes is None else (
        (axes,) if isinstance(axes, int) else tuple(axes))
    shifts = [(-(x.shape[a] // 2) if inverse else x.shape[a] // 2) for a in axes]
    return roll(x, shifts, axis=axes) if axes else x.clone()


def fftshift(x: Tensor, /, *, axes: Any = None, dim: Any = None) -> Tensor:
    """Move the zero frequency to the centre."""
    return _shift(x, axes if axes is not None else dim, False)


def ifftshift(x: Tensor, /, *, axes: Any = None, dim: Any = None) -> Tensor:
    """Inverse of :func:`fftshift`."""
    return _shift(x, axes if axes is not None else dim, True)
