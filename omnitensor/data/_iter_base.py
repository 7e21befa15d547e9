"""The iterator types ``iter(DataLoader)`` returns, under torch's names: code written for
torch checks ``isinstance(it, _BaseDataLoaderIter)`` or ``_MultiProcessingDataLoaderIter``
(to tell a loader's own iterator from a user's, or to reach its workers)."""
from __future__ import annotations

from typing import Any, Iterator

__all__ = ["BaseLoaderIter", "SingleProcessIter"]


class BaseLoaderIter:
    """torch's ``_BaseDataLoaderIter``: an iterator over one epoch of a loader's batches
    with the loader's length."""

    _loader_len: int | None = None

    def __iter__(self) -> "BaseLoaderIter":
        return self

    def __next__(self) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class SingleProcessIter(BaseLoaderIter):
    """torch's ``_SingleProcessDataLoaderIter``: the batches made in this process
    (``batches`` is the loader's generator for the epoch)."""

    def __init__(self, loader: Any, batches: Iterator[Any]) -> None:
        self._loader = loader
        self._batches = batches

    def __next__(self) -> Any:
        return next(self._batches)

    def __len__(self) -> int:
        return len(self._loader)
