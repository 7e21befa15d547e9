"""Elementwise kernels (unary, binary, where, casts, copies, fills): compile and launch.

The sources come from :mod:`omnitensor.kernels.elementwise` (OpenCL C dialect): per (op,
dtype) a contiguous variant, scalar-operand variants and a strided one, all with one
argument list. This module picks the variant, packs the by-value parameter struct, attaches
the layout buffer of strided launches and enqueues; the program of a family (``ops.FAMILY``)
is built once per dtype and device, each kernel object created on first use.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...errors import UnsupportedDTypeError
from ...kernels import ops as ewops
from ...kernels.ctype import BITS, BY_NP, CType
from ...kernels.elementwise import (HEAD, SLOT, STRIDED, canonical_cast,
                                    cast_source, family_source, kernel_type,
                                    move_source, op_kernel_source, op_program_source,
                                    out_type, pack_params)
from . import program_cache
from .array import CLArray, coalesce, new
from .launch import run, set_bytes, set_mem, set_null

# the names the inline fast path (ufunc.py) uses
_HEAD, _SLOT, _STRIDED = HEAD, SLOT, STRIDED


# ------------------------------------------------------------------------ launch
def init_args(nin: int, cts: Sequence[CType]) -> Any:
    """A kernel initialiser: the layout pointer starts NULL (only strided launches set it;
    OpenCL keeps argument values between launches)."""
    def init(k: Any) -> None:
        set_null(k, 1 + nin)
    return init


def launch(st: Any, kern: Any, out: CLArray, ops: Sequence[Any], cts: Sequence[CType]
           ) -> CLArray:
    """Run an elementwise kernel pair ``kern = (contiguous, strided)``: ``out`` (array) <-
    ``ops`` (arrays or Python scalars, each scalar packed by the matching CType of ``cts``;
    raw ``bytes`` for bit containers)."""
    n = out.size
    if n == 0:
        return out
    mode = 0
    contig = out.contig
    od = out.data
    ops = list(ops)
    for i, x in enumerate(ops):
        if x.__class__ is CLArray:
            if x.data is od and (x.offset != out.offset or x.strides != out.strides):
                ops[i] = x = copy(x)  # partial overlap with the output: read a snapshot
            if not x.contig:
                contig = False
    mem = [0, od]
    offs = []
    scal = []
    strides = [out.strides]
    for i, x in enumerate(ops):
        if x.__class__ is CLArray:
            mem += (1 + i, x.data)
            offs.append(x.offset)
            scal.append(cts[i].zero)
            strides.append(x.strides)
        else:
            mode |= 1 << i
            # a readable stand-in of the same item size: the strided loop loads element 0
            # of it and discards the value
            mem += (1 + i, _stand_in(out, ops, cts[i].itemsize).data)
            offs.append(0)
            scal.append(cts[i].pack(x))
            strides.append((0,) * out.ndim)
    nin = len(ops)
    if contig:
        k = kern.get(mode)
    else:
        k = kern["s"]
        dims, sts = coalesce(out.shape, strides)
        key = (len(dims), *dims)
        for s in sts:
            key += tuple(s)
        mem += (1 + nin, st.layout(key))
        mode |= _STRIDED
    gsize, chunk = st.split(n)
    set_mem(k, tuple(mem))
    set_bytes(k, (2 + nin, pack_params(out.offset, offs, n, chunk, mode, scal)))
    run(st.queue, k, gsize, st.local)
    if not contig:
        set_null(k, 1 + nin)  # do not keep the layout buffer attached to the kernel
    return out


def _stand_in(out: CLArray, ops: Sequence[Any], itemsize: int) -> CLArray:
    for x in ops:
        if x.__class__ is CLArray and x.dtype.itemsize == itemsize:
            return x  # contiguous whenever the contiguous kernel runs
    if out.dtype.itemsize >= itemsize:
        return out
    raise AssertionError("no stand-in operand for a scalar")  # never for our op table


# --------------------------------------------------------------------- kernels
def op_kernel(st: Any, op: str, dtype: np.dtype) -> tuple[Any, Any, CType]:
    """(kernel, result dtype, input CType) of elementwise ``op`` on ``dtype``."""
    t = BY_NP.get(dtype)
    if t is None or op_kernel_source(op, t) is None:
        raise UnsupportedDTypeError(
            f"{op}: the OpenCL backend does not compute {op} on {dtype}")
    st.check_dtype(dtype)
    fam = ewops.FAMILY[op]
    nin = 1 if op in ewops.UNARY else 2
    kt = kernel_type(op, t)
    if st.fine_programs:  # one program per op (see DeviceState.fine_programs)
        k = _pair(st, ("ew1", op, kt.key), f"ew_{op}_{kt.key}",
                  lambda: op_program_source(op, kt), (kt,) * nin)
    else:
        k = _pair(st, ("ew", fam, kt.key), f"ew_{op}_{kt.key}",
                  lambda: family_source(fam, kt), (kt,) * nin)
    # scalars are packed with the operand's own CType: same bytes as the unsigned kernel's
    return k, out_type(op, t).np, t


class _Kernels(dict):
    """The kernels of one generated op, keyed by launch mode (0: contiguous arrays, a
    scalar bit-mask, or "s": strided); each is created, and compiled, on first use."""

    __slots__ = ("st", "pkey", "name", "src", "init")
    st: Any
    pkey: Any
    name: str
    src: Any
    init: Any

    def __missing__(self, key: Any) -> Any:
        suffix = "" if key == 0 else ("_s" if key == "s" else f"_m{key}")
        k = program_cache.kernel(self.st, self.pkey, self.name + suffix, self.src,
                                 self.st.build_options, self.init)
        self[key] = k
        return k

    def get(self, key: Any) -> Any:  # type: ignore[override]  # dict.get would not call __missing__
        return self[key]


def _pair(st: Any, pkey: Any, name: str, src: Any, cts: Sequence[CType]) -> _Kernels:
    ks = _Kernels()
    ks.st, ks.pkey, ks.name, ks.src, ks.init = st, pkey, name, src, init_args(len(cts), cts)
    ks[0]  # create the common kernel object now (it compiles on first launch)
    return ks


def _move_kernel(st: Any, name: str, cts: Sequence[CType]) -> _Kernels:
    if st.fine_programs:
        return _pair(st, ("move", name), name, lambda: move_source(only=name), cts)
    return _pair(st, ("move",), name, move_source, cts)


def copy_into(dst: CLArray, src: Any) -> CLArray:
    """``dst[...] = src`` (src an array of dst's shape and item size, or a scalar)."""
    st = dst.state
    t = BITS[dst.dtype.itemsize]
    k = _move_kernel(st, f"copy_{t.key}", (t,))
    if src.__class__ is not CLArray:
        src = np.asarray(src, dtype=dst.dtype).tobytes()
    return launch(st, k, dst, (src,), (t,))


def copy(x: CLArray) -> CLArray:
    """A C-contiguous copy."""
    return copy_into(new(x.state, x.shape, x.dtype), x)


def fill(out: CLArray, value: Any) -> CLArray:
    return copy_into(out, value)


def where(cond: CLArray, a: Any, b: Any, dtype: np.dtype, shape: tuple[int, ...]
          ) -> CLArray:
    st = cond.state
    t = BITS[dtype.itemsize]
    k = _move_kernel(st, f"where_{t.key}", (BITS[1], t, t))
    out = new(st, shape, dtype)
    ops: list[Any] = [cond]
    for v in (a, b):
        ops.append(v if v.__class__ is CLArray else np.asarray(v, dtype=dtype).tobytes())
    return launch(st, k, out, ops, (BITS[1], t, t))


def cast_kernel(st: Any, src: np.dtype, dst: np.dtype) -> Any:
    ts, td = canonical_cast(BY_NP[src], BY_NP[dst])
    st.check_dtype(src)
    st.check_dtype(dst)
    if st.fine_programs:
        return _pair(st, ("cast", ts.key, td.key), f"cast_{ts.key}_{td.key}",
                     lambda: cast_source(ts, [td]), (ts,))
    return _pair(st, ("cast", ts.key), f"cast_{ts.key}_{td.key}",
                 lambda: cast_source(ts, [t for t in BY_NP.values() if st.supports(t.np)]),
                 (ts,))


def astype(x: CLArray, dtype: np.dtype) -> CLArray:
    st = x.state
    out = new(st, x.shape, dtype)
    if x.dtype == dtype or (x.dtype.kind in "iu" and dtype.kind in "iu"
                            and x.dtype.itemsize == dtype.itemsize):
        return copy_into(out, x)  # same bits
    return launch(st, cast_kernel(st, x.dtype, dtype), out, (x,), (BY_NP[x.dtype],))
