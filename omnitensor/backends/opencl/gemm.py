"""Batched matmul: packed, register-blocked GEMM for float32/float64; a generic kernel else.

The kernels' design and source live in :mod:`omnitensor.kernels.gemm` (rendered for the OpenCL C
dialect); this module picks the kernel, sizes the launch and runs it.
"""
from __future__ import annotations

from typing import Any

from ...errors import UnsupportedDTypeError
from ...kernels.gemm import TILE as _TILE
from ...kernels.gemm import fast_source as _fast_source
from ...kernels.gemm import generic_source as _source
from . import program_cache
from .array import CLArray, new
from .cltypes import BY_NP, CType, pack_i64
from .elementwise import fill
from .launch import run_items, set_bytes, set_mem

#: float32/float64 matmuls of at most this many multiply-adds run the generic kernel
_SMALL = 1 << 15


def _kernel(st: Any, name: str, t: CType) -> Any:
    if name.startswith("gemmg_"):
        return program_cache.kernel(st, ("gemm", t.key), name, lambda: _source(t),
                                    st.build_options)
    return program_cache.kernel(st, ("gemmf", t.key), name, lambda: _fast_source(t),
                                st.build_options)


def _split(st: Any, n: int, per: int) -> tuple[int, int]:
    """(work-items, items per work-item) for n items, at least ``per`` each on a CPU."""
    if not st.is_cpu:
        return n, 1
    groups = max(1, min(16 * st.compute_units, n // per))
    chunk = -(-n // groups)
    return -(-n // chunk), chunk


def matmul(a: CLArray, b: CLArray) -> CLArray:
    st = a.state
    t = BY_NP.get(a.dtype)
    if t is None:
        raise UnsupportedDTypeError(f"matmul: unsupported dtype {a.dtype}")
    batch = a.shape[:-2]
    M, Kd = a.shape[-2], a.shape[-1]
    N = b.shape[-1]
    out = new(st, batch + (M, N), a.dtype)
    if out.size == 0:
        return out
    if Kd == 0:
        return fill(out, 0)
    nbt = 1
    for n in batch:
        nbt *= n
    # batch layout (innermost first); size-1 batch axes dropped; strides may be 0
    dims = [(n, sa, sb) for n, sa, sb in zip(batch, a.strides[:-2], b.strides[:-2]) if n != 1]
    dims.reverse()
    lay = st.layout((len(dims), *[d[0] for d in dims], *[d[1] for d in dims],
                     *[d[2] for d in dims]))
    if t.key in _TILE and nbt * M * N * Kd > _SMALL:
        _fast(st, t, a, b, out, nbt, M, N, Kd, lay)
        return out
    tm, tn = -(-M // 4), -(-N // 4)
    total = nbt * tm * tn
    groups, tpw = _split(st, total, 1)
    k = _kernel(st, f"gemmg_{t.key}", t)
    set_mem(k, (0, out.data, 1, a.data, 5, b.data, 16, lay))
    set_bytes(k, (2, pack_i64(a.offset), 3, pack_i64(a.strides[-2]), 4, pack_i64(a.strides[-1]),
                  6, pack_i64(b.offset), 7, pack_i64(b.strides[-2]), 8, pack_i64(b.strides[-1]),
                  9, pack_i64(M), 10, pack_i64(N), 11, pack_i64(Kd), 12, pack_i64(tm),
                  13, pack_i64(tn), 14, pack_i64(tpw), 15, pack_i64(total)))
    run_items(st, k, groups)
    return out


def _fast(st: Any, t: CType, a: CLArray, b: CLArray, out: CLArray, nbt: int, M: int, N: int,
          Kd: int, lay: Any) -> None:
    rm, vw, nv = _TILE[t.key]
    w = vw * nv
    tm, tn = -(-M // rm), -(-N // w)
    ap = new(st, (nbt * tm * Kd * rm,), a.dtype)
    bp = new(st, (nbt * tn * Kd * w,), a.dtype)
    ka = _kernel(st, f"packa_{t.key}", t)
    set_mem(ka, (0, ap.data, 1, a.data, 9, lay))
    set_bytes(ka, (2, pack_i64(a.offset), 3, pack_i64(a.strides[-2]), 4, pack_i64(a.strides[-1]),
                   5, pack_i64(M), 6, pack_i64(Kd), 7, pack_i64(tm), 8, pack_i64(nbt * tm)))
    run_items(st, ka, nbt * tm)
    kb = _kernel(st, f"packb_{t.key}", t)
    set_mem(kb, (0, bp.data, 1, b.data, 9, lay))
    set_bytes(kb, (2, pack_i64(b.offset), 3, pack_i64(b.strides[-2]), 4, pack_i64(b.strides[-1]),
                   5, pack_i64(N), 6, pack_i64(Kd), 7, pack_i64(tn), 8, pack_i64(nbt * tn)))
    run_items(st, kb, nbt * tn)
    total = nbt * tm * tn
    groups, tpw = _split(st, total, 1)
    if st.is_cpu:  # ~2 tiles per work-group at least: PoCL's per-group cost is a few us
        groups = min(groups, 32 * st.compute_units)
        tpw = -(-total // groups)
        groups = -(-total // tpw)
    k = _kernel(st, f"gemm_{t.key}", t)
    set_mem(k, (0, out.data, 1, ap.data, 2, bp.data))
    set_bytes(k, (3, pack_i64(M), 4, pack_i64(N), 5, pack_i64(Kd), 6, pack_i64(tm),
                  7, pack_i64(tn), 8, pack_i64(tpw), 9, pack_i64(total)))
    run_items(st, k, groups)
