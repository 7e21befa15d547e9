"""Intra-op threads for the ``cpu`` backend: a large elementwise NumPy ufunc call is split
into contiguous chunks run on a small thread pool.

NumPy's ufunc loops are single-threaded but release the GIL, while PyTorch runs the same
elementwise kernels on every core (``torch.get_num_threads()``). On a 2-core machine that
alone made torch ~1.8x faster on a chain of 1M-element ops. Splitting the flat index range
gives bit-identical results (every element is computed by the same loop), so the cpu
backend stays the exact NumPy reference.

Only calls where splitting is trivially safe go through here: a NumPy ufunc with one
output, operands that are C-contiguous arrays of one shape or scalars, and either a fresh
output or an ``out=`` that is C-contiguous, of that shape, and either is an operand itself
(element i reads and writes element i) or shares no memory with any. Everything else, and
everything under :data:`MIN_ELEMENTS`, returns None and the caller runs NumPy as usual.

The thread count follows torch: ``omnitensor.set_num_threads(n)``/``get_num_threads()``,
default the CPUs this process may run on, or ``OMNITENSOR_NUM_THREADS``.
"""
from __future__ import annotations

import contextvars
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ... import envvars

#: calls on fewer elements run unsplit (a pool round trip costs ~20-40 us)
MIN_ELEMENTS = 1 << 18
_ALIGN = 64  # chunk boundaries in elements (whole cache lines for every dtype)
_SCALARS = (int, float, complex, bool, np.generic)

_ndarray = np.ndarray
_num_threads: int | None = None
_pool: ThreadPoolExecutor | None = None
_pool_key: tuple[int, int] = (0, 0)  # (pid, workers) the pool was made for


def _default_threads() -> int:
    try:
        cpus = max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cpus = max(1, os.cpu_count() or 1)
    return envvars.positive_int("OMNITENSOR_NUM_THREADS", cpus)


def get_num_threads() -> int:
    """The number of threads large elementwise ops on ``cpu`` use (like
    ``torch.get_num_threads``)."""
    global _num_threads
    if _num_threads is None:
        _num_threads = _default_threads()
    return _num_threads


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for large elementwise ops on ``cpu`` (1 disables splitting)."""
    global _num_threads
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: expected a positive int, got {n!r}")
    _num_threads = n


def _executor(workers: int) -> ThreadPoolExecutor:
    """The pool, remade in a forked child (its threads do not survive ``fork``: a pool
    inherited from the parent would accept work and never run it) or after a resize."""
    global _pool, _pool_key
    key = (os.getpid(), workers)
    if _pool is None or _pool_key != key:
        _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="omnitensor-cpu")
        _pool_key = key
    return _pool


def split_call(ufunc: np.ufunc, args: tuple, out: Any = None) -> Any:
    """``ufunc(*args, out=out)`` computed in chunks on the thread pool, or None when the
    call is small, not splittable (see the module docstring) or threads are off."""
    threads = _num_threads if _num_threads is not None else get_num_threads()
    if threads < 2 or ufunc.nout != 1:
        return None
    shape = None
    for x in args:
        if x.__class__ is _ndarray:
            if shape is None:
                shape = x.shape
            elif x.shape != shape:
                return None
            if not x.flags.c_contiguous or x.dtype.hasobject:
                return None
        elif not isinstance(x, _SCALARS):
            return None
    if shape is None:
        return None
    n = args[0].size if args[0].__class__ is _ndarray else args[-1].size
    if n < MIN_ELEMENTS:
        return None
    if out is not None:
        if out.__class__ is not _ndarray or out.shape != shape or not out.flags.c_contiguous \
                or not out.flags.writeable:
            return None
        for x in args:  # out must be an operand exactly, or apart from every operand
            if x.__class__ is _ndarray and x is not out and np.may_share_memory(x, out) and \
                    not (x.__array_interface__["data"][0] == out.__array_interface__["data"][0]
                         and x.dtype == out.dtype):
                return None
    flat = [x.reshape(-1) if x.__class__ is _ndarray else x for x in args]
    if out is None:
        # the result dtype, with NumPy's own rules for these operands (weak scalars too)
        probe = ufunc(*[x[:1] if x.__class__ is _ndarray else x for x in flat])
        out = np.empty(shape, probe.dtype)
    dst = out.reshape(-1)
    parts = min(threads, n // (MIN_ELEMENTS // 2))
    step = -(-n // parts)
    step += -step % _ALIGN
    bounds = [(lo, min(lo + step, n)) for lo in range(0, n, step)]

    def run(lo: int, hi: int) -> None:
        ufunc(*[x[lo:hi] if x.__class__ is _ndarray else x for x in flat], out=dst[lo:hi])

    pool = _executor(threads - 1)
    # each chunk runs in a copy of the caller's context: np.errstate lives in a contextvar
    futures = [pool.submit(contextvars.copy_context().run, run, lo, hi)
               for lo, hi in bounds[1:]]
    try:
        run(*bounds[0])
    finally:
        for f in futures:
            f.result()  # waits for every chunk, and re-raises a worker's exception
    return out
