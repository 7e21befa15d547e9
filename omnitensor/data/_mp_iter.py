"""The main-process side of ``DataLoader(num_workers>0)``: starts the workers, hands out
index batches round robin with ``prefetch_factor`` tasks per worker in flight, returns
batches in sampler order (``in_order=False``: as they arrive), re-raises worker errors
with the worker's traceback, and shuts the workers down: at the end of an epoch, when
the loop is left early (the iterator is dropped), on ``timeout``, when a worker dies,
and at interpreter exit. ``persistent_workers=True`` keeps them across epochs.

Tasks carry an epoch number, so results of an epoch that was broken off are discarded
when a persistent loader starts the next one.
"""
from __future__ import annotations

import atexit
import itertools
import multiprocessing as mp
import os
import queue
import weakref
from typing import Any

from ._iter_base import BaseLoaderIter
from ._worker import (ExceptionWrapper, IterableEnd, WorkerSpec, deserialize, unpack,
                      worker_loop)

__all__ = ["MultiProcessIter"]

#: seconds between the main process's checks that its workers are alive while waiting
STATUS_INTERVAL = 1.0
#: seconds a worker gets to exit on shutdown before it is terminated
JOIN_TIMEOUT = 1.0
#: seconds to wait for a SIGKILLed worker to be gone: it cannot refuse, but on a loaded
#: machine the kernel may take longer than JOIN_TIMEOUT to tear it down, and a worker not
#: joined stays a zombie (shutdown promises reaped workers)
KILL_TIMEOUT = 10.0

_live: "weakref.WeakSet[MultiProcessIter]" = weakref.WeakSet()


@atexit.register
def _shutdown_all() -> None:
    for it in list(_live):
        it._shutdown()


def _context(ctx: Any) -> Any:
    if ctx is None:
        # fork: the dataset is shared copy-on-write and need not pickle; workers never
        # touch device backends (see _worker.py)
        return mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    if isinstance(ctx, str):
        if ctx not in mp.get_all_start_methods():
            raise ValueError(f"multiprocessing_context option should specify a valid start "
                             f"method in {mp.get_all_start_methods()!r}, but got {ctx!r}")
        return mp.get_context(ctx)
    return ctx


class MultiProcessIter(BaseLoaderIter):
    """Iterator over a DataLoader's batches loaded by worker processes."""

    def __init__(self, loader: Any) -> None:
        # a weak reference: a persistent loader holds its iterator, and a cycle would
        # keep the workers alive until the garbage collector runs
        self._loader = weakref.ref(loader)
        self._iterable = loader._iterable
        self._n = loader.num_workers
        self._prefetch = loader.prefetch_factor
        self._timeout = loader.timeout
        self._in_order = loader.in_order
        self._persistent = loader.persistent_workers
        self._pin = loader._pin_fn
        ctx = _context(loader.multiprocessing_context)
        spec = WorkerSpec(loader.dataset, loader._iterable, loader._auto_collation,
                          loader.batch_size, loader.drop_last, loader.collate_fn,
                          loader._batch_fetcher(), loader.worker_init_fn, self._n)
        base_seed = loader._shared_seed()
        self._result_queue = ctx.Queue()
        self._done = ctx.Event()
        self._index_queues: list = []
        self._workers: list = []
        self._shut = False  # from here on, _shutdown has something to stop
        for wid in range(self._n):
            iq = ctx.Queue()
            iq.cancel_join_thread()  # tasks left unread at shutdown need not be flushed
            w = ctx.Process(target=worker_loop, daemon=True,
                            args=(spec, wid, base_seed, iq, self._result_queue, self._done,
                                  os.getpid()))
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        _live.add(self)
        self._epoch = 0
        self._reset()

    # ------------------------------------------------------------------ epochs
    def _reset(self) -> None:
        """Start an epoch: a fresh pass over the sampler, ``prefetch_factor`` tasks per
        worker sent ahead."""
        loader = self._loader()
        if loader is None:
            raise TypeError("the DataLoader of this iterator is gone")
        self._epoch += 1
        self._sampler_iter = None if self._iterable else iter(loader._index_sampler)
        self._send_idx = self._rcvd_idx = 0
        self._task_info: dict[int, tuple] = {}
        self._outstanding = 0
        self._active = [True] * self._n
        self._cycle = itertools.cycle(range(self._n))
        self._sampler_done = False
        for _ in range(self._prefetch * self._n):
            self._try_put_index()

    def _try_put_index(self) -> None:
        if self._outstanding >= self._prefetch * self._n or self._sampler_done:
            return
        for _ in range(self._n):
            wid = next(self._cycle)
            if self._active[wid]:
                break
        else:
            return
        if self._sampler_iter is None:
            index = None  # a stream: the worker takes its own next batch
        else:
            try:
                index = next(self._sampler_iter)
            except StopIteration:
                self._sampler_done = True
                return
        self._index_queues[wid].put((self._epoch, self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._outstanding += 1
        self._send_idx += 1

    # ------------------------------------------------------------------ results
    def __iter__(self) -> "MultiProcessIter":
        return self

    def __len__(self) -> int:
        loader = self._loader()
        if loader is None:
            raise TypeError("the DataLoader of this iterator is gone")
        return len(loader)

    def __next__(self) -> Any:
        if self._shut:
            raise StopIteration
        while True:
            # skip tasks answered already (out of order) or owned by an exhausted stream
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._active[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:  # arrived earlier, out of order
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            epoch, idx, data = self._get()
            if epoch != self._epoch:
                continue  # from an epoch that was left early
            self._outstanding -= 1
            if isinstance(data, IterableEnd):
                self._active[data.worker_id] = False
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    del self._task_info[idx]
                    return self._process(data)
                self._task_info[idx] += (data,)
                continue
            del self._task_info[idx]
            self._rcvd_idx += 1
            return self._process(data)

    def _process(self, data: Any) -> Any:
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        batch = unpack(data)
        return self._pin(batch) if self._pin is not None else batch

    def _get(self) -> tuple:
        if self._timeout > 0:
            try:
                return deserialize(self._result_queue.get(timeout=self._timeout))
            except queue.Empty:
                self._shutdown()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} "
                                   f"seconds") from None
        while True:
            try:
                return deserialize(self._result_queue.get(timeout=STATUS_INTERVAL))
            except queue.Empty:
                dead = [w for w in self._workers if not w.is_alive()]
                if dead:
                    codes = ", ".join(f"pid {w.pid} exit code {w.exitcode}" for w in dead)
                    self._shutdown()
                    raise RuntimeError(f"DataLoader worker ({codes}) exited unexpectedly; "
                                       f"a crash in native code or running out of memory "
                                       f"are the usual causes") from None

    # ------------------------------------------------------------------ shutdown
    def _shutdown(self) -> None:
        """Stop and reap every worker (idempotent)."""
        if getattr(self, "_shut", True):
            return
        self._shut = True
        _live.discard(self)
        self._done.set()
        for iq in self._index_queues:
            try:
                iq.put(None)
            except (OSError, ValueError):
                pass
        for w in self._workers:
            w.join(timeout=JOIN_TIMEOUT)
            if w.is_alive():
                w.terminate()
                w.join(timeout=JOIN_TIMEOUT)
            if w.is_alive():  # ignores SIGTERM (a handler, a blocked signal): SIGKILL
                w.kill()
                w.join(timeout=KILL_TIMEOUT)
        for q in [*self._index_queues, self._result_queue]:
            q.cancel_join_thread()
            q.close()

    def __del__(self) -> None:
        self._shutdown()
