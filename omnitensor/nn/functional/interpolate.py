"""Resampling: ``interpolate`` (nearest, nearest-exact, linear, bilinear, bicubic,
trilinear, area), ``upsample*`` aliases, ``pixel_shuffle``/``pixel_unshuffle``, and the
spatial-transformer pair ``affine_grid`` (2-D) and ``grid_sample`` (grid_sample.py).

Every mode is separable, so one formula serves all ranks: along each spatial axis the
output is either a gather of source indices (nearest modes: ``index_select``, exact for
any dtype) or a product with a small ``(out, in)`` resampling matrix built once on the host
with torch's source-coordinate rules (linear, cubic with ``A = -0.75``, area = adaptive
average bins; with ``antialias`` torch's separable filter for bilinear and bicubic, whose
support widens with the downscaling factor) and cached per device. Both are differentiable
Tensor ops, so gradients of any order come from autograd.
"""
from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ...core.tensor import Tensor
from ._utils import INDEX_CACHE
from .grid_sample import grid_sample
from .pooling import _bin_matrix

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear",
           "pixel_shuffle", "pixel_unshuffle", "affine_grid", "grid_sample"]

_RANK = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")
_CUBIC_A = -0.75


def _sizes(x: Tensor, nd: int, size: Any, scale_factor: Any, recompute: bool | None
           ) -> tuple[tuple[int, ...], tuple[float | None, ...]]:
    """(output sizes, the per-axis scale factors the coordinate rules use: None means
    ``in / out``), as torch's ``_interp_output_size``."""
    if size is not None and scale_factor is not None:
        raise ValueError("interpolate: only one of size or scale_factor should be defined")
    if size is not None:
        sizes = tuple(size) if isinstance(size, (tuple, list)) else (size,) * nd
        if len(sizes) != nd:
            raise ValueError(f"interpolate: input with spatial shape {tuple(x.shape[2:])} "
                             f"needs size with {nd} values, got {tuple(sizes)}")
        out = tuple(int(v) for v in sizes)
        if any(v <= 0 for v in out):
            raise ValueError(f"interpolate: output size must be positive, got {out}")
        return out, (None,) * nd
    if scale_factor is None:
        raise ValueError("interpolate: either size or scale_factor should be defined")
    sf = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else \
        (scale_factor,) * nd
    if len(sf) != nd:
        raise ValueError(f"interpolate: input with spatial shape {tuple(x.shape[2:])} needs "
                         f"scale_factor with {nd} values, got {tuple(sf)}")
    sf = tuple(float(v) for v in sf)
    if any(not math.isfinite(v) or v <= 0 for v in sf):
        raise ValueError(f"interpolate: scale_factor must be positive and finite, got {sf}")
    out = tuple(int(math.floor(n * s)) for n, s in zip(x.shape[2:], sf))
    if any(v <= 0 for v in out):
        raise ValueError(f"interpolate: input size {tuple(x.shape[2:])} and scale_factor "
                         f"{sf} give an empty output {out}")
    return out, ((None,) * nd if recompute else sf)


