"""Tensors that share a storage: rebuilding torch's ``(storage, offset, size, stride)`` as a
view of one base tensor, and, when saving, finding which tensors share a base.

omnitensor has no ``as_strided``: a view is made of the view ops every backend implements
(slicing, ``reshape``, ``permute``, ``unsqueeze``, ``expand``). Any layout a chain of
slices, transposes and expansions of a contiguous tensor produces — which is every view a
torch program saves from ordinary ops — is found that way; a layout whose elements overlap
(``unfold``-style strides) has no such chain, and the caller copies it instead.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

__all__ = ["strided_view", "extent_ok", "memory_position"]


def extent_ok(numel: int, offset: int, size: Sequence[int], stride: Sequence[int]) -> bool:
    """Whether every element of the layout lies inside a storage of ``numel`` elements."""
    if any(s == 0 for s in size):
        return 0 <= offset <= numel
    last = offset + sum((s - 1) * st for s, st in zip(size, stride))
    return 0 <= offset and last < numel


def _digits(value: int, radices: Sequence[int]) -> list[int]:
    out = []
    for r in reversed(radices):
        out.append(value % r)
        value //= r
    return out[::-1]


def _smallest_in_box(low: int, radices: Sequence[int], top: Sequence[int]) -> int | None:
    """The smallest ``q >= low`` (below ``prod(radices)``) whose mixed-radix digits are
    each at most ``top``; None when there is none."""
    if low >= math.prod(radices):
        return None
    d = _digits(low, radices)
    for p in range(len(d)):
        if d[p] <= top[p]:
            continue
        j = next((j for j in range(p - 1, -1, -1) if d[j] < top[j]), None)
        if j is None:
            return None
        d[j] += 1
        d[j + 1:] = [0] * (len(d) - j - 1)
        break
    value = 0
    for digit, r in zip(d, radices):
        value = value * r + digit
    return value


def _kept_view(base: Any, offset: int, sizes: list[int], strides: list[int]) -> Any:
    """The view of 1-D ``base`` with ``sizes``/``strides`` (strides strictly decreasing,
    each a multiple of the next, no two dims overlapping), or None."""
    n = base.shape[0]
    t0 = strides[0]
    # reshape a run of whole rows of length t0 into (rows, t0/t1, ..., t_{k-1}): each axis
    # but the last then has one of the view's strides, and the view is a slice of it
    radices = [strides[p - 1] // strides[p] for p in range(1, len(strides))] + [strides[-1]]
    top = [r - s for r, s in zip(radices[:-1], sizes[1:])] + [radices[-1] - 1]
    if any(v < 0 for v in top):
        return None
    # the view starts q elements into its first row; the rows it spans must fit in base
    q = _smallest_in_box(max(0, offset + sizes[0] * t0 - n), radices, top)
    if q is None or q > offset:
        return None
    start = offset - q
    seg = base[start:start + sizes[0] * t0].reshape(sizes[0], *radices)
    digits = _digits(q, radices)
    key: list[Any] = [slice(0, sizes[0])]
    key += [slice(d, d + s) for d, s in zip(digits[:-1], sizes[1:])]
    key.append(digits[-1])
    return seg[tuple(key)]


def strided_view(base: Any, offset: int, size: Sequence[int], stride: Sequence[int]) -> Any:
    """The tensor with torch's layout ``(offset, size, stride)`` over the 1-D tensor
    ``base``, as a view sharing its memory; None when no chain of view ops reaches it.
    The caller has checked :func:`extent_ok`."""
    size, stride = [int(s) for s in size], [int(s) for s in stride]
    if any(s == 0 for s in size):
        return base[0:0].reshape(*size)
    kept = [i for i, (s, st) in enumerate(zip(size, stride)) if s > 1 and st > 0]
    kept.sort(key=lambda i: -stride[i])
    ks = [stride[i] for i in kept]
    if any(a == b or a % b for a, b in zip(ks, ks[1:])):
        return None  # two dims on one stride, or strides that are not nested: overlap
    if kept:
        view = _kept_view(base, offset, [size[i] for i in kept], ks)
        if view is None:
            return None
        # back from decreasing-stride order to the saved order of these dims
        order = sorted(range(len(kept)), key=lambda j: kept[j])
        view = view.permute(*order) if order != list(range(len(kept))) else view
    else:
        view = base[offset]
    kept_sorted = sorted(kept)
    for i in range(len(size)):  # size-1 dims and stride-0 (expanded) dims
        if i not in kept_sorted:
            view = view.unsqueeze(i)
    if any(s > 1 and st == 0 for s, st in zip(size, stride)):
        view = view.expand(*size)
    return view


def memory_position(t: Any) -> tuple[Any, int, int] | None:
    """``(space, byte address, element size)`` of ``t``'s first element, where ``space``
    names one allocation domain: two tensors in one space and within one tensor's extent
    share that tensor's memory. None when the array type shows no address."""
    arr = t._data
    itemsize = int(getattr(getattr(arr, "dtype", None), "itemsize", 0) or 0)
    if not itemsize:
        return None
    for proto in ("__array_interface__", "__cuda_array_interface__",
                  "__sycl_usm_array_interface__"):
        iface = getattr(arr, proto, None)  # the standard array-exchange protocols
        if iface is not None:
            return (proto, str(t.device)), int(iface["data"][0] or 0), itemsize
    buf = getattr(arr, "data", None)
    handle = getattr(buf, "int_ptr", None)  # an OpenCL buffer: addresses are per buffer
    if handle is not None:
        return ("opencl", int(handle)), int(getattr(arr, "offset", 0)) * itemsize, itemsize
    return None
