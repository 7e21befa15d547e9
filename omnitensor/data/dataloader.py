"""``DataLoader``: batches from a dataset, with shuffling, custom samplers and collation
(torch semantics).

``num_workers=0`` builds batches in the calling process; with the default ``collate_fn``
and a dataset that has ``__getbatch__`` (``TensorDataset``, ``Subset`` of one), a batch
is one gather per tensor. ``num_workers > 0`` loads and collates batches in worker
processes (``_worker.py``, ``_mp_iter.py``): they return cpu tensors, which the training
loop moves to its device with ``.to(device)``, as in torch.

``pin_memory``: torch pins host batches so that CUDA can copy them asynchronously. Where
the accelerator (or ``pin_memory_device``) has a pinned allocator (CUDA's, see
``core/pinned.py``) each host tensor of a batch is ``pin_memory()``-ed; the other backends
(NumPy cpu, OpenCL, SYCL) have no page-locked allocation to offer, so there
``pin_memory=True`` only makes each batch's host arrays C-contiguous (one copy per
``.to(device)``); ``pin_memory_device`` is checked to name a device of this machine.
"""
from __future__ import annotations

import collections.abc as cabc
from typing import Any, Callable, Iterator

import numpy as np

from ..core.ops.creation import tensor as _tensor
from ..core.pinned import pinned_allocator
from ..core.ops.random import Generator, default_generator, randint
from ..core.ops.join import stack
from ..core.tensor import Tensor
from ._iter_base import BaseLoaderIter as _BaseDataLoaderIter, SingleProcessIter
from ._worker import check_dataset, get_worker_info, map_batch
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]
# torch's names of the iterator types (omnitensor/data/_iter_base.py, _mp_iter.py)
_SingleProcessDataLoaderIter = SingleProcessIter


def __getattr__(name: str) -> Any:
    if name == "_MultiProcessingDataLoaderIter":  # imported on use: it starts processes
        from ._mp_iter import MultiProcessIter
        return MultiProcessIter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: Largest copy (bytes) the DataLoader makes to gather a whole epoch of a TensorDataset at
#: once; bigger epochs are gathered batch by batch.
EPOCH_GATHER_BYTES = 256 * 1024 * 1024


def default_convert(data: Any) -> Any:
    """NumPy arrays (and containers of them) to tensors; everything else unchanged."""
    if isinstance(data, np.ndarray) and data.dtype.kind in "biufc":
        return _tensor(data)
    if isinstance(data, cabc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return [default_convert(d) for d in data]
    return data


def default_collate(batch: list[Any]) -> Any:
    """Stack a list of samples into a batch, recursively (torch's rules): tensors and
    NumPy arrays are stacked on a new first dim; floats become float64, ints int64, bools
    bool tensors; strings stay a list; dicts collate per key; namedtuples per field;
    tuples/lists per position (returned as a list, as torch does)."""
    if not batch:
        raise ValueError("default_collate: empty batch")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind not in "biufc":
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, "
                            f"numbers, dicts or lists; found {elem.dtype}")
        return _tensor(np.stack(batch))
    if isinstance(elem, np.generic):
        return _tensor(np.array(batch))
    if isinstance(elem, bool):
        return _tensor(batch)
    if isinstance(elem, float):
        from ..core import dtypes as _dt
        return _tensor(batch, dtype=_dt.float64)
    if isinstance(elem, int):
        return _tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, cabc.Mapping):
        out = {key: default_collate([d[key] for d in batch]) for key in elem}
        kind: Any = type(elem)  # a Mapping subclass: most take the items as a dict
        try:
            return kind(out)
        except TypeError:
            return out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, cabc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(elem).__name__}")


