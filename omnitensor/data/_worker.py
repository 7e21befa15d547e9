"""The worker side of ``DataLoader(num_workers>0)``: what runs in each worker process.

Workers are separate processes (``fork`` on Linux by default, so the dataset is shared
copy-on-write and need not be picklable). A forked child must never touch a device
backend: OpenCL, SYCL and CUDA contexts do not survive ``fork``. So a worker runs with
the cpu device as its default, produces host (NumPy-backed, cpu) tensors or plain
Python data, collates the batch itself, and ships it to the main process as NumPy
arrays; the main process rebuilds cpu tensors, and the training loop moves them with
``.to(device)`` as in torch. A dataset made of device tensors is refused up front
(``check_dataset``); a device tensor produced in a worker is reported by name.

Each worker runs one intra-op thread (``set_num_threads(1)``, as torch does).

Seeding (torch's scheme): the main process draws ``base_seed`` once per epoch from the
loader's ``generator`` (or the default generator); worker ``i`` seeds omnitensor's
default generator and Python's ``random`` with ``base_seed + i`` and NumPy's global RNG
from ``(base_seed, i)``, so augmentations are reproducible under ``manual_seed`` and
differ between workers.
"""
from __future__ import annotations

import collections.abc as cabc
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper", "IterableEnd",
           "worker_loop", "pack", "unpack", "check_dataset"]

#: seconds between a worker's checks that its parent is still alive
STATUS_INTERVAL = 1.0

_worker_info: "WorkerInfo | None" = None


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: ``id`` (0-based),
    ``num_workers``, ``seed`` (``base_seed + id``) and this worker's copy of
    ``dataset`` (an ``IterableDataset`` shards its stream with ``id``/``num_workers``)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


def get_worker_info() -> WorkerInfo | None:
    """This worker's :class:`WorkerInfo` inside a DataLoader worker process; None in the
    main process."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, with the worker's formatted traceback, re-raised
    in the main process by :meth:`reraise`."""

    def __init__(self, exc: BaseException, where: str) -> None:
        self.exc_type = type(exc)
        self.msg = (f"Caught {type(exc).__name__} {where}.\nOriginal "
                    + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))

    def reraise(self) -> None:
        # KeyError quotes a str message: wrap it so that the traceback stays readable
        msg: Any = KeyError(self.msg) if self.exc_type is KeyError else self.msg
        try:
            exc = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - exception types whose __init__ wants more
            raise RuntimeError(msg) from None
        raise exc


