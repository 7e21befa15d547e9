"""Waiting for a queue's earlier kernels with the GIL released, before oneMKL waits holding it.

Why (the ``sycl:0`` training hang): dpnp runs most float elementwise functions (``tanh``,
``exp``, ``log``, ``add``, ``multiply``, ...) through oneMKL VM when it can. On a CPU device
oneMKL VM's ``rt_v11`` first calls ``sycl::event::wait_and_throw(depends)`` on the calling
thread -- from a pybind11 function that keeps the GIL. ``depends`` holds the computation
events of every unfinished kernel on the queue, among them oneMKL BLAS's ``gemm``, which on a
CPU device is a SYCL host task. Host tasks of one queue run one after another, and dpnp queues
a "keep the arguments alive" host task after every kernel; that task takes the GIL to drop
its Python references. So: the main thread holds the GIL waiting for the gemm, the gemm waits
behind a keep-alive task, the keep-alive task waits for the GIL. Plain dpnp hangs the same way
(``dpnp.tanh(dpnp.matmul(x, w))`` in a loop); dpnp fixed the same pattern for LAPACK
(IntelPython/dpnp#1778, #2850) but not for VM. Our memory pool only changed the timing: with
it, no USM ``free`` (which waits with the GIL released) drains the queue between steps.

The fix: before a call that may reach a GIL-holding wait, wait for the queue's unfinished
computation events ourselves with :meth:`dpctl.SyclEvent.wait_for`, which releases the GIL,
so the keep-alive tasks (and the host tasks behind them) can run. oneMKL's own wait then finds
every event complete. It costs nothing on the hot path: oneMKL VM on a CPU device waits for
those events anyway (and computes inline); an idle queue costs one lookup (~0.6 us).
Every ``DRAIN_EVERY`` calls the whole queue is waited for instead, which also lets the SYCL
runtime free its records of finished commands (see ``DRAIN_EVERY``).
"""
from __future__ import annotations

import threading
from typing import Any

import dpctl
from dpctl.utils import SequentialOrderManager

_wait_for = dpctl.SyclEvent.wait_for

#: every this many wrapped calls, wait for the whole queue instead (host tasks included).
#: Why: DPC++ releases the records of finished commands (kernels, dpnp's keep-alive host
#: tasks) only when a queue is waited; a training loop that never synchronizes grew by
#: ~2 KB a step without bound (16 MB in 8,000 steps of plain dpnp ``(x + 1) * 2``), and
#: stays flat with a wait every few hundred ops. ``SyclQueue.wait`` releases the GIL.
DRAIN_EVERY = 256
_count = [0]


def may_call_onemkl(fn: Any) -> bool:
    """Whether a dpnp elementwise function may route to oneMKL VM. dpnp's ufunc objects keep
    the VM entry point (``mkl_impl_fn``) in the closure of their kernel callback; anything we
    cannot inspect (our own wrappers and methods) counts as "may"."""
    impl = getattr(fn, "unary_fn_", None) or getattr(fn, "binary_fn_", None)
    code = getattr(impl, "__code__", None)
    if code is None or impl is None or not impl.__closure__:
        return True
    cells = dict(zip(code.co_freevars, impl.__closure__))
    cell = cells.get("mkl_impl_fn")
    if cell is None:
        return True
    try:
        return cell.cell_contents is not None
    except ValueError:  # empty cell
        return True


def wait_pending(queue: Any) -> None:
    """Wait, with the GIL released, for the unfinished kernels dpnp has submitted to
    ``queue`` (no-op when there are none)."""
    events = SequentialOrderManager[queue].submitted_events
    if events:
        _wait_for(events)


