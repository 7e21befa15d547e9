"""The dialect-neutral description of one fused kernel (what the planner hands renderers).

A kernel runs over a *loop space*: the shape of the elementwise chain it fuses, or of the
input of the reduction it absorbs. Every operand the kernel reads is a :class:`Load` of a
C-contiguous external array (the launcher makes it so) through a view chain folded into
per-loop-axis element strides (0 on broadcast axes). Computations are :class:`Op` entries in
SSA order; each produces temporary ``t<k>``. A reduce kernel has three phases:

* ``"p"`` (prologue): ops over the loop space, loads indexed by loop strides;
* the reduction itself (:class:`Reduce`: sum, max or min over the loop axes marked reduced);
* ``"e"`` (epilogue): ops over the reduced space, loads indexed by the flat position of
  the kept axes (their arrays have the reduced result's size and are C-contiguous).

An elementwise kernel has only the ``"p"`` phase. A GEMM kernel (the device's matmul
primitive is omnitensor's generated GEMM) starts with a :class:`Matmul` step, temporary
``t0``: its loop space is the product's (M, N) and its ``"p"`` ops are the epilogue,
computed on each element before the store. :class:`Store` writes a temporary into an
output (``"p"`` stores are full-size, ``"e"`` stores reduced-size), or into an external
buffer passed as an argument for in-place writes. Operands are references: ``("l", i)``
load ``i``, ``("t", k)`` temporary ``k``, ``("c", value)`` a constant of the op's dtype.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Ref = tuple  # ("l", i) | ("t", k) | ("c", python value)


@dataclass(frozen=True)
class Load:
    """Operand ``arg`` (index into the kernel's argument arrays) read in ``phase``; in phase
    "p" at ``sum(i_d * strides[d])`` over the loop axes, in phase "e" at the flat index."""
    arg: int
    dtype: str
    phase: str
    strides: tuple[int, ...] = ()


@dataclass(frozen=True)
class Op:
    """``t<k> = op(operands)``: ``op`` a backend elementwise primitive name (or ``astype``,
    ``where``, ``sigmoid``); ``dtype`` its result dtype, ``in_dtype`` its operands' dtype
    (the compute dtype of the op: ``astype`` converts ``in_dtype`` to ``dtype``)."""
    phase: str
    op: str
    operands: tuple[Ref, ...]
    dtype: str
    in_dtype: str


@dataclass(frozen=True)
class Matmul:
    """``t0 = (A @ B)[i, j]``: A is argument ``a_arg`` read at element strides ``a_strides``
    (row, k), B argument ``b_arg`` at ``b_strides`` (k, column), summing ``k`` products in
    ``dtype`` (the first step of a GEMM kernel; the loop space is (M, N))."""
    a_arg: int
    a_strides: tuple[int, int]
    b_arg: int
    b_strides: tuple[int, int]
    k: int
    dtype: str


@dataclass(frozen=True)
class Reduce:
    """``t<k> = op over the reduced axes of operand`` (sum accumulates float32 in float64:
    more accurate than NumPy's pairwise float32 sum, and equal to it within tolerance)."""
    op: str
    operand: Ref
    dtype: str


@dataclass(frozen=True)
class Store:
    """Write ``ref`` into argument ``arg`` (an output or an in-place buffer) in ``phase``."""
    ref: Ref
    arg: int
    dtype: str
    phase: str


@dataclass
class KernelSpec:
    """One fused kernel. ``shape`` is the loop space, ``reduced`` marks its reduced axes
    (all False for an elementwise kernel), ``nargs`` the number of argument arrays (loads
    and in-place buffers first, then fresh outputs), ``steps`` the ops and the reduction
    in order (the Reduce, if any, after every "p" op and before every "e" op)."""
    shape: tuple[int, ...]
    reduced: tuple[bool, ...]
    loads: list[Load] = field(default_factory=list)
    steps: list[Any] = field(default_factory=list)  # Op | Reduce, index = temporary k
    stores: list[Store] = field(default_factory=list)
    nargs: int = 0

    @property
    def is_reduce(self) -> bool:
        return any(isinstance(s, Reduce) for s in self.steps)

    @property
    def gemm(self) -> Matmul | None:
        """The product a GEMM kernel computes (None for other kernels)."""
        first = self.steps[0] if self.steps else None
        return first if isinstance(first, Matmul) else None

    def key(self) -> str:
        """A stable text key of everything the generated source depends on."""
        return repr((self.shape, self.reduced, self.loads, self.steps, self.stores,
                     self.nargs))


def c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """C-contiguous element strides of ``shape``."""
    out = []
    acc = 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


def is_contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """True when ``strides`` walk ``shape`` in C order (size-1 axes may have any stride)."""
    acc = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != acc:
            return False
        acc *= n
    return True


def coalesce(spec: KernelSpec) -> KernelSpec:
    """Merge adjacent loop axes that every "p" load walks contiguously (and that are both
    reduced or both kept), drop size-1 axes: fewer, longer loops for every dialect. A GEMM
    kernel keeps its (M, N) space."""
    if spec.gemm is not None:
        return spec
    shape, red = spec.shape, spec.reduced
    pl = [ld for ld in spec.loads if ld.phase == "p"]
    dims: list[int] = []
    rds: list[bool] = []
    sts: list[list[int]] = [[] for _ in pl]
    for ax in range(len(shape) - 1, -1, -1):
        n = shape[ax]
        if n == 1:
            continue
        if dims and rds[-1] == red[ax] and all(
                ld.strides[ax] == st[-1] * dims[-1] for ld, st in zip(pl, sts)):
            dims[-1] *= n
            continue
        dims.append(n)
        rds.append(red[ax])
        for ld, st in zip(pl, sts):
            st.append(ld.strides[ax])
    dims.reverse()
    rds.reverse()
    new_loads = []
    it = iter(sts)
    for ld in spec.loads:
        if ld.phase == "p":
            new_loads.append(Load(ld.arg, ld.dtype, "p", tuple(reversed(next(it)))))
        else:
            new_loads.append(ld)
    return KernelSpec(tuple(dims), tuple(rds), new_loads, spec.steps, spec.stores, spec.nargs)