def _serialize(epoch: int, idx: int, data: Any, worker_id: int) -> bytes:
    """The result as bytes, pickled here, in the worker: a queue pickles in a feeder thread,
    where a batch that cannot be pickled (a local class from ``collate_fn``) only prints
    and the main process would wait forever; here it becomes the worker's error."""
    try:
        return pickle.dumps((epoch, idx, data), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # noqa: BLE001 - re-raised in the main process
        err = ExceptionWrapper(e, f"in DataLoader worker process {worker_id} (the batch "
                                  f"could not be pickled to send it to the main process)")
        try:
            return pickle.dumps((epoch, idx, err), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - an exception type that cannot be pickled itself
            err.exc_type = RuntimeError
            return pickle.dumps((epoch, idx, err), protocol=pickle.HIGHEST_PROTOCOL)


def deserialize(blob: bytes) -> tuple:
    """``(epoch, idx, data)`` from :func:`_serialize`'s bytes."""
    return pickle.loads(blob)


@dataclass(frozen=True)
class IterableEnd:
    """An IterableDataset worker's stream is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class Shipped:
    """A cpu tensor in transit: its NumPy array (pickles cheaply) and dtype name."""

    array: np.ndarray
    dtype: str


def map_batch(fn: Callable[[Any], Any], data: Any) -> Any:
    """``data`` with ``fn`` applied to each leaf, through the containers a batch is made of
    (torch's collate structure): mappings (their type kept where it takes a dict),
    namedtuples, lists and tuples."""
    if isinstance(data, cabc.Mapping):
        items = {k: map_batch(fn, v) for k, v in data.items()}
        kind: Any = type(data)  # a Mapping subclass: most take the items as a dict
        try:
            return kind(items)
        except TypeError:
            return items
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(map_batch(fn, d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(map_batch(fn, d) for d in data)
    return fn(data)


def _ship(data: Any) -> Any:
    from ..core.tensor import Tensor
    if not isinstance(data, Tensor):
        return data
    if data.device.type != "cpu":
        raise RuntimeError(f"a DataLoader worker produced a tensor on {data.device}; "
                           f"workers must return cpu tensors or NumPy arrays (device "
                           f"contexts are not usable in worker processes). Move batches "
                           f"to the device in the training loop with .to(device)")
    return Shipped(np.ascontiguousarray(data.detach().numpy()), data.dtype.name)


def _receive(data: Any) -> Any:
    if not isinstance(data, Shipped):
        return data
    from .. import from_numpy
    t = from_numpy(data.array)
    return t if t.dtype.name == data.dtype else t.to(data.dtype)


def pack(data: Any) -> Any:
    """``data`` with every cpu tensor replaced by a :class:`Shipped` array (omnitensor
    tensors do not pickle: see ``Tensor.__reduce__``)."""
    return map_batch(_ship, data)


def unpack(data: Any) -> Any:
    """Inverse of :func:`pack` in the main process: cpu tensors over the received
    arrays (no further copy)."""
    return map_batch(_receive, data)


def check_dataset(dataset: Any) -> None:
    """Refuse, before any worker starts, a dataset holding tensors on a device: its
    attributes (and the tensors, lists of tensors and datasets they hold, a few levels
    deep) are searched."""
    from ..core.tensor import Tensor
    seen: set[int] = set()

    def tensors(obj: Any, depth: int = 0) -> list:
        if isinstance(obj, Tensor):
            return [obj]
        if id(obj) in seen or depth > 3:
            return []
        seen.add(id(obj))
        if isinstance(obj, (list, tuple)):
            items: Any = obj[:64]
        elif isinstance(obj, dict):
            items = list(obj.values())[:64]
        elif hasattr(obj, "__dict__") and not isinstance(obj, type):
            items = list(vars(obj).values())
        else:
            return []
        return [t for item in items for t in tensors(item, depth + 1)]
    for t in tensors(dataset):
        if t.device.type != "cpu":
            raise ValueError(f"DataLoader(num_workers>0): the dataset holds a tensor on "
                             f"{t.device}; worker processes cannot use device contexts. "
                             f"Keep the dataset on cpu and move each batch with "
                             f".to(device) in the loop, or use num_workers=0")


def _np_seed(base_seed: int, worker_id: int) -> np.ndarray:
    return np.random.SeedSequence([worker_id, base_seed & (2 ** 64 - 1)]).generate_state(4)


@dataclass
class WorkerSpec:
    """Everything a worker needs, fixed for the loader's lifetime."""

    dataset: Any
    iterable: bool
    auto_collation: bool
    batch_size: int | None
    drop_last: bool
    collate_fn: Callable
    fetch_batch: Callable | None  # the dataset's __getbatch__, when the loader uses it
    worker_init_fn: Callable | None
    num_workers: int


def _fetch_map(spec: WorkerSpec, index: Any) -> Any:
    ds = spec.dataset
    if not spec.auto_collation:
        return spec.collate_fn(ds[index])
    if spec.fetch_batch is not None:
        return spec.fetch_batch(index)
    return spec.collate_fn([ds[i] for i in index])


def _fetch_stream(spec: WorkerSpec, it: Any) -> Any:
    """The next batch (or sample) from this worker's stream; StopIteration at its end."""
    if not spec.auto_collation:
        return spec.collate_fn(next(it))
    size = spec.batch_size or 1
    batch = []
    for sample in it:
        batch.append(sample)
        if len(batch) == size:
            break
    if not batch or (len(batch) < size and spec.drop_last):
        raise StopIteration
    return spec.collate_fn(batch)


def worker_loop(spec: WorkerSpec, worker_id: int, base_seed: int, index_queue: Any,
                result_queue: Any, done_event: Any, parent_pid: int) -> None:
    """Serve tasks ``(epoch, task_index, indices)`` from ``index_queue`` until ``None``;
    answer ``(epoch, task_index, batch | ExceptionWrapper | IterableEnd)``."""
    global _worker_info
    from .. import device as _device, manual_seed, set_num_threads
    try:
        # as torch: one intra-op thread per worker (the workers are the parallelism)
        set_num_threads(1)
        seed = base_seed + worker_id
        random.seed(seed)
        manual_seed(seed)
        np.random.seed(_np_seed(base_seed, worker_id))
        _worker_info = WorkerInfo(worker_id, spec.num_workers, seed, spec.dataset)
        init_error = None
        with _device("cpu"):  # new tensors in a worker stay on the host
            if spec.worker_init_fn is not None:
                try:
                    spec.worker_init_fn(worker_id)
                except Exception as e:  # noqa: BLE001 - reported to the main process
                    init_error = ExceptionWrapper(e, f"in DataLoader worker process "
                                                     f"{worker_id} (worker_init_fn)")
            stream, stream_epoch, exhausted = None, None, False
            while True:
                try:
                    task = index_queue.get(timeout=STATUS_INTERVAL)
                except queue.Empty:
                    if os.getppid() != parent_pid:  # orphaned: the main process died
                        break
                    continue
                if task is None:
                    break
                if done_event.is_set():
                    continue
                epoch, idx, index = task
                if init_error is not None:
                    result_queue.put(_serialize(epoch, idx, init_error, worker_id))
                    init_error = None
                    continue
                data: Any  # a sample, its end marker, or the wrapped exception
                try:
                    if spec.iterable:
                        if epoch != stream_epoch:  # a new epoch restarts the stream
                            stream, stream_epoch, exhausted = iter(spec.dataset), epoch, False
                        if exhausted:
                            data = IterableEnd(worker_id)
                        else:
                            try:
                                data = _fetch_stream(spec, stream)
                            except StopIteration:
                                exhausted, data = True, IterableEnd(worker_id)
                    else:
                        data = _fetch_map(spec, index)
                    data = pack(data)
                except Exception as e:  # noqa: BLE001 - re-raised in the main process
                    data = ExceptionWrapper(e, f"in DataLoader worker process {worker_id}")
                result_queue.put(_serialize(epoch, idx, data, worker_id))
                del data
    except KeyboardInterrupt:
        pass  # the main process handles Ctrl-C and shuts the workers down
    finally:
        if done_event.is_set():
            # the main process no longer reads: do not block exit flushing the pipe
            result_queue.cancel_join_thread()
        result_queue.close()
        sys.stdout.flush()
        sys.stderr.flush()
