"""Where loaded tensors go: ``map_location`` with torch's meaning, and the host storages
that torch's ``map_location`` callables receive.

``map_location`` may be (as in ``torch.load``):

* ``None``: every storage goes back where it was saved;
* a device string or object: every storage goes there;
* a dict ``{"saved": "new"}``: saved locations it names are moved, others stay;
* a callable ``f(storage, location)`` (torch's form): it gets the storage on the host and
  its saved location string, and returns a storage (``storage`` itself keeps it on the
  host, ``storage.cuda(1)`` or ``storage.to("opencl:0")`` moves it) or None (the default);
  a callable of one argument ``f(location) -> device`` is omnitensor's older form.

A location is the device string omnitensor saved (``"opencl:0"`` in its own side record,
see :mod:`.zip_format`), else the torch tag the file carries (``"cpu"``, ``"cuda:0"``).
"""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np

__all__ = ["LoadedStorage", "resolve_location", "MapLocation"]

MapLocation = Any


class LoadedStorage:
    """A storage read from a checkpoint: its bytes on the host (``array``, 1-D, of the
    storage's element dtype), its saved ``location`` and the device it will be restored
    to (``device``). torch's storage methods that ``map_location`` callables use
    (``cpu``, ``cuda``, ``to``, ``size``, ``nbytes``, ``element_size``) move or describe it."""

    def __init__(self, array: np.ndarray, dtype: Any, location: str,
                 device: Any = "cpu") -> None:
        self.array, self.dtype, self.location = array, dtype, location
        self.device = device
        self.bases: dict[str, Any] = {}  # dtype name -> the 1-D tensor views are cut from

    def _moved(self, device: Any) -> "LoadedStorage":
        out = LoadedStorage(self.array, self.dtype, self.location, device)
        return out

    def cpu(self) -> "LoadedStorage":
        return self._moved("cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False) -> "LoadedStorage":
        if device is None:
            return self._moved("cuda")
        return self._moved(f"cuda:{device}" if isinstance(device, int) else device)

    def to(self, device: Any = None, *_: Any, **__: Any) -> "LoadedStorage":
        return self._moved("cpu" if device is None else device)

    def size(self) -> int:
        return int(self.array.shape[0])

    def nbytes(self) -> int:
        return int(self.array.nbytes)

    def element_size(self) -> int:
        return int(self.array.dtype.itemsize)

    def __len__(self) -> int:
        return self.size()

    def __repr__(self) -> str:
        return (f"LoadedStorage(dtype={getattr(self.dtype, 'name', self.dtype)}, "
                f"size={self.size()}, location={self.location!r}, device={self.device!s})")


def _takes_one_argument(fn: Any) -> bool:
    """Whether ``fn`` is omnitensor's older ``f(location)`` form (one positional
    parameter, no ``*args``) rather than torch's ``f(storage, location)``."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    kinds = [p.kind for p in params]
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return False
    positional = [p for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                  inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    return len(positional) == 1


def resolve_location(location: str, map_location: MapLocation,
                     storage: LoadedStorage | None = None) -> Any:
    """The device (string or object) a storage saved at ``location`` is restored to."""
    if map_location is None:
        return location
    if isinstance(map_location, bytes):
        return map_location.decode("ascii")
    if isinstance(map_location, dict):
        mapped = {str(k): v for k, v in map_location.items()}
        return mapped.get(location, location)
    if isinstance(map_location, str) or not callable(map_location):
        return map_location  # a device string or object
    if _takes_one_argument(map_location):
        return map_location(location)
    if storage is None:
        storage = LoadedStorage(np.zeros(0, np.uint8), None, location, location)
    result = map_location(storage, location)
    if result is None:
        return location
    if isinstance(result, LoadedStorage):
        return result.device
    device = getattr(result, "device", None)  # a storage-like object of the caller's
    return result if device is None else device
