"""Batched matmul: packed, register-blocked GEMM for float32/float64; a generic kernel else.

The kernels' design and source live in :mod:`omnitensor.kernels.gemm` (rendered for the OpenCL C
dialect); this module picks the kernel, sizes the launch and runs it. :func:`pack` and
:func:`grid` are also what a compiled replay's GEMM with a fused epilogue
(``omnitensor.backends.opencl.fused``) launches with: the same packing, the same tiles.
"""
from __future__ import annotations

from typing import Any

from ...errors import UnsupportedDTypeError
from ...kernels.gemm import SMALL as _SMALL  # noqa: F401 - the tests size products by it
from ...kernels.gemm import TILE as _TILE
from ...kernels.gemm import fast_source as _fast_source
from ...kernels.gemm import generic_source as _source
from ...kernels.gemm import uses_fast
from . import program_cache
from .array import CLArray, new
from .cltypes import BY_NP, CType, pack_i64
from .elementwise import fill
from .launch import run_items, set_bytes, set_mem

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


def batch_layout(st: Any, batch: tuple, a_strides: tuple, b_strides: tuple) -> Any:
    """The kernels' batch layout buffer (innermost first; size-1 axes dropped; strides may
    be 0) for batch shape ``batch`` and the operands' batch strides."""
    dims = [(n, sa, sb) for n, sa, sb in zip(batch, a_strides, b_strides) if n != 1]
    dims.reverse()
    return st.layout((len(dims), *[d[0] for d in dims], *[d[1] for d in dims],
                      *[d[2] for d in dims]))


def grid(st: Any, t: CType, fast: bool, nbt: int, M: int, N: int) -> tuple[int, ...]:
    """(work-items, tiles per work-item, row tiles, column tiles, tiles) of a product."""
    if fast:
        rm, vw, nv = _TILE[t.key]
        tm, tn = -(-M // rm), -(-N // (vw * nv))
    else:
        tm, tn = -(-M // 4), -(-N // 4)
    total = nbt * tm * tn
    groups, tpw = _split(st, total, 1)
    if fast and st.is_cpu:  # ~2 tiles per work-group at least: PoCL's per-group cost is a few us
        groups = min(groups, 32 * st.compute_units)
        tpw = -(-total // groups)
        groups = -(-total // tpw)
    return groups, tpw, tm, tn, total


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
    lay = batch_layout(st, batch, a.strides[:-2], b.strides[:-2])
    fast = uses_fast(t, nbt * M * N * Kd)
    groups, tpw, tm, tn, total = grid(st, t, fast, nbt, M, N)
    if fast:
        ap, bp = pack(st, t, (a.data, a.offset, a.strides[-2], a.strides[-1]),
                      (b.data, b.offset, b.strides[-2], b.strides[-1]), nbt, M, N, Kd, lay)
        k = _kernel(st, f"gemm_{t.key}", t)
        set_mem(k, (0, out.data, 1, ap.data, 2, bp.data))
        set_bytes(k, (3, pack_i64(M), 4, pack_i64(N), 5, pack_i64(Kd), 6, pack_i64(tm),
                      7, pack_i64(tn), 8, pack_i64(tpw), 9, pack_i64(total)))
        run_items(st, k, groups)
        return out
    k = _kernel(st, f"gemmg_{t.key}", t)
    set_mem(k, (0, out.data, 1, a.data, 5, b.data, 16, lay))
    set_bytes(k, (2, pack_i64(a.offset), 3, pack_i64(a.strides[-2]), 4, pack_i64(a.strides[-1]),
                  6, pack_i64(b.offset), 7, pack_i64(b.strides[-2]), 8, pack_i64(b.strides[-1]),
                  9, pack_i64(M), 10, pack_i64(N), 11, pack_i64(Kd), 12, pack_i64(tm),
                  13, pack_i64(tn), 14, pack_i64(tpw), 15, pack_i64(total)))
    run_items(st, k, groups)
    return out


def pack(st: Any, t: CType, a: tuple, b: tuple, nbt: int, M: int, N: int, Kd: int, lay: Any,
         into: tuple[Any, Any] | None = None) -> tuple[CLArray, CLArray]:
    """Pack ``a`` and ``b`` (each ``(buffer, element offset, row stride, column stride)``)
    into the register-blocked kernel's panels (``into``: panels to reuse, as returned by an
    earlier call of the same shapes)."""
    rm, vw, nv = _TILE[t.key]
    w = vw * nv
    tm, tn = -(-M // rm), -(-N // w)
    if into is None:
        assert t.np is not None  # a float type (TILE's keys)
        ap = new(st, (nbt * tm * Kd * rm,), t.np)
        bp = new(st, (nbt * tn * Kd * w,), t.np)
    else:
        ap, bp = into
    ka, kb = pack_kernels(st, t)
    set_mem(ka, (0, ap.data, 1, a[0], 9, lay))
    set_bytes(ka, (2, pack_i64(a[1]), 3, pack_i64(a[2]), 4, pack_i64(a[3]),
                   5, pack_i64(M), 6, pack_i64(Kd), 7, pack_i64(tm), 8, pack_i64(nbt * tm)))
    run_items(st, ka, nbt * tm)
    set_mem(kb, (0, bp.data, 1, b[0], 9, lay))
    set_bytes(kb, (2, pack_i64(b[1]), 3, pack_i64(b[2]), 4, pack_i64(b[3]),
                   5, pack_i64(N), 6, pack_i64(Kd), 7, pack_i64(tn), 8, pack_i64(nbt * tn)))
    run_items(st, kb, nbt * tn)
    return ap, bp


def pack_kernels(st: Any, t: CType) -> tuple[Any, Any]:
    """The packing kernels of type ``t`` (built on first use: call it when planning to
    keep the build off the first launch)."""
    return _kernel(st, f"packa_{t.key}", t), _kernel(st, f"packb_{t.key}", t)
