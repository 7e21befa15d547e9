"""Shared vocabulary of ``omnitensor.distributed``: reduce ops, errors and work handles.

Nothing here imports mpi4py or CuPy: the transports (``mpi_backend``, ``nccl_backend``)
subclass :class:`Work` with their own request objects.
"""
from __future__ import annotations

import enum
from typing import Any, Callable, Sequence

from ..errors import OmnitensorError
from ..futures import Future

__all__ = ["ReduceOp", "DistributedError", "DistributedTimeoutError",
           "CollectiveMismatchError", "Work", "CompletedWork", "DistError",
           "DistBackendError", "DistNetworkError", "DistStoreError", "QueueEmptyError"]


class ReduceOp(enum.Enum):
    """How ``all_reduce``/``reduce``/``reduce_scatter`` combine the ranks' values (torch's
    ``torch.distributed.ReduceOp``)."""

    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    AVG = "avg"

    def __repr__(self) -> str:
        return f"ReduceOp.{self.name}"


# torch's ReduceOp is a class whose members are values of a nested enum, ``RedOpType``
# (libraries annotate with ``ReduceOp.RedOpType``); here the class is that enum itself
ReduceOp.RedOpType = ReduceOp  # type: ignore[attr-defined]  # set after: not a member


class DistError(RuntimeError):
    """torch's base of distributed errors (``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """A transport (MPI, NCCL) failed or timed out (torch's ``DistBackendError``)."""


class DistNetworkError(DistError):
    """A network operation failed, e.g. reaching a TCPStore (torch's name)."""


class DistStoreError(DistError):
    """A store operation failed, e.g. ``get`` timed out (torch's name)."""


class QueueEmptyError(DistError):
    """``Store.queue_pop(key, block=False)`` on an empty queue (torch's name)."""


class DistributedError(OmnitensorError, DistError):
    """A collective failed, was used wrongly, or the process group is not usable."""


class DistributedTimeoutError(DistributedError, DistBackendError, TimeoutError):
    """A collective did not complete within its group's timeout (a peer is missing, slow,
    or called a different collective). The group is unusable afterwards: the pending MPI
    request cannot be cancelled, so let the exception end the process (the excepthook of
    ``init_process_group`` then aborts the whole job)."""


class CollectiveMismatchError(DistributedError, ValueError):
    """Ranks called a collective with disagreeing shapes, dtypes or ops (found by the
    metadata check, or by a size exchange the collective does anyway)."""


class Work:
    """Handle of an asynchronous collective (``async_op=True``), as torch's ``Work``.

    ``wait()`` blocks until the collective finished (raising
    :class:`DistributedTimeoutError` past the group's deadline) and, for device tensors
    staged through the host, writes the result back into the tensor. ``is_completed()``
    never blocks. ``result()`` returns the output tensors. ``get_future()`` returns a
    ``torch.futures.Future`` completed with the output tensors."""

    def __init__(self, outputs: Sequence[Any] = (), finish: Callable[[], Any] | None = None,
                 ) -> None:
        self._outputs = list(outputs)
        self._finish = finish
        self._done = False
        self._exc: BaseException | None = None
        self._value: Any = None
        self._keep: Any = None
        self._future: Future | None = None

    # subclasses implement these two against their transport
    def _test(self) -> bool:
        """Whether the transport finished (non-blocking)."""
        return True

    def _block(self, timeout: float | None) -> None:
        """Block until the transport finished; raise DistributedTimeoutError past the
        deadline (``timeout`` seconds from now when given, else the op's own deadline)."""

    def _complete(self) -> None:
        # post-processing (host -> device write back, AVG division, list unpacking) runs
        # once, on the thread that observes completion
        if self._done:
            return
        self._done = True
        self._keep = None  # transports' buffers may be released now
        try:
            if self._finish is not None:
                self._value = self._finish()
        except BaseException as e:  # re-raised to the caller of wait()
            self._exc = e
            raise
        finally:
            self._finish = None
            self._settle_future()

    def _settle_future(self) -> None:
        fut = self._future
        if fut is None or fut.done() or not self._done:
            return
        if self._exc is not None:
            fut.set_exception(self._exc)
        else:
            fut.set_result(self._outputs)

    def wait(self, timeout: Any = None) -> bool:
        """Block until done; returns True (torch). Raises on timeout or failure.
        ``timeout`` (seconds or a timedelta) replaces the group's deadline."""
        if self._exc is not None:
            raise self._exc
        if not self._done:
            if timeout is not None and hasattr(timeout, "total_seconds"):
                timeout = timeout.total_seconds()
            self._block(timeout)
            self._complete()
        return True

    def is_completed(self) -> bool:
        """True once the collective finished (drives MPI progress; never blocks)."""
        if self._done:
            return True
        if self._test():
            self._complete()
            return True
        return False

    def get_future(self) -> Future:
        """torch's ``Work.get_future()``: a Future completed with the list of output tensors
        (``[tensor]`` for ``all_reduce``) once the collective finished. Its ``wait()`` (or
        the ``wait()`` of a Future chained to it by ``then``) drives the collective, so
        ``work.get_future().then(fn).wait()`` needs no separate ``work.wait()``."""
        if self._future is None:
            self._future = Future()
            self._future._drive = self._drive_future
            self._settle_future()
        return self._future

    def _drive_future(self) -> None:
        try:
            self.wait()
        except BaseException as e:  # noqa: BLE001 - the Future's waiters get it
            fut = self._future
            if fut is not None and not fut.done():
                fut.set_exception(e)
            return
        self._settle_future()

    def is_success(self) -> bool:
        return self._done and self._exc is None

    def exception(self) -> BaseException | None:
        return self._exc

    def result(self) -> list[Any]:
        """The output tensors (after :meth:`wait`)."""
        self.wait()
        return self._outputs

    @property
    def value(self) -> Any:
        """What the finishing step returned (``irecv``: the sender's rank)."""
        self.wait()
        return self._value

    def __repr__(self) -> str:
        state = "completed" if self._done else "pending"
        return f"<{type(self).__name__} {state}>"


class CompletedWork(Work):
    """A work handle for something already finished (sync paths, non-members)."""

    def __init__(self, outputs: Sequence[Any] = (), value: Any = None) -> None:
        super().__init__(outputs)
        self._done = True
        self._value = value


class ChainedWork(Work):
    """Several works that finish together (e.g. per-tensor ops of a list collective)."""

    def __init__(self, works: Sequence[Work], outputs: Sequence[Any] = (),
                 finish: Callable[[], Any] | None = None) -> None:
        super().__init__(outputs, finish)
        self._works = list(works)

    def _test(self) -> bool:
        return all(w.is_completed() for w in self._works)

    def _block(self, timeout: float | None) -> None:
        for w in self._works:
            w.wait(timeout)
