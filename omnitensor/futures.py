"""``torch.futures``: :class:`Future`, a value that some other code completes later, with
callbacks chained by :meth:`Future.then`; :func:`collect_all` and :func:`wait_all`.

Completion is guarded by one condition variable, so a Future may be completed on one thread
(a DataLoader worker's reader, an RPC reply) and waited on another. A Future may also be
completed by its waiter: one made by ``Work.get_future()`` (a collective that finishes only
when someone drives MPI) has a *driver*, and :meth:`Future.wait` runs it first; the Futures
:meth:`Future.then` and :func:`collect_all` make drive their sources, so waiting on the end
of a chain completes the chain on one thread.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")
S = TypeVar("S")
_UNSET: Any = object()


class Future(Generic[T]):
    """torch's ``Future``: completed once by :meth:`set_result` or :meth:`set_exception`;
    :meth:`wait` blocks until then and returns the value (or raises the exception)."""

    def __init__(self, *, devices: list | None = None) -> None:
        self._cond = threading.Condition()
        self._value: Any = _UNSET
        self._error: BaseException | None = None
        self._callbacks: list[Callable[["Future[T]"], None]] = []
        self.devices = list(devices or [])
        #: run by wait() on an incomplete Future: completes it (or its sources) on this thread
        self._drive: Callable[[], None] | None = None

    def done(self) -> bool:
        """Whether the Future has a value or an exception."""
        return self._value is not _UNSET or self._error is not None

    def wait(self) -> T:
        """Block until the Future is complete; its value, or its exception raised."""
        if self._drive is not None and not self.done():
            self._drive()
        with self._cond:
            self._cond.wait_for(self.done)
        return self.value()

    def _settle(self) -> None:
        """Wait for completion without raising (a driver of downstream Futures: they get
        this one's exception through their own callbacks)."""
        try:
            self.wait()
        except BaseException:  # noqa: BLE001 - the downstream callback sees it
            pass

    def value(self) -> T:
        """The value of a completed Future (its exception raised); an incomplete one raises
        RuntimeError, as torch's does."""
        if self._error is not None:
            raise self._error
        if self._value is _UNSET:
            raise RuntimeError("Future.value(): the Future is not completed yet; call wait()")
        return self._value

    def _complete(self, value: Any, error: BaseException | None) -> None:
        with self._cond:
            if self.done():
                raise RuntimeError("Attempting to mark a completed Future as complete again. "
                                   "Note that a Future can only be marked completed once.")
            self._value, self._error = value, error
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:  # outside the lock: a callback may wait on other Futures
            cb(self)

    def set_result(self, result: T) -> None:
        """Complete the Future with ``result``, waking its waiters and running callbacks."""
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete the Future with an exception, which :meth:`wait` raises."""
        if not isinstance(result, BaseException):
            raise TypeError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(_UNSET, result)

    def add_done_callback(self, callback: Callable[["Future[T]"], None]) -> None:
        """Run ``callback(self)`` when the Future completes (now, if it has)."""
        with self._cond:
            if not self.done():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback: Callable[["Future[T]"], S]) -> "Future[S]":
        """A new Future completed with ``callback(self)`` once this one completes; an
        exception of the callback completes it with a RuntimeError, as torch's does."""
        out: Future[S] = Future(devices=self.devices)

        def run(fut: "Future[T]") -> None:
            try:
                result = callback(fut)
            except Exception as e:  # noqa: BLE001 - handed to the waiter, as torch does
                out.set_exception(RuntimeError(f"Got the following error when running the "
                                               f"callback: {type(e).__name__}: {e}"))
                return
            out.set_result(result)

        out._drive = self._settle
        self.add_done_callback(run)
        return out

    def __repr__(self) -> str:
        return f"<torch.futures.Future done={self.done()}>"


def collect_all(futures: list[Future]) -> Future[list[Future]]:
    """A Future completed with the list ``futures`` once every one of them is complete."""
    out: Future[list[Future]] = Future()
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])
        return out

    def one_done(_fut: Future) -> None:
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(list(futures))

    def drive() -> None:
        for f in futures:
            f._settle()

    out._drive = drive
    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures: list[Future]) -> list:
    """Wait for every Future; their values in order (the first exception raised)."""
    return [f.wait() for f in collect_all(futures).wait()]
