"""The elementwise primitives as NumPy-ufunc-like callables: ``backend.add(a, b, out=None)``.

One object per op caches, per dtype (and device), the kernels, result dtype and scalar
packer. The common case (contiguous arrays, no ``out=``) is inlined here: one dict lookup,
a pooled allocation, two argument-setting calls and the enqueue; nothing waits. Everything
else (scalars, strided/broadcast views, ``out=``, overlaps) goes through
``elementwise.launch``.
"""
from __future__ import annotations

from threading import get_ident
from typing import Any

from .array import CLArray, new
from .elementwise import _HEAD, _SLOT, launch, op_kernel
from .launch import _FAST, run

_INLINE = _FAST  # pyopencl's private fast argument setters are available
_pack = _HEAD.pack
_Z1, _Z2 = bytes(_SLOT), bytes(2 * _SLOT)  # the scalar slots of the parameter struct


class _UFunc:
    __slots__ = ("__name__", "_k", "_ks")

    def __init__(self, name: str) -> None:
        self.__name__ = name
        # (dtype, thread) -> (kernels, result dtype, CType, state) of the last device; per
        # thread because a cl.Kernel holds its arguments (program_cache.kernel)
        self._k: dict = {}
        self._ks: dict = {}  # (state, dtype, thread) -> the same, for every device

    def _entry(self, ref: CLArray, tid: int) -> tuple:
        key = (ref.state, ref.dtype, tid)
        ent = self._ks.get(key)
        if ent is None:
            k, odt, ct = op_kernel(ref.state, self.__name__, ref.dtype)
            ent = self._ks[key] = (k, odt, ct, ref.state)
        self._k[ref.dtype, tid] = ent
        return ent

    def __repr__(self) -> str:
        return f"<opencl ufunc {self.__name__}>"


class Unary(_UFunc):
    """``f(x, out=None)``."""

    __slots__ = ()

    def __call__(self, x: Any, out: Any = None) -> CLArray:
        if x.__class__ is not CLArray:
            raise TypeError(f"{self.__name__}: expected a CLArray, got {type(x).__name__}")
        st = x.state
        tid = get_ident()
        ent = self._k.get((x.dtype, tid))
        if ent is None or ent[3] is not st:
            ent = self._entry(x, tid)
        kern, odt, ct, _ = ent
        if out is None or out is Ellipsis:
            out = new(st, x.shape, odt)
            if x.contig and _INLINE:
                n = out.size
                if n:
                    k = kern[0]
                    gsize, chunk = ((1,), n) if n <= st.small else st.split(n)
                    k._set_arg_multi((0, out.data, 1, x.data))
                    k._set_arg_buf_multi((3, _pack(0, x.offset, 0, 0, n, chunk, 0, 0) + _Z1))
                    run(st.queue, k, gsize, st.local)
                return out
        return launch(st, kern, out, (x,), (ct,))


class Binary(_UFunc):
    """``f(a, b, out=None)``: a and b CLArrays of one dtype and shape, or one of them a
    Python scalar."""

    __slots__ = ()

    def __call__(self, a: Any, b: Any, out: Any = None) -> CLArray:
        ref = a if a.__class__ is CLArray else b
        if ref.__class__ is not CLArray:
            raise TypeError(f"{self.__name__}: expected at least one CLArray operand, got "
                            f"{type(a).__name__} and {type(b).__name__}")
        st = ref.state
        tid = get_ident()
        ent = self._k.get((ref.dtype, tid))
        if ent is None or ent[3] is not st:
            ent = self._entry(ref, tid)
        kern, odt, ct, _ = ent
        if out is None or out is Ellipsis:
            out = new(st, ref.shape, odt)
            if ref is a and b.__class__ is CLArray and a.contig and b.contig and _INLINE:
                n = out.size
                if n:
                    k = kern[0]
                    gsize, chunk = ((1,), n) if n <= st.small else st.split(n)
                    k._set_arg_multi((0, out.data, 1, a.data, 2, b.data))
                    k._set_arg_buf_multi((4, _pack(0, a.offset, b.offset, 0, n, chunk, 0, 0)
                                          + _Z2))
                    run(st.queue, k, gsize, st.local)
                return out
        return launch(st, kern, out, (a, b), (ct, ct))
