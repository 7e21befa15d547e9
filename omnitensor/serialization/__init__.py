"""Checkpoints: ``omnitensor.save(obj, f)`` / ``omnitensor.load(f)`` (torch's
``torch.save``/``torch.load``; see ``docs/checkpoints.md``).

Formats. ``save`` writes torch's zip format (what ``torch.save`` writes since 1.6), which
real ``torch.load(f, weights_only=True)`` reads; ``_use_new_zipfile_serialization=False``
writes torch's older raw format; ``format="safetensors"`` (or a path ending in
``.safetensors``, or ``metadata=``) writes omnitensor's safetensors format, which holds no
pickle at all. ``load`` tells them apart by their first bytes and reads all of them, plus
torch's pre-0.4 tar format.

Safety. ``load`` defaults to ``weights_only=True``, as torch since 2.6: torch pickles are
read by an allow-list unpickler (:mod:`.unpickler`) that builds tensors and plain data,
never imports anything and calls only its own functions; a file naming any other class or
function is refused with :class:`WeightsOnlyError` (a ``pickle.UnpicklingError``) unless
the caller allowlisted it (:func:`add_safe_globals`, :func:`safe_globals`).
``weights_only=False`` is for files you trust: it is Python's unpickler, and **it runs
whatever code the file names**, as torch's does. Either way, a file that is not a regular
file is refused before reading, a truncated or corrupted one raises
:class:`CheckpointError` saying which, and what a file makes us build is bounded by its
size. Writes to a path are atomic.

Devices. Tensors are saved from host copies; each storage records its device, and
``load`` restores it there or where ``map_location`` says (see :mod:`.locations`).
"""
from __future__ import annotations

import os
from typing import Any

from .objects import (WeightsOnlyError, add_safe_globals, clear_safe_globals,
                                  get_safe_globals, safe_globals, user_allowed)
from . import safetensors_format
from .files import CheckpointError, map_checkpoint, read_checkpoint_bytes, write_atomically
from .legacy_format import (PickleScanner, is_tar, pickle_for_legacy, read_legacy, read_tar,
                            write_legacy)
from .locations import LoadedStorage, MapLocation
from .rebuild import LoadContext
from .safetensors_format import _Decoder  # the attack tests drive it directly
from .torch_module_api import *  # the rest of torch.serialization
from .torch_module_api import __all__ as _TORCH_MODULE_API
from .torch_names import allowed_globals
from .zip_format import is_zip, pickle_for_zip, read_zip, write_zip

__all__ = ["save", "load", "CheckpointError", "WeightsOnlyError", "add_safe_globals",
           "safe_globals", "get_safe_globals", "clear_safe_globals",
           "get_unsafe_globals_in_checkpoint", "DEFAULT_PROTOCOL", "LoadedStorage",
           *_TORCH_MODULE_API]

#: the pickle protocol torch writes (and the only one ``save`` writes)
DEFAULT_PROTOCOL = 2
_FORMATS = ("torch", "legacy", "safetensors")


def _format_of(f: Any, format: str | None, zipfile_serialization: bool,  # noqa: A002
               metadata: Any) -> str:
    if format is not None:
        if format not in _FORMATS:
            raise ValueError(f"omnitensor.save: format={format!r}; choose one of "
                             f"{', '.join(map(repr, _FORMATS))}")
        return format
    if metadata is not None:
        return "safetensors"
    if not zipfile_serialization:
        return "legacy"
    if isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(".safetensors"):
        return "safetensors"
    return "torch"