class DataLoader:
    """Iterate over ``dataset`` in batches.

    ``shuffle=True`` draws a new permutation each epoch from ``generator`` (an
    ``omnitensor.Generator``; seeded, the order is reproducible) or, without one, from a
    seed taken from the default generator. ``sampler`` / ``batch_sampler`` replace the
    index order (e.g. a ``DistributedSampler``); ``drop_last`` drops a short final batch;
    ``collate_fn`` turns a list of samples into a batch (``default_collate``).

    ``num_workers`` worker processes (``prefetch_factor`` batches each in flight,
    default 2) load batches; ``worker_init_fn(worker_id)`` runs in each worker after
    seeding; ``persistent_workers`` keeps them across epochs; ``timeout`` (seconds, 0 =
    wait forever) bounds the wait for one batch; ``in_order=False`` yields batches as
    they arrive. Inside a worker, ``get_worker_info()`` describes it."""

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[list], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context: Any = None,
                 generator: Generator | None = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing. Let num_workers > 0 to enable "
                             "multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and (not isinstance(prefetch_factor, int)
                                            or prefetch_factor < 1):
            raise ValueError(f"prefetch_factor option should be a positive integer, got "
                             f"{prefetch_factor!r}")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers > 0:
            check_dataset(dataset)
        if pin_memory_device:
            from ..core.device import device as _device
            _device(pin_memory_device)  # a clear DeviceError for a device not here
        self.dataset, self.num_workers, self.pin_memory = dataset, num_workers, pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout, self.worker_init_fn, self.generator = timeout, worker_init_fn, generator
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers
        self.multiprocessing_context, self.in_order = multiprocessing_context, in_order
        self._iterator: Any = None
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 "sampler and batch_sampler options")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else \
                SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self._auto_collation = batch_sampler is not None or (self._iterable and
                                                             batch_size is not None)
        self._custom_collate = collate_fn is not None
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _index_sampler(self) -> Any:
        """What the loader iterates for indices: the batch sampler when batching."""
        return self.batch_sampler if self._auto_collation else self.sampler

    @property
    def _pin_fn(self) -> Callable[[Any], Any] | None:
        if not self.pin_memory:
            return None
        device = self.pin_memory_device or None
        pins = pinned_allocator(device) is not None
        return lambda batch: _pin(batch, pins, device)

    def _batch_fetcher(self) -> Callable | None:
        """The dataset's ``__getbatch__`` when the loader may use it (default collate)."""
        if self._custom_collate or self._iterable or not self._auto_collation:
            return None
        return getattr(self.dataset, "__getbatch__", None)

    def __iter__(self) -> _BaseDataLoaderIter:
        if self.num_workers > 0:
            from ._mp_iter import MultiProcessIter
            if not self.persistent_workers:
                return MultiProcessIter(self)
            it = self._iterator
            if it is None or it._shut:
                it = self._iterator = MultiProcessIter(self)
            else:
                it._reset()
            return it
        # as torch, every epoch draws one shared seed from the loader's generator, workers
        # or not, so a seeded shuffle gives the same order for every num_workers
        self._shared_seed()
        it = self._iter_main()
        pin = self._pin_fn
        return SingleProcessIter(self, it if pin is None else (pin(b) for b in it))

    def _shared_seed(self) -> int:
        """The epoch's ``base_seed`` (torch's ``_get_shared_seed``)."""
        gen = self.generator if self.generator is not None else default_generator
        return int(randint(0, 1 << 62, (1,), generator=gen, device="cpu").item())

    def _iter_main(self) -> Iterator[Any]:
        if self._iterable:
            return self._iter_iterable()
        if self.batch_sampler is None:
            return (self.collate_fn(self.dataset[i]) for i in self.sampler)
        return self._iter_batches()

    def _iter_batches(self) -> Iterator[Any]:
        fetch = None if self._custom_collate else getattr(self.dataset, "__getbatch__", None)
        ds, collate = self.dataset, self.collate_fn
        if fetch is not None:
            per_sample = getattr(ds, "_sample_nbytes", None)
            # whole-epoch gathering reads the index order up front: only for our own,
            # finite samplers (a custom one may be endless or depend on progress)
            finite = type(self.batch_sampler) is BatchSampler and type(
                self.batch_sampler.sampler) in (SequentialSampler, RandomSampler)
            # and small: a RandomSampler may draw 1e10 indices with replacement
            if per_sample is not None and finite and \
                    len(self.batch_sampler.sampler) * per_sample() <= EPOCH_GATHER_BYTES:
                yield from self._iter_epoch_gather(fetch, per_sample())
                return
            for indices in self.batch_sampler:
                yield fetch(indices)
            return
        for indices in self.batch_sampler:
            yield collate([ds[i] for i in indices])

    def _iter_epoch_gather(self, fetch: Callable, sample_nbytes: int) -> Iterator[Any]:
        """Gather the whole epoch in its sampled order with one indexing op per tensor,
        then hand out each batch as a slice (a view): the same batches as one gather per
        batch, at a fraction of the per-batch cost. Used while the epoch's copy stays
        small (EPOCH_GATHER_BYTES)."""
        batches = list(self.batch_sampler)
        flat = [i for b in batches for i in b]
        if not flat or len(flat) * sample_nbytes > EPOCH_GATHER_BYTES:
            for indices in batches:
                yield fetch(indices)
            return
        full = fetch(flat)
        start = 0
        for indices in batches:
            stop = start + len(indices)
            yield [t[start:stop] for t in full]
            start = stop

    def _iter_iterable(self) -> Iterator[Any]:
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch: list[Any] = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)


def _pin(batch: Any, pins: bool = False, device: Any = None) -> Any:
    """``pin_memory=True``: host tensors of a batch pinned where a backend pins (``pins``),
    else made C-contiguous (see the module docstring)."""
    return map_batch(lambda x: _pin_one(x, pins, device), batch)


def _pin_one(x: Any, pins: bool, device: Any) -> Any:
    if isinstance(x, Tensor) and x.device.type == "cpu" and x.layout.name == "strided":
        if pins:
            return x.pin_memory(device)
        if not x.is_contiguous():
            return x.contiguous()
    return x