def _scale(n_in: int, n_out: int, sf: float | None, align_corners: bool) -> float:
    """torch's ``area_pixel_compute_scale``."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / sf if sf is not None and sf > 0 else n_in / n_out


def _nearest_index(n_in: int, n_out: int, sf: float | None, exact: bool) -> np.ndarray:
    # torch computes the scale and the products in float32 for nearest
    scale = np.float32(1.0 / sf if sf is not None and sf > 0 else n_in / n_out)
    dst = np.arange(n_out, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * scale if exact else dst * scale)
    return np.minimum(src.astype(np.int64), n_in - 1)


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    a = _CUBIC_A

    def near(v: np.ndarray) -> np.ndarray:  # |v| <= 1
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v: np.ndarray) -> np.ndarray:  # 1 < |v| < 2
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _matrix(mode: str, n_in: int, n_out: int, sf: float | None,
            align_corners: bool) -> np.ndarray:
    """The ``(n_out, n_in)`` resampling matrix of ``mode`` along one axis (float64)."""
    if mode == "area":
        return _bin_matrix(n_in, n_out)
    scale = _scale(n_in, n_out, sf, align_corners)
    dst = np.arange(n_out, dtype=np.float64)
    src = dst * scale if align_corners else scale * (dst + 0.5) - 0.5
    m = np.zeros((n_out, n_in), dtype=np.float64)
    rows = np.arange(n_out)
    if mode == "bicubic":
        i0 = np.floor(src).astype(np.int64)
        t = src - i0
        for tap, w in zip(range(-1, 3), _cubic_weights(t)):
            np.add.at(m, (rows, np.clip(i0 + tap, 0, n_in - 1)), w)
        return m
    if not align_corners:
        src = np.maximum(src, 0.0)  # linear modes clamp negative coordinates to 0
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    np.add.at(m, (rows, i0), 1.0 - lam)
    np.add.at(m, (rows, i1), lam)
    return m


def _aa_filter(mode: str, x: np.ndarray) -> np.ndarray:
    """torch's antialias filters: the triangle (bilinear) and Keys' cubic with ``a = -0.5``
    (bicubic, as PIL's), of ``|x|``."""
    x = np.abs(x)
    if mode == "bilinear":
        return np.where(x < 1, 1 - x, 0.0)
    a = -0.5
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = (((x - 5) * x + 8) * x - 4) * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def _aa_matrix(mode: str, n_in: int, n_out: int, sf: float | None,
               align_corners: bool) -> np.ndarray:
    """The ``(n_out, n_in)`` antialiased resampling matrix (torch's
    ``_compute_index_ranges_weights`` with antialias): output ``i`` averages the inputs
    within ``support`` of its centre ``scale * (i + 0.5)``, the filter stretched by
    ``scale`` when downscaling, its weights normalized to sum to 1."""
    scale = _scale(n_in, n_out, sf, align_corners)
    size = 2 if mode == "bilinear" else 4
    support = size * 0.5 * scale if scale >= 1.0 else size * 0.5
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    m = np.zeros((n_out, n_in), dtype=np.float64)
    for i in range(n_out):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)  # int(): C's truncation toward zero
        hi = min(int(center + support + 0.5), n_in)
        j = np.arange(lo, hi)
        w = _aa_filter(mode, (j - center + 0.5) * invscale)
        total = w.sum()
        m[i, lo:hi] = w / total if total != 0 else w
    return m


