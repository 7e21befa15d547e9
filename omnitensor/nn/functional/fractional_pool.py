"""Fractional max pooling (Graham, 2014): ``fractional_max_pool2d``/``3d``, torch's
pseudo-random pooling regions.

Each (sample, channel) plane draws one number ``u`` in ``[0, 1)`` per spatial axis (or takes
``_random_samples``); along an axis of input size ``n``, output size ``o`` and pool size
``k``, the windows start at ``trunc((i + u) * alpha) - trunc(u * alpha)`` with
``alpha = (n - k) / (o - 1)``, the last one at ``n - k`` (torch's ``generate_intervals``,
computed in the input's dtype as torch does). The starts are Tensor ops on the device, the
windows a gather of the flattened plane, the result a maximum over each window (the first
maximum, torch's tie rule), so every backend runs it and autograd routes the gradient.
"""
from __future__ import annotations

from typing import Any

from ...core import dtypes as _dt
from ...core.graph import no_grad_ctx
from ...core.ops.creation import arange, full
from ...core.ops.join import cat
from ...core.ops.random import rand
from ...core.tensor import Tensor

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]

_AXES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _ints(value: Any, nd: int, name: str, what: str) -> tuple[int, ...]:
    """An int or a tuple of ``nd`` ints (torch's C++ rule and message)."""
    vals = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(vals) == 1:
        vals = vals * nd
    if len(vals) != nd:
        tail = "Ints" if nd == 2 else "three Ints"
        raise RuntimeError(f"{name}: {what} must either be a single Int or tuple of {tail}")
    return tuple(int(v) for v in vals)


def _output_size(input: Tensor, output_size: Any, output_ratio: Any, nd: int,  # noqa: A002
                 name: str) -> Any:
    """The output size, given or from ``output_ratio`` (torch's Python rule)."""
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         f"output_ratio")
    if output_size is not None:
        return output_size
    if nd == 2 and len(output_ratio) > 2:
        raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                         f"of Ints.")
    ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else \
        (output_ratio,) * nd
    if len(ratio) == 1:
        ratio = ratio * nd
    return [int(input.shape[input.ndim - nd + i] * ratio[i]) for i in range(nd)]


def _check(x: Tensor, samples: Tensor, k: tuple[int, ...], out: tuple[int, ...],
           nd: int, where: str) -> None:
    """torch's checks of the input, the samples and the pool sizes (``x`` batched)."""
    for d in range(1, x.ndim):
        if x.shape[d] == 0:
            raise RuntimeError(f"{where}: Expected input to have non-zero size for "
                               f"non-batch dimensions, but got{list(x.shape)} with "
                               f"dimension {d} being empty.")
    if x.dtype.kind != "f":
        raise NotImplementedError(f"{where}: not implemented for {x.dtype.name}")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got "
                           f"{samples.ndim}")
    if samples.shape[0] < x.shape[0]:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != x.shape[1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.shape[2]}.")
    if samples.dtype is not x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    # torch's 2-D kernel allows o + k - 1 == n, its 3-D kernel does not
    room = 0 if nd == 2 else 1
    for axis, n, kk, o in zip(_AXES[nd], x.shape[2:], k, out):
        if o + kk - 1 + room > n:
            raise RuntimeError(f"{where}: pool {axis} {kk} too large relative to input "
                               f"{axis} {n}")


def _starts(u: Tensor, n: int, o: int, k: int) -> Tensor:
    """Window starts ``(N, C, o)`` along one axis from the planes' samples ``u`` ``(N, C)``
    (torch's ``generate_intervals``: C++ casts to int, which truncates)."""
    last = full(tuple(u.shape) + (min(o, 1),), n - k, dtype=_dt.int64, device=u.device)
    if o <= 1:
        return last
    alpha = (n - k) / (o - 1)
    i = arange(o - 1, dtype=u.dtype, device=u.device)
    uu = u.unsqueeze(-1)
    seq = ((i + uu) * alpha).trunc() - (uu * alpha).trunc()
    return cat([seq.to(_dt.int64), last], -1)


def _window_index(samples: Tensor, size: tuple[int, ...], k: tuple[int, ...],
                  out: tuple[int, ...]) -> Tensor:
    """Flat plane index of every window element, ``(N, C, *out, prod(k))``."""
    nd = len(size)
    n, c = samples.shape[:2]
    idx: Tensor | None = None
    for a in range(nd):
        # torch's sample order per plane: (w, h) for images, (t, h, w) for volumes
        u = samples[..., 1 - a] if nd == 2 else samples[..., a]
        start = _starts(u, size[a], out[a], k[a])  # (N, C, o_a)
        pos = start.reshape((n, c) + tuple(out[a] if j == a else 1 for j in range(nd)) +
                            (1,) * nd)
        off = arange(k[a], dtype=_dt.int64, device=samples.device)
        pos = pos + off.reshape((1, 1) + (1,) * nd +
                                tuple(k[a] if j == a else 1 for j in range(nd)))
        idx = pos if idx is None else idx * size[a] + pos
    assert idx is not None
    return idx.reshape((n, c) + out + (-1,))


def _fractional_max_pool(input: Tensor, kernel_size: Any, output_size: Any,  # noqa: A002
                         output_ratio: Any, return_indices: bool, samples: Any,
                         nd: int) -> Any:
    name = f"fractional_max_pool{nd}d"
    where = f"{name}()" if nd == 2 else f"{name}_out()"
    out_arg = _output_size(input, output_size, output_ratio, nd, name)
    if samples is None:
        n_batch = 1 if input.ndim == nd + 1 else input.shape[0]
        samples = rand(n_batch, input.shape[input.ndim - nd - 1], nd, dtype=input.dtype,
                       device=input.device)
    k = _ints(kernel_size, nd, name, "kernel_size")
    out = _ints(out_arg, nd, name, "output_size")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    _check(x, samples, k, out, nd, where)
    n, c = x.shape[:2]
    size = tuple(x.shape[2:])
    with no_grad_ctx():
        idx = _window_index(samples[:n].detach(), size, k, out)
    vals = x.reshape(n, c, -1).gather(2, idx.reshape(n, c, -1)).reshape(tuple(idx.shape))
    y, slot = vals.max(-1)
    with no_grad_ctx():
        ind = idx.gather(-1, slot.unsqueeze(-1)).squeeze(-1)
    if unbatched:
        y, ind = y.squeeze(0), ind.squeeze(0)
    return (y, ind) if return_indices else y


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any,  # noqa: A002
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = False,
                                       _random_samples: Any = None) -> Any:
    """``(output, indices)`` of 2-D fractional max pooling (indices into each plane)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, True,
                                _random_samples, 2)


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,  # noqa: A002
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:
    """2-D fractional max pooling of ``(N, C, H, W)`` or ``(C, H, W)``: windows of
    ``kernel_size`` at pseudo-random starts giving ``output_size`` (or ``output_ratio`` of
    the input size); ``_random_samples`` ``(N, C, 2)`` in ``[0, 1)`` (w, h) fixes the starts."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples, 2)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any,  # noqa: A002
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = False,
                                       _random_samples: Any = None) -> Any:
    """``(output, indices)`` of 3-D fractional max pooling (indices into each volume)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, True,
                                _random_samples, 3)


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,  # noqa: A002
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:
    """3-D fractional max pooling of ``(N, C, T, H, W)`` or ``(C, T, H, W)``;
    ``_random_samples`` is ``(N, C, 3)`` (t, h, w)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples, 3)
