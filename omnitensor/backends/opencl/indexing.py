"""Gather/scatter with one index array per axis (``gather_nd``/``scatter_nd``), concat, pad:
the kernels come from :mod:`omnitensor.kernels.indexing`.

Gathers and plain scatters only move bytes, so their kernels depend on the item size and
the number of index arrays. ``scatter_nd(accumulate=True)`` must sum duplicate indices: each
add is atomic (``atomic_add`` for 32/64-bit integers, a compare-and-swap loop on the bits
for floats and complex parts, and a CAS on the containing 32-bit word for 8/16-bit types and
float16). A plain scatter with duplicate indices keeps one of the values (the last one in C
order within a work-item's chunk; which chunk wins is unspecified, as in torch).
"""
from __future__ import annotations

from typing import Any, Sequence

from ...kernels.indexing import source as _gen_source
from . import program_cache
from .array import CLArray, new, view
from .cltypes import BITS, BY_NP, pack_i32, pack_i64
from .elementwise import copy_into, fill
from .launch import run, set_bytes, set_mem

def _source(nidx: int, st: Any) -> str:
    return _gen_source(nidx, [t for t in BY_NP.values() if st.supports(t.np)],
                       st.int64_atomics)


def _kernel(st: Any, name: str, nidx: int) -> Any:
    return program_cache.kernel(st, ("gather", nidx), name,
                                lambda: _source(nidx, st), st.build_options)


def _layout(st: Any, shape: tuple, x: CLArray, v_strides: tuple, idx: Sequence[CLArray]) -> Any:
    nd = len(shape)
    key = (nd, *reversed(shape), *x.strides, *reversed(v_strides))
    for a in idx:
        key += tuple(reversed(a.strides))
    return st.layout(key)


def _run(st: Any, k: Any, x: CLArray, v: Any, voff: int, idx: Sequence[CLArray], n: int,
         flags: int, lay: Any, serial: bool = False) -> None:
    nidx = len(idx)
    mem = [0, x.data, 2, v]
    byts = [1, pack_i64(x.offset), 3, pack_i64(voff)]
    for j, a in enumerate(idx):
        mem += (4 + 2 * j, a.data)
        byts += (5 + 2 * j, pack_i64(a.offset))
    base = 4 + 2 * nidx
    if serial or not st.is_cpu:
        groups = 1 if serial else n
    else:
        groups = max(1, min(4 * st.compute_units, n // 16384))
    chunk = -(-n // groups)
    groups = -(-n // chunk)
    mem += (base + 3, lay)
    byts += (base, pack_i64(n), base + 1, pack_i64(chunk), base + 2, pack_i32(flags))
    set_mem(k, tuple(mem))
    set_bytes(k, tuple(byts))
    if st.is_cpu or serial:
        run(st.queue, k, (groups,), (1,))
    else:
        run(st.queue, k, (-(-groups // 64) * 64,), (64,))


def gather_nd(x: CLArray, indices: tuple) -> CLArray:
    st = x.state
    shape = indices[0].shape if indices else ()
    out = new(st, shape, x.dtype)
    n = out.size
    if n == 0:
        return out
    if not indices:  # a 0-d source
        return copy_into(out, x)
    t = BITS[x.dtype.itemsize]
    k = _kernel(st, f"gather_{t.key}_{len(indices)}", len(indices))
    lay = _layout(st, shape, x, out.strides, indices)
    _run(st, k, x, out.data, 0, indices, n, 0, lay)
    return out


def scatter_nd(x: CLArray, indices: tuple, values: Any, accumulate: bool) -> None:
    st = x.state
    shape = indices[0].shape if indices else ()
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return
    if values.__class__ is not CLArray:
        values = fill(new(st, (), x.dtype), values)
    if values.shape != shape:
        from .array import broadcast_to
        values = broadcast_to(values, shape)
    if values.data is x.data:  # reading what we write: snapshot the values
        from .elementwise import copy
        values = copy(values)
    nidx = len(indices)
    if accumulate:
        t = BY_NP[x.dtype]
        k = _kernel(st, f"scatter_add_{t.key}_{nidx}", nidx)
        atomic = t.itemsize < 8 or t.key == "c64" or st.int64_atomics
        flags, serial = (1, False) if atomic else (0, True)
    else:
        t = BITS[x.dtype.itemsize]
        k = _kernel(st, f"scatter_{t.key}_{nidx}", nidx)
        flags, serial = 0, False
    lay = _layout(st, shape, x, values.strides, indices)
    _run(st, k, x, values.data, values.offset, indices, n, flags, lay, serial)


# --------------------------------------------------------------------- concat, pad
def concat(xs: list, axis: int) -> CLArray:
    ref = xs[0]
    shape = list(ref.shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    out = new(ref.state, tuple(shape), ref.dtype)
    pos = 0
    for x in xs:
        n = x.shape[axis]
        if n and x.size:
            dst = view(out, x.shape, out.strides, pos * out.strides[axis])
            copy_into(dst, x)
        pos += n
    return out


def pad(x: CLArray, widths: tuple, value: Any) -> CLArray:
    shape = tuple(n + a + b for n, (a, b) in zip(x.shape, widths))
    out = fill(new(x.state, shape, x.dtype), value)
    if x.size:
        off = sum(a * s for (a, _), s in zip(widths, out.strides))
        copy_into(view(out, x.shape, out.strides, off), x)
    return out
