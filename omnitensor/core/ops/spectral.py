"""Short-time Fourier transforms (``torch.stft`` / ``torch.istft``), written from framing,
windowing, ``fft.rfft``/``fft.irfft`` and overlap-add, so they run on every device and
differentiate through."""
from __future__ import annotations

from typing import Any

from ...errors import ShapeError
from .. import dtypes as _dt
from ..tensor import Tensor
from . import fft as _fft
from .creation import arange, ones, zeros
from .join import cat

__all__ = ["stft", "istft"]


def _pad_index(n: int, p: int, mode: str, device: Any) -> Tensor:
    """int64 indices that pad a length-``n`` axis by ``p`` on both sides."""
    core = arange(n, dtype=_dt.int64, device=device)
    if mode == "reflect":
        if p >= n:
            raise ValueError(f"stft: reflect padding of {p} needs a signal longer than {p}, "
                             f"got {n}; use pad_mode='constant' or center=False")
        left, right = arange(p, 0, -1, dtype=_dt.int64, device=device), \
            arange(n - 2, n - 2 - p, -1, dtype=_dt.int64, device=device)
    elif mode == "replicate":
        left = zeros(p, dtype=_dt.int64, device=device)
        right = left + (n - 1)
    elif mode == "circular":
        left = arange(n - p, n, dtype=_dt.int64, device=device)
        right = arange(0, p, dtype=_dt.int64, device=device)
    else:
        raise ValueError(f"stft: pad_mode must be 'reflect', 'constant', 'replicate' or "
                         f"'circular', got {mode!r}")
    return cat([left, core, right])


def _padded(x: Tensor, p: int, mode: str) -> Tensor:
    if p == 0:
        return x
    if mode == "constant":
        z = zeros(tuple(x.shape[:-1]) + (p,), dtype=x.dtype, device=x.device)
        return cat([z, x, z], -1)
    return x.index_select(-1, _pad_index(x.shape[-1], p, mode, x.device))


def _window(window: Tensor | None, win_length: int, n_fft: int, like: Tensor) -> Tensor:
    """The window of ``win_length`` points (ones when None), centred in ``n_fft``."""
    real = like.dtype.to_real() if like.dtype.kind == "c" else like.dtype
    if window is None:
        w = ones(win_length, dtype=real, device=like.device)
    else:
        if window.ndim != 1 or window.shape[0] != win_length:
            raise ShapeError(f"stft: expected a 1-D window of win_length={win_length} "
                             f"points, got shape {tuple(window.shape)}")
        w = window
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        w = cat([zeros(left, dtype=w.dtype, device=w.device), w,
                 zeros(n_fft - win_length - left, dtype=w.dtype, device=w.device)])
    return w


def _check(n_fft: int, hop: int, win: int) -> None:
    if n_fft <= 0 or hop <= 0 or not 0 < win <= n_fft:
        raise ValueError(f"stft: need n_fft > 0, hop_length > 0 and 0 < win_length <= n_fft, "
                         f"got n_fft={n_fft}, hop_length={hop}, win_length={win}")


def stft(input: Tensor, n_fft: int, hop_length: int | None = None,  # noqa: A002
         win_length: int | None = None, window: Tensor | None = None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """torch's ``stft``: a ``(..., freq, frames)`` complex tensor (``return_complex=False``
    gives torch's old real ``(..., freq, frames, 2)`` view)."""
    x = input
    if x.ndim not in (1, 2):
        raise ShapeError(f"stft: expected a 1-D or 2-D (batch, time) signal, got {x.ndim}-D")
    if return_complex is None and x.dtype.kind != "c":
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    _check(n_fft, hop, win)
    if center:
        x = _padded(x, n_fft // 2, pad_mode)
    if x.shape[-1] < n_fft:
        raise ValueError(f"stft: the (padded) signal has {x.shape[-1]} points, fewer than "
                         f"n_fft={n_fft}")
    frames = x.unfold(-1, n_fft, hop) * _window(window, win, n_fft, x)
    sided = (x.dtype.kind != "c") if onesided is None else onesided
    spec = _fft.rfft(frames) if sided else _fft.fft(frames)
    if normalized:
        spec = spec * (n_fft ** -0.5)
    spec = spec.transpose(-1, -2)
    return spec if return_complex is not False else _as_real(spec)


def _as_real(z: Tensor) -> Tensor:
    from .elementwise import imag, real
    from .join import stack
    return stack([real(z), imag(z)], -1)


def istft(input: Tensor, n_fft: int, hop_length: int | None = None,  # noqa: A002
          win_length: int | None = None, window: Tensor | None = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """torch's ``istft``: the signal whose :func:`stft` is ``input`` (overlap-add of the
    inverse frames, divided by the window's overlap-add envelope)."""
    spec = input
    if spec.dtype.kind != "c":
        raise _dt.DTypeError("istft: expected a complex spectrogram (stft(...,"
                             " return_complex=True))")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    _check(n_fft, hop, win)
    sided = (spec.shape[-2] != n_fft) if onesided is None else onesided
    frames_spec = spec.transpose(-1, -2)                # (..., frames, freq)
    if normalized:
        frames_spec = frames_spec * (n_fft ** 0.5)
    frames = _fft.irfft(frames_spec, n=n_fft) if sided and not return_complex else \
        _fft.ifft(frames_spec, n=n_fft)
    if not return_complex and frames.dtype.kind == "c":
        frames = frames.real
    w = _window(window, win, n_fft, frames)
    frames = frames * w
    n_frames = frames.shape[-2]
    total = n_fft + hop * (n_frames - 1)
    idx = (arange(n_frames, dtype=_dt.int64, device=spec.device).unsqueeze(-1) * hop
           + arange(n_fft, dtype=_dt.int64, device=spec.device)).reshape(-1)
    lead = tuple(frames.shape[:-2])
    y = zeros(lead + (total,), dtype=frames.dtype, device=spec.device)
    y = y.index_add(-1, idx, frames.reshape(lead + (-1,)))
    env = zeros(total, dtype=w.dtype, device=spec.device).index_add(
        0, idx, (w * w).repeat(n_frames))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + length
    end = min(end, total)
    env_part = env[start:end]
    if bool((env_part.abs() < 1e-11).any().item()):
        raise RuntimeError("istft: window overlap add min: the window's overlap-add "
                           "envelope is zero somewhere (NOLA fails); use another window or "
                           "hop_length")
    out = y[..., start:end] / env_part
    if length is not None and out.shape[-1] < length:
        out = cat([out, zeros(lead + (length - out.shape[-1],), dtype=out.dtype,
                              device=out.device)], -1)
    return out
