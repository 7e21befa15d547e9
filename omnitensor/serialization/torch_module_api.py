"""The rest of ``torch.serialization``'s public names, for code that imports them
(pyro's param store imports ``MAP_LOCATION``; loaders check ``get_default_mmap_options``).

They describe torch's loader and keep its switches: the options are recorded and read
back as torch's are; this loader always reads little-endian data, checks CRC32 where the
zip holds it and reads storages without ``mmap``, whatever the switches say, and says so
where a switch would change the result (``set_default_load_endianness`` to BIG).
"""
from __future__ import annotations

import contextlib
import enum
import mmap
import os
from typing import IO, Any, Callable, Iterator, Union

from .locations import LoadedStorage

__all__ = ["MAP_LOCATION", "FILE_LIKE", "STORAGE_KEY_SEPARATOR", "MAP_PRIVATE", "MAP_SHARED",
           "LoadEndianness", "SourceChangeWarning", "get_default_load_endianness",
           "set_default_load_endianness", "get_default_mmap_options",
           "set_default_mmap_options", "get_crc32_options", "set_crc32_options",
           "register_package", "location_tag", "default_restore_location",
           "normalize_storage_type", "storage_to_tensor_type",
           "check_module_version_greater_or_equal", "validate_cuda_device", "skip_data"]

#: what ``map_location`` may be (torch's alias, for annotations)
MAP_LOCATION = Union[Callable[[Any, str], Any], Any, str, dict, None]
#: what ``save``/``load`` take as a file (torch's alias)
FILE_LIKE = Union[str, os.PathLike, IO[bytes]]
STORAGE_KEY_SEPARATOR = ","
MAP_PRIVATE, MAP_SHARED = getattr(mmap, "MAP_PRIVATE", 2), getattr(mmap, "MAP_SHARED", 1)


class LoadEndianness(enum.Enum):
    NATIVE = 1
    LITTLE = 2
    BIG = 3


class SourceChangeWarning(Warning):
    """torch warns with this when a whole-module pickle's source changed."""


_options: dict[str, Any] = {"endianness": None, "mmap_flags": MAP_PRIVATE, "crc32": True}
_packages: list[tuple[int, Callable, Callable]] = []


def get_default_load_endianness() -> LoadEndianness | None:
    return _options["endianness"]


def set_default_load_endianness(endianness: LoadEndianness | None) -> None:
    """Record the byte order legacy files are read in; only little-endian (and native on
    little-endian machines) is read here."""
    if endianness is not None and not isinstance(endianness, LoadEndianness):
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    if endianness is LoadEndianness.BIG:
        raise NotImplementedError("set_default_load_endianness(BIG): omnitensor reads "
                                  "little-endian checkpoints only (every file torch writes on "
                                  "x86-64 and ARM)")
    _options["endianness"] = endianness


def get_default_mmap_options() -> int:
    return int(_options["mmap_flags"])


def set_default_mmap_options(flags: int) -> None:
    if flags not in (MAP_PRIVATE, MAP_SHARED):
        raise ValueError(f"Invalid argument in function set_default_mmap_options, expected "
                         f"mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
    _options["mmap_flags"] = flags


def get_crc32_options() -> bool:
    return bool(_options["crc32"])


def set_crc32_options(compute_crc32: bool) -> None:
    _options["crc32"] = bool(compute_crc32)


def register_package(priority: int, tagger: Callable, deserializer: Callable) -> None:
    """torch's hook for new device types in checkpoints: recorded, and consulted by
    :func:`location_tag` and :func:`default_restore_location` in priority order."""
    _packages.append((priority, tagger, deserializer))
    _packages.sort(key=lambda p: p[0])


def location_tag(storage: Any) -> str:
    """The location string a storage is saved under (``"cpu"``, ``"cuda:0"``...)."""
    for _, tagger, _ in _packages:
        tag = tagger(storage)
        if tag:
            return str(tag)
    device = getattr(storage, "device", "cpu")
    return str(device)


def default_restore_location(storage: Any, location: str) -> Any:
    """``storage`` moved to ``location``, as ``load`` does without a ``map_location``."""
    for _, _, deserializer in _packages:
        out = deserializer(storage, location)
        if out is not None:
            return out
    if isinstance(storage, LoadedStorage):
        return storage.to(location)
    to = getattr(storage, "to", None)
    return storage if to is None else to(location)


def normalize_storage_type(storage_type: Any) -> Any:
    return storage_type


def storage_to_tensor_type(storage: Any) -> Any:
    """The tensor class of a storage (there is one: ``Tensor``)."""
    from ..core.tensor import Tensor
    return Tensor


def check_module_version_greater_or_equal(module: Any, req_version_tuple: tuple,
                                          error_if_malformed: bool = True) -> bool:
    """Whether ``module.__version__`` is at least ``req_version_tuple`` (torch's)."""
    version = str(getattr(module, "__version__", ""))
    try:
        parts = tuple(type(req)(p) for req, p in zip(req_version_tuple, version.split(".")))
        return parts >= tuple(req_version_tuple)
    except (ValueError, TypeError) as e:
        if error_if_malformed:
            raise RuntimeError(f"'{module.__name__}' module version string is malformed "
                               f"'{version}' and cannot be compared with tuple "
                               f"{req_version_tuple}") from e
        return False


def validate_cuda_device(location: Any) -> int:
    """The device index in a ``cuda`` location (``"cuda:1"`` -> 1)."""
    from ..core.device import device
    index = device(location).index
    return 0 if index is None else int(index)


@contextlib.contextmanager
def skip_data(materialize_fake_tensors: bool = False) -> Iterator[None]:
    """torch's save-without-data mode: refused, since the files it writes hold no weights
    and cannot be loaded as checkpoints here."""
    raise NotImplementedError("torch.serialization.skip_data is not supported: save the "
                              "tensors (or save only the structure you need)")
    yield  # pragma: no cover - a generator for contextmanager
