"""``grid_sample``: sample an image ``(N, C, H, W)`` or a volume ``(N, C, D, H, W)`` at the
points of a grid of ``[-1, 1]`` coordinates (torch's ``grid_sampler_2d``/``_3d``).

One formula for both ranks: the grid's coordinates become source pixel coordinates (torch's
``grid_sampler_compute_source_index``: unnormalize, then clip or reflect for the padding
mode), and the output is a weighted sum of *taps*, gathers of the flattened image at integer
coordinates with out-of-range taps masked to zero. Bilinear (trilinear for volumes) sums
the ``2**rank`` corners, nearest takes one tap, bicubic (images only) sums 4x4 taps with
torch's cubic-convolution weights (``A = -0.75``). The integer parts are detached and the
weights are Tensor ops, so the gradients in the input and the grid come from autograd.
"""
from __future__ import annotations

import itertools
from typing import Sequence

from ...core.dtypes import int64 as ot_int64
from ...core.tensor import Tensor

__all__ = ["grid_sample"]

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_CUBIC_A = -0.75


def _reflect(coord: Tensor, low2: int, high2: int) -> Tensor:
    """torch's ``reflect_coordinates`` between ``low2 / 2`` and ``high2 / 2``."""
    if low2 == high2:
        return coord * 0
    lo, span = low2 / 2, (high2 - low2) / 2
    c = (coord - lo).abs()
    flips = (c / span).floor()
    extra = c - flips * span
    even = (flips.remainder(2) == 0).to(coord.dtype)
    return even * (extra + lo) + (1 - even) * (span - extra + lo)


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    """``[-1, 1]`` -> pixel coordinates (torch's ``grid_sampler_unnormalize``)."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _pad(c: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """Pixel coordinates clipped (border) or reflected (reflection) into the image (torch's
    ``compute_coordinates``); zeros padding leaves them, the taps mask them."""
    if padding_mode == "border":
        return c.clamp(0, size - 1)
    if padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        return c.clamp(0, size - 1)
    return c


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """torch's ``get_cubic_upsample_coefficients`` for the taps at -1, 0, 1, 2."""
    a = _CUBIC_A

    def near(x: Tensor) -> Tensor:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Tensor) -> Tensor:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _check(input: Tensor, grid: Tensor, mode: str, padding_mode: str) -> None:  # noqa: A002
    """torch's argument rules (``F.grid_sample``'s and ``grid_sampler``'s)."""
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be "
                         f"'zeros', 'border', or 'reflection', but got: '{padding_mode}'")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same "
                           f"number of dimensions, but got input with sizes "
                           f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch "
                           f"size, but got input with sizes {list(input.shape)} and grid "
                           f"with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} "
                           f"in last dimension, but got grid with sizes {list(grid.shape)}")
    if any(s == 0 for s in input.shape[2:]):
        raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                           f"dimensions, but input has sizes {list(input.shape)} with "
                           f"dimension {input.shape.index(0, 2)} being empty")
    if mode == "bicubic" and input.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _tapper(input: Tensor, out_shape: Sequence[int]):  # noqa: A002
    """``tap(coords)``: the input's values at integer coordinates (float tensors, one per
    spatial axis in the input's order), zero outside the image."""
    n, c = input.shape[:2]
    sizes = tuple(input.shape[2:])
    flat = input.reshape(n, c, -1)
    npts = 1
    for s in out_shape:
        npts *= s

    def tap(coords: Sequence[Tensor]) -> Tensor:
        inside = None
        idx = None
        for ci, size in zip(coords, sizes):
            ok = (ci >= 0) & (ci <= size - 1)
            inside = ok if inside is None else inside & ok
            k = ci.clamp(0, size - 1)
            idx = k if idx is None else idx * size + k
        assert idx is not None and inside is not None
        g = idx.to(ot_int64).reshape(n, 1, npts).expand(n, c, npts)
        vals = flat.gather(2, g).reshape(n, c, *out_shape)
        return vals * inside.to(input.dtype).unsqueeze(1)
    return tap


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",  # noqa: A002
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` ``(N, C, H, W)`` at ``grid`` ``(N, Ho, Wo, 2)`` (x, y in
    ``[-1, 1]``), or ``(N, C, D, H, W)`` at ``(N, Do, Ho, Wo, 3)`` (x, y, z): bilinear
    (trilinear), nearest or bicubic (4-D only), zeros/border/reflection padding,
    differentiable in the input and (bilinear, bicubic) the grid."""
    _check(input, grid, mode, padding_mode)
    ac = bool(align_corners)
    sizes = tuple(input.shape[2:])
    rank = len(sizes)
    out_shape = tuple(grid.shape[1:-1])
    tap = _tapper(input, out_shape)
    # grid's last axis holds x (the last spatial axis) first: reverse it to input order
    raw = [_unnormalize(grid[..., rank - 1 - i], sizes[i], ac) for i in range(rank)]
    if mode == "bicubic":
        return _bicubic(tap, raw, sizes, padding_mode, ac)
    src = [_pad(r, s, padding_mode, ac) for r, s in zip(raw, sizes)]
    if mode == "nearest":
        return tap([s.detach().round() for s in src])
    low = [s.detach().floor() for s in src]
    frac = [(s - lo).unsqueeze(1) for s, lo in zip(src, low)]
    out = None
    for corner in itertools.product((0, 1), repeat=rank):
        w = None
        for bit, f in zip(corner, frac):
            wi = f if bit else 1 - f
            w = wi if w is None else w * wi
        assert w is not None
        term = tap([lo + bit for lo, bit in zip(low, corner)]) * w
        out = term if out is None else out + term
    assert out is not None
    return out


def _bicubic(tap, raw: list[Tensor], sizes: tuple[int, ...], padding_mode: str,
             ac: bool) -> Tensor:
    """4x4 taps around the unpadded source point, each tap's coordinates padded on their
    own (torch's ``get_value_bounded``), weighted by the cubic coefficients."""
    iy, ix = raw
    y0, x0 = iy.detach().floor(), ix.detach().floor()
    wy = [w.unsqueeze(1) for w in _cubic_weights(iy - y0)]
    wx = [w.unsqueeze(1) for w in _cubic_weights(ix - x0)]
    out = None
    for j in range(4):
        yj = _pad(y0 + (j - 1), sizes[0], padding_mode, ac).detach()
        for i in range(4):
            xi = _pad(x0 + (i - 1), sizes[1], padding_mode, ac).detach()
            # torch truncates the padded coordinate to an integer before the read
            term = tap([yj.trunc(), xi.trunc()]) * (wy[j] * wx[i])
            out = term if out is None else out + term
    assert out is not None
    return out