def _matrix_as(np_dtype: Any, mode: str, n_in: int, n_out: int, sf: float | None,
               align_corners: bool, antialias: bool = False) -> np.ndarray:
    """:func:`_matrix` (or :func:`_aa_matrix`) in ``np_dtype`` (the input's dtype)."""
    build = _aa_matrix if antialias else _matrix
    return build(mode, n_in, n_out, sf, align_corners).astype(np_dtype)


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,  # noqa: A002
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resample ``(N, C, *spatial)`` to ``size`` or by ``scale_factor`` (torch's modes,
    coordinate rules, ``align_corners`` and ``recompute_scale_factor``)."""
    if mode not in _MODES:
        raise ValueError(f"interpolate: mode must be one of {', '.join(_MODES)}, got "
                         f"{mode!r}")
    nd = input.ndim - 2
    if nd < 1 or nd > 3:
        raise ValueError(f"interpolate: expected a 3-D, 4-D or 5-D input (N, C, *spatial), "
                         f"got shape {tuple(input.shape)}")
    if mode in _RANK and _RANK[mode] != nd:
        raise ValueError(f"interpolate: got {input.ndim}-D input, but {mode} mode needs "
                         f"{_RANK[mode] + 2}-D input")
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    if antialias and (mode not in ("bilinear", "bicubic") or input.ndim != 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and "
                         "requires a 4-D tensor as input")
    out, sfs = _sizes(input, nd, size, scale_factor, recompute_scale_factor)
    return resample(input, out, sfs, mode, bool(align_corners), antialias)


def resample(input: Tensor, out: tuple[int, ...], sfs: tuple[float | None, ...],  # noqa: A002
             mode: str, align_corners: bool, antialias: bool = False) -> Tensor:
    """:func:`interpolate` once the output sizes ``out`` and the coordinate rules' scale
    factors ``sfs`` (None: ``in / out``) are known (ATen's ``upsample_*`` kernels take
    both). An antialiased uint8 image is filtered in float32 and rounded back, as
    torchvision's Resize of uint8 images."""
    ac = align_corners
    dev, dt = input.device, input.dtype
    if antialias and dt.name == "uint8":
        y = resample(input.float(), out, sfs, mode, ac, True)
        return y.round().clamp(0, 255).to(dt)
    y = input
    if mode not in ("nearest", "nearest-exact") and dt.kind not in "fc":
        raise TypeError(f"interpolate: {mode} mode needs a floating input, got {dt.name}")
    for i, (n_in, n_out, sf) in enumerate(zip(input.shape[2:], out, sfs)):
        axis = 2 + i
        if mode in ("nearest", "nearest-exact"):
            if n_in == n_out and (sf is None or sf == 1.0):
                continue
            exact = mode == "nearest-exact"
            idx = INDEX_CACHE.get(("nearest", n_in, n_out, sf, exact), dev,
                                  functools.partial(_nearest_index, n_in, n_out, sf, exact))
            y = y.index_select(axis, idx)
            continue
        m = INDEX_CACHE.get(("resample", mode, n_in, n_out, sf, ac, dt.name, antialias), dev,
                            functools.partial(_matrix_as, dt.np, mode, n_in, n_out, sf, ac,
                                              antialias))
        y = (y.movedim(axis, -1) @ m.mT).movedim(-1, axis)
    return y


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None,  # noqa: A002
             mode: str = "nearest", align_corners: bool | None = None) -> Tensor:
    """Deprecated alias of :func:`interpolate` (torch's ``F.upsample``)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None,  # noqa: A002
                     scale_factor: Any = None) -> Tensor:
    """``interpolate(mode='nearest')``."""
    return interpolate(input, size, scale_factor, "nearest")


def upsample_bilinear(input: Tensor, size: Any = None,  # noqa: A002
                      scale_factor: Any = None) -> Tensor:
    """``interpolate(mode='bilinear', align_corners=True)`` (torch's legacy alias)."""
    return interpolate(input, size, scale_factor, "bilinear", True)


# ---------------------------------------------------------------- pixel shuffle
def _factor(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name}: factor must be a positive int, got {value!r}")
    return value


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """``(*, C * r^2, H, W) -> (*, C, H * r, W * r)`` (sub-pixel convolution's
    rearrangement)."""
    r = _factor(upscale_factor, "pixel_shuffle")
    if input.ndim < 3:
        raise ValueError(f"pixel_shuffle expects input to have at least 3 dimensions, but "
                         f"got input with {input.ndim} dimension(s)")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise ValueError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                         f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                         f"is not divisible by {r * r}")
    lead = list(lead)
    b = len(lead)
    x = input.reshape(lead + [c // (r * r), r, r, h, w])
    perm = list(range(b)) + [b, b + 3, b + 1, b + 4, b + 2]
    return x.permute(perm).reshape(lead + [c // (r * r), h * r, w * r])


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """``(*, C, H * r, W * r) -> (*, C * r^2, H, W)``, the inverse of
    :func:`pixel_shuffle`."""
    r = _factor(downscale_factor, "pixel_unshuffle")
    if input.ndim < 3:
        raise ValueError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                         f"got input with {input.ndim} dimension(s)")
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise ValueError(f"pixel_unshuffle expects height ({h}) and width ({w}) to be "
                         f"divisible by downscale_factor ({r})")
    lead = list(lead)
    b = len(lead)
    x = input.reshape(lead + [c, h // r, r, w // r, r])
    perm = list(range(b)) + [b, b + 2, b + 4, b + 1, b + 3]
    return x.permute(perm).reshape(lead + [c * r * r, h // r, w // r])


# ------------------------------------------------------- spatial transformers (2-D)
def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """Sampling grid ``(N, H, W, 2)`` of the affine maps ``theta`` ``(N, 2, 3)`` over an
    output of ``size`` ``(N, C, H, W)``, in ``[-1, 1]`` coordinates (torch's rule for
    ``align_corners``)."""
    size = tuple(size)
    if len(size) != 4:
        raise NotImplementedError(f"affine_grid: only 2-D sizes (N, C, H, W) are supported, "
                                  f"got {size}")
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (2, 3) or theta.shape[0] != size[0]:
        raise ValueError(f"affine_grid: expected theta of shape ({size[0]}, 2, 3) for size "
                         f"{size}, got {tuple(theta.shape)}")
    if theta.dtype.kind != "f":
        raise TypeError(f"affine_grid: expected a floating theta, got {theta.dtype.name}")
    n, _, h, w = size
    ac = bool(align_corners)

    def axis(k: int) -> np.ndarray:
        v = np.linspace(-1.0, 1.0, k) if k > 1 else np.zeros(1)
        return v if ac else v * (k - 1) / k

    base = np.empty((h, w, 3), dtype=np.float64)
    base[..., 0] = axis(w)[None, :]
    base[..., 1] = axis(h)[:, None]
    base[..., 2] = 1.0
    b = INDEX_CACHE.get(("affine_grid", h, w, ac, theta.dtype.name), theta.device,
                        lambda: base.reshape(h * w, 3).astype(theta.dtype.np))
    return (b @ theta.mT).reshape(n, h, w, 2)
