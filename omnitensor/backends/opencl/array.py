"""``CLArray``: a strided view of an OpenCL buffer, and the view ops that only touch metadata.

A CLArray is (buffer, shape, strides, offset, dtype, device). Strides and offset are in
*elements*, like torch: strides may be 0 (broadcast) or negative (flip). Views (reshape when
strides allow, permute, broadcast_to, index, flip, diagonal) share the buffer, so an
in-place write through a view reaches its base, as in torch; kernels take (buffer, offset,
strides) and never need a sub-buffer.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """C-contiguous element strides of ``shape``."""
    st = []
    acc = 1
    for n in reversed(shape):
        st.append(acc)
        acc *= n
    return tuple(reversed(st))


def is_c_contig(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """True when the layout is C-contiguous (size-1 axes may have any stride)."""
    acc = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != acc:
            return n == 0 or _has_zero(shape)
        acc *= n
    return True


def _has_zero(shape: tuple[int, ...]) -> bool:
    return 0 in shape


class CLArray:
    """An n-d array on an OpenCL device (the OpenCL backend's array type).

    Attributes: ``data`` (the ``cl.Buffer``/pooled buffer, shared by views), ``shape``,
    ``strides`` (elements), ``offset`` (elements), ``dtype`` (``numpy.dtype``), ``ndim``,
    ``size``, ``state`` (the device's :class:`DeviceState`) and ``contig`` (C-contiguous).
    """

    __slots__ = ("data", "shape", "strides", "offset", "dtype", "ndim", "size", "state",
                 "contig", "__weakref__")

    def __init__(self, data: Any, shape: tuple[int, ...], strides: tuple[int, ...],
                 offset: int, dtype: np.dtype, state: Any, contig: bool | None = None) -> None:
        self.data = data
        self.shape = shape
        self.strides = strides
        self.offset = offset
        self.dtype = dtype
        self.ndim = len(shape)
        n = 1
        for s in shape:
            n *= s
        self.size = n
        self.state = state
        self.contig = is_c_contig(shape, strides) if contig is None else contig

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def device_index(self) -> int:
        return self.state.index

    def get(self) -> np.ndarray:
        """The values as a NumPy array (waits for pending work)."""
        from .memory import to_numpy
        return to_numpy(self)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = self.get()
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d CLArray")
        return self.shape[0]

    def __repr__(self) -> str:
        return (f"CLArray(shape={self.shape}, dtype={self.dtype}, strides={self.strides}, "
                f"offset={self.offset}, device={self.state.name})")


_SHAPES: dict[tuple[int, ...], tuple[tuple[int, ...], int]] = {}
_new_obj = object.__new__


def new(state: Any, shape: tuple[int, ...], dtype: np.dtype) -> CLArray:
    """An uninitialised C-contiguous array (hot path: no checks, cached shape facts)."""
    facts = _SHAPES.get(shape)
    if facts is None:
        n = 1
        for s in shape:
            n *= s
        if len(_SHAPES) > 4096:
            _SHAPES.clear()
        facts = _SHAPES[shape] = (c_strides(shape), n)
    x = _new_obj(CLArray)
    x.data = state.alloc(facts[1] * dtype.itemsize)
    x.shape = shape
    x.strides = facts[0]
    x.offset = 0
    x.dtype = dtype
    x.ndim = len(shape)
    x.size = facts[1]
    x.state = state
    x.contig = True
    return x


def view(x: CLArray, shape: tuple[int, ...], strides: tuple[int, ...], offset: int,
         dtype: np.dtype | None = None) -> CLArray:
    return CLArray(x.data, shape, strides, offset, x.dtype if dtype is None else dtype,
                   x.state)


# ------------------------------------------------------------------------ view ops
def reshape_strides(shape: tuple[int, ...], strides: tuple[int, ...],
                    new_shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """Strides giving ``new_shape`` over the same memory, or None when a copy is needed
    (NumPy's ``_attempt_nocopy_reshape``: group axes whose product matches and check that
    each old group is contiguous in itself)."""
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    if 0 in shape:
        return c_strides(new_shape)
    new_st = [0] * len(new_shape)
    oi, ni = 0, 0
    on, nn = len(old), len(new_shape)
    while ni < nn and oi < on:
        np_, op = new_shape[ni], old[oi][0]
        nj, oj = ni + 1, oi + 1
        while np_ != op:
            if np_ < op:
                np_ *= new_shape[nj]
                nj += 1
            else:
                op *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):  # the old group must be contiguous in itself
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        new_st[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            new_st[k - 1] = new_st[k] * new_shape[k]
        ni, oi = nj, oj
    # trailing size-1 axes of the new shape
    last = new_st[ni - 1] if ni > 0 else 1
    for k in range(ni, nn):
        new_st[k] = last
    return tuple(new_st)


def permute(x: CLArray, axes: tuple[int, ...]) -> CLArray:
    return view(x, tuple(x.shape[a] for a in axes), tuple(x.strides[a] for a in axes),
                x.offset)


def broadcast_to(x: CLArray, shape: tuple[int, ...]) -> CLArray:
    lead = len(shape) - x.ndim
    st = [0] * lead
    for i, (n, s) in enumerate(zip(x.shape, x.strides)):
        st.append(0 if n == 1 and shape[lead + i] != 1 else s)
    return view(x, tuple(shape), tuple(st), x.offset)


def index(x: CLArray, key: tuple[Any, ...]) -> CLArray:
    """Basic indexing with a normalised key (see ``Backend.index``)."""
    shape, strides = [], []
    off = x.offset
    axis = 0
    for k in key:
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        st = x.strides[axis]
        if isinstance(k, slice):
            start, stop, step = k.start, k.stop, k.step
            n = len(range(start, -1 if stop is None else stop, step))
            if n > 0:
                off += start * st
            shape.append(n)
            strides.append(st * step)
        else:
            off += int(k) * st
        axis += 1
    for n, st in zip(x.shape[axis:], x.strides[axis:]):
        shape.append(n)
        strides.append(st)
    return view(x, tuple(shape), tuple(strides), off)


def flip(x: CLArray, axes: tuple[int, ...]) -> CLArray:
    strides = list(x.strides)
    off = x.offset
    for a in axes:
        n = x.shape[a]
        if n > 0:
            off += (n - 1) * strides[a]
        strides[a] = -strides[a]
    return view(x, x.shape, tuple(strides), off)


def diagonal(x: CLArray, offset: int, axis1: int, axis2: int) -> CLArray:
    n1, n2 = x.shape[axis1], x.shape[axis2]
    s1, s2 = x.strides[axis1], x.strides[axis2]
    off = x.offset
    if offset >= 0:
        length = max(0, min(n1, n2 - offset))
        if length:
            off += offset * s2
    else:
        length = max(0, min(n1 + offset, n2))
        if length:
            off += -offset * s1
    rest = [i for i in range(x.ndim) if i not in (axis1, axis2)]
    shape = tuple(x.shape[i] for i in rest) + (length,)
    strides = tuple(x.strides[i] for i in rest) + (s1 + s2,)
    return view(x, shape, strides, off)


# --------------------------------------------------------------------- coalescing
def coalesce(shape: tuple[int, ...], stride_sets: list[tuple[int, ...]]
             ) -> tuple[list[int], list[list[int]]]:
    """Merge adjacent axes that are contiguous with each other in *every* operand and drop
    size-1 axes, so kernels walk as few, as long rows as possible. Returns the merged shape
    and per-operand strides, innermost axis first."""
    dims: list[int] = []
    sts: list[list[int]] = [[] for _ in stride_sets]
    for ax in range(len(shape) - 1, -1, -1):
        n = shape[ax]
        if n == 1:
            continue
        if dims:
            inner = dims[-1]
            if all(s[ax] == st[-1] * inner for s, st in zip(stride_sets, sts)):
                dims[-1] = inner * n
                continue
        dims.append(n)
        for s, st in zip(stride_sets, sts):
            st.append(s[ax])
    if not dims:
        dims = [1]
        sts = [[1] for _ in stride_sets]
    return dims, sts