def save(obj: Any, f: str | os.PathLike | Any, pickle_module: Any = None,
         pickle_protocol: int = DEFAULT_PROTOCOL, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False, *,
         format: str | None = None,  # noqa: A002 - the natural keyword; no builtin is used
         metadata: dict[str, str] | None = None) -> None:
    """Write ``obj`` (a ``state_dict``, ``{"model": ..., "optim": ..., "epoch": 3}``, a
    whole model) to ``f``, a path (written atomically) or a binary stream.

    ``format``: ``"torch"`` (torch's zip format, the default), ``"legacy"`` (torch's raw
    pre-1.6 format, also chosen by ``_use_new_zipfile_serialization=False``) or
    ``"safetensors"`` (omnitensor's pickle-free format, also chosen by a ``.safetensors``
    path or by ``metadata``: string entries for its header). torch's ``pickle_module``
    and ``pickle_protocol`` are accepted; the pickle is always protocol 2, torch's."""
    del pickle_module, pickle_protocol, _disable_byteorder_record  # torch's; see docstring
    kind = _format_of(f, format, _use_new_zipfile_serialization, metadata)
    if kind == "safetensors":
        data = safetensors_format.encode(obj, metadata)

        def produce(out: Any) -> None:
            out.write(data)
        write_atomically(produce, f)
    elif metadata is not None:
        raise ValueError("omnitensor.save: metadata= is for format='safetensors'")
    else:
        # pickled before the file is opened: an unsaveable object leaves the target as it was
        legacy = kind == "legacy"
        pkl, storages = (pickle_for_legacy if legacy else pickle_for_zip)(obj)
        write = write_legacy if legacy else write_zip
        write_atomically(lambda out: write(pkl, storages, out), f)


def load(f: str | os.PathLike | Any, map_location: MapLocation = None,
         pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Read a checkpoint written by :func:`save` or by torch (zip, raw legacy or tar
    format) or an omnitensor safetensors checkpoint.

    ``map_location``: None restores each storage on the device it was saved from; a device
    string or object puts every storage there; a dict maps saved locations to new ones; a
    callable ``f(storage, location)`` returns a storage (``storage``, ``storage.cuda(1)``)
    or None, as torch's (``f(location) -> device`` also works).

    ``weights_only`` (default True, as torch >= 2.6): only tensors and plain data are
    built; a file naming a class or function raises :class:`WeightsOnlyError` with torch's
    explanation, unless it was allowlisted (:func:`add_safe_globals`).
    ``weights_only=False`` unpickles with Python's unpickler: **the file can run any
    code**; use it only for files you trust. ``mmap=True`` maps a zip checkpoint instead
    of reading it (tensors restored on the host share the mapping)."""
    if pickle_module is not None and weights_only:
        raise ValueError("omnitensor.load: pickle_module cannot be combined with "
                         "weights_only=True (as in torch)")
    if weights_only is None:
        weights_only = pickle_module is None  # torch: an explicit pickle_module trusts
    data, name = map_checkpoint(f) if mmap else read_checkpoint_bytes(f)
    if is_zip(data):
        return read_zip(data, name, map_location, bool(weights_only), bool(mmap))
    if isinstance(data, (bytes, bytearray)) or not mmap:
        raw = data
    else:
        raw = bytes(data)
    if safetensors_format.is_safetensors(raw):
        return safetensors_format.decode(raw, name, map_location, bool(weights_only))
    if mmap:
        raise CheckpointError(f"{name}: mmap=True needs a zip checkpoint (torch.save's "
                              f"format since 1.6); load this one with mmap=False")
    if raw[:1] == b"\x80":
        return read_legacy(raw, name, map_location, bool(weights_only))
    if is_tar(raw):
        return read_tar(raw, name, map_location, bool(weights_only))
    if len(raw) < 9:
        raise CheckpointError(f"{name} is truncated or not a checkpoint: {len(raw)} bytes")
    raise CheckpointError(f"{name} is not a checkpoint: its first bytes match neither torch's "
                          f"zip, raw or tar formats nor omnitensor's safetensors format")


def get_unsafe_globals_in_checkpoint(f: str | os.PathLike | Any) -> list[str]:
    """The classes and functions a torch checkpoint names that ``load(weights_only=True)``
    would refuse (torch's function of this name); the file is scanned, nothing runs."""
    data, name = read_checkpoint_bytes(f)
    ctx = LoadContext(name, None, len(data))
    if is_zip(data):
        from .zip_format import _Archive
        pkl, count = bytes(_Archive(data, name, check_crc=True).read("data.pkl")), 1
    elif data[:1] == b"\x80":
        pkl, count = data, 5  # the raw format: header pickles, the object, the storage keys
    else:
        return []
    scan = PickleScanner(pkl, ctx)
    for _ in range(count):
        scan.load()
    table = allowed_globals(ctx)
    return sorted({g for g in scan.globals if g not in table and user_allowed(g) is None})