def waits_outside_gil(fn: Any) -> Any:
    """Wrap an elementwise function ``fn(a[, b], out=None)`` so that the queue's earlier
    kernels are waited for with the GIL released before ``fn`` runs (see the module doc).
    The queue is the first array operand's (the other may be a Python scalar)."""
    def call(a: Any, *rest: Any, **kw: Any) -> Any:
        q = getattr(a, "sycl_queue", None)
        if q is None and rest:
            q = getattr(rest[0], "sycl_queue", None)
        if q is not None:
            _count[0] += 1
            if _count[0] >= DRAIN_EVERY:  # the SYCL runtime frees finished commands here
                _count[0] = 0
                q.wait()
            else:
                events = SequentialOrderManager[q].submitted_events
                if events:
                    _wait_for(events)
        return fn(a, *rest, **kw)
    call.__name__ = getattr(fn, "__name__", "call")
    call.__doc__ = getattr(fn, "__doc__", None)
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


def drains_first(fn: Any) -> Any:
    """Wrap a oneMKL LAPACK/FFT routine ``fn(x, ...)``: those submit host tasks and wait for
    them holding the GIL, so first wait for everything on x's queue (host tasks included;
    ``SyclQueue.wait`` releases the GIL). Rare, expensive calls: a full drain is cheap."""
    def call(x: Any, *rest: Any, **kw: Any) -> Any:
        q = getattr(x, "sycl_queue", None)
        if q is not None:
            q.wait()
        return fn(x, *rest, **kw)
    call.__name__ = getattr(fn, "__name__", "call")
    call.__doc__ = getattr(fn, "__doc__", None)
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


#: one oneMKL (BLAS/LAPACK/FFT) call at a time in this process. Why (issue 32, 4 threads
#: uploading and multiplying deadlocked): oneMKL's first call of a routine initialises C++
#: statics; a second thread entering meanwhile blocks in ``__cxa_guard_acquire`` holding the
#: GIL (pybind11 keeps it), which the initialising side needs. A Python lock waits with the
#: GIL released, so threads queue up here instead.
ONEMKL_LOCK = threading.Lock()

#: one thread at a time inside dpnp, on the dpnp fallback (``backend.py``). Why (the
#: fallback hung in ~5 of 6 runs of ``tests/backends/test_threads_upload.py`` with 4
#: threads, after ``ONEMKL_LOCK``): every pybind11 extension of dpctl and dpnp that converts
#: dpctl objects (``dpctl4pybind11.hpp``'s type casters) first builds a function-local
#: static, ``dpctl::detail::dpctl_capi::get()::api``, once per extension module; its
#: constructor allocates a ``dpctl.memory.MemoryUSMHost``, which releases the GIL. Caught
#: with gdb in ``dpctl/utils/_seq_order_keeper`` (which every dpnp op calls): one thread
#: inside the constructor waiting for the GIL (``_Memory__cinit_alloc`` -> ``take_gil``),
#: another holding the GIL blocked in ``__cxa_guard_acquire`` on the same static (a scalar
#: multiply through ``_copy_numpy_ndarray_into_usm_ndarray``). Any first call into any of
#: those modules can race so, so the fallback's primitives take turns (``serialized``);
#: reentrant, because primitives call primitives. The generated backend calls dpnp only
#: under ``ONEMKL_LOCK``.
DPNP_LOCK = threading.RLock()


def serialized(fn: Any) -> Any:
    """Wrap a primitive that calls into dpnp so that threads take turns (``DPNP_LOCK``)."""
    def call(*args: Any, **kw: Any) -> Any:
        with DPNP_LOCK:
            return fn(*args, **kw)
    call.__name__ = getattr(fn, "__name__", "call")
    call.__doc__ = getattr(fn, "__doc__", None)
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


def one_at_a_time(fn: Any) -> Any:
    """Wrap a dpnp routine that reaches oneMKL so that threads take turns (see
    ``ONEMKL_LOCK``)."""
    def call(*args: Any, **kw: Any) -> Any:
        with ONEMKL_LOCK:
            return fn(*args, **kw)
    call.__name__ = getattr(fn, "__name__", "call")
    call.__doc__ = getattr(fn, "__doc__", None)
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call
