"""Axis reductions (sum, prod, max, min, any, all over any set of axes) and argmax/argmin.

The kernels' design and source live in :mod:`omnitensor.kernels.reduce` (rendered for the OpenCL C
dialect); this module picks the kernel, sizes the launch and runs it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import UnsupportedDTypeError
from ...kernels.reduce import BLOCK as _BLOCK
from ...kernels.reduce import name as _name
from ...kernels.reduce import program as _program
from . import program_cache
from .array import CLArray, c_strides, new
from .cltypes import BY_NP, CType, pack_i32, pack_i64
from .elementwise import copy, fill
from .launch import run_items, set_bytes, set_mem


def _np(t: CType) -> np.dtype:
    """The NumPy dtype of a value type (only bit containers have none, and none reduces)."""
    assert t.np is not None
    return t.np



def _kernel(st: Any, op: str, t: CType, out: CType, acc_in: bool, outer: bool) -> Any:
    name = _name(op, t, out, acc_in)
    return program_cache.kernel(st, ("red", op, t.key), ("o" if outer else "") + name,
                                lambda: _program(op, t), st.build_options)


# ------------------------------------------------------------------------- driver
def _layout(shape: tuple, strides: tuple, axes: tuple) -> tuple:
    """(kept dims, kept strides, reduced dims, reduced strides): innermost first, coalesced."""
    kept = [(shape[d], strides[d]) for d in range(len(shape)) if d not in axes and shape[d] != 1]
    red = [(shape[d], strides[d]) for d in axes if shape[d] != 1]
    red.sort(key=lambda p: -abs(p[1]))  # smallest stride innermost

    def merge(dims: list) -> tuple[list, list]:
        out_n: list[int] = []
        out_s: list[int] = []
        for n, s in reversed(dims):  # innermost first
            if out_n and s == out_s[-1] * out_n[-1]:
                out_n[-1] *= n
            else:
                out_n.append(n)
                out_s.append(s)
        return out_n, out_s

    kn, ks = merge(kept)
    rn, rs = merge(red)
    return kn, ks, rn or [1], rs or [1]


def _plan(st: Any, M: int, K: int) -> tuple[int, int, int]:
    """(mchunk, nsplit, kchunk) for the inner kernel."""
    if not st.is_cpu:
        nsplit = max(1, min(K // 2048, 2048 // max(M, 1))) if M < 2048 else 1
        return 1, nsplit, -(-K // nsplit)
    par = 4 * st.compute_units
    if M * K <= 32768:
        return M, 1, K
    if M >= par:
        return max(1, -(-M // (4 * par))), 1, K
    nsplit = max(1, min(-(-2 * par // M), K // 4096))
    return 1, nsplit, -(-K // nsplit)


def _launch(st: Any, k: Any, args_mem: tuple, args_bytes: tuple, n: int) -> None:
    set_mem(k, args_mem)
    set_bytes(k, args_bytes)
    run_items(st, k, n)


def reduce(op: str, x: CLArray, axes: tuple, keepdims: bool, out_dtype: Any = None) -> CLArray:
    """``op`` of x over ``axes`` (sorted, unique, non-empty)."""
    st = x.state
    t = BY_NP.get(x.dtype)
    if t is None or (t.kind == "c" and op in ("max", "min")):
        raise UnsupportedDTypeError(f"{op}: the OpenCL backend does not reduce {x.dtype}")
    odt = np.dtype(np.bool_) if op in ("any", "all") else x.dtype
    axes = tuple(axes)
    kshape = tuple(1 if d in axes else n for d, n in enumerate(x.shape)) if keepdims else \
        tuple(n for d, n in enumerate(x.shape) if d not in axes)
    M = 1
    for d, n in enumerate(x.shape):
        if d not in axes:
            M *= n
    K = 1
    for d in axes:
        K *= x.shape[d]
    if M == 0:
        return new(st, kshape, odt)
    if K == 0:
        if op in ("max", "min"):
            raise ValueError(f"zero-size array to reduction operation {op} which has no "
                             f"identity")
        ident = {"sum": 0, "prod": 1, "any": False, "all": True}[op]
        return fill(new(st, kshape, odt), ident)
    kn, ks, rn, rs = _layout(x.shape, x.strides, axes)
    if len(kn) > 8 or len(rn) > 8:
        x = copy(x)
        kn, ks, rn, rs = _layout(x.shape, x.strides, axes)
    acc_t = BY_NP[np.dtype(np.float32)] if t.half else t
    tout = BY_NP[odt]
    outer = bool(kn) and ks[0] == 1 and kn[0] >= 8 and rs[0] != 1 and x.size > 4096
    if outer:
        Mi, Mo = kn[0], M // kn[0]
        okn, oks = kn[1:], ks[1:]
        nblk = -(-Mi // _BLOCK)
        nsplit = 1
        if st.is_cpu and Mo * nblk < 4 * st.compute_units and K >= 4096:
            nsplit = max(1, min(-(-8 * st.compute_units // (Mo * nblk)), K // 1024))
        kchunk = -(-K // nsplit)
        final = nsplit == 1
        ot = tout if final else (acc_t if op not in ("any", "all") else tout)
        res = new(st, (Mo, nsplit, Mi), _np(ot))
        lay = st.layout((len(okn), *okn, *oks, len(rn), *rn, *rs))
        k = _kernel(st, op, t, ot, False, True)
        _launch(st, k, (0, res.data, 1, x.data, 8, lay),
                (2, pack_i64(x.offset), 3, pack_i64(Mo), 4, pack_i64(Mi), 5, pack_i64(K),
                 6, pack_i64(kchunk), 7, pack_i32(nsplit)), Mo * nblk * nsplit)
        if not final:
            res = _second_pass(op, res, t, tout)
        return _shaped(res, kshape)
    mchunk, nsplit, kchunk = _plan(st, M, K)
    final = nsplit == 1
    ot = tout if final else (acc_t if op not in ("any", "all") else tout)
    res = new(st, (M, nsplit), _np(ot))
    lay = st.layout((len(kn), *kn, *ks, len(rn), *rn, *rs))
    k = _kernel(st, op, t, ot, False, False)
    nblocks = -(-M // mchunk)
    _launch(st, k, (0, res.data, 1, x.data, 8, lay),
            (2, pack_i64(x.offset), 3, pack_i64(M), 4, pack_i64(K), 5, pack_i64(mchunk),
             6, pack_i64(kchunk), 7, pack_i32(nsplit)), nblocks * nsplit)
    if not final:
        res = _second_pass(op, res, t, tout)
    return _shaped(res, kshape)


def _second_pass(op: str, part: CLArray, t: CType, tout: CType) -> CLArray:
    """Reduce the partials' split axis (axis 1 of (M, nsplit[, Mi]))."""
    st = part.state
    if part.dtype == tout.np:
        return reduce(op, part, (1,), False)
    # float16: float partials -> half result
    M, ns = part.shape[0], part.shape[1]
    Mi = part.shape[2] if part.ndim == 3 else 1
    res = new(st, (M, Mi), _np(tout))
    lay = st.layout((2, Mi, M, 1, ns * Mi, 1, ns, Mi)) if Mi > 1 else \
        st.layout((1, M, ns, 1, ns, 1))
    k = _kernel(st, op, t, t, True, False)
    _launch(st, k, (0, res.data, 1, part.data, 8, lay),
            (2, pack_i64(0), 3, pack_i64(M * Mi), 4, pack_i64(ns), 5, pack_i64(M * Mi),
             6, pack_i64(ns), 7, pack_i32(1)), 1)
    return res


def _shaped(res: CLArray, shape: tuple) -> CLArray:
    return CLArray(res.data, shape, c_strides(shape), 0, res.dtype, res.state, True)


