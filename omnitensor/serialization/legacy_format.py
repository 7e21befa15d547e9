"""torch's formats before the zip archive, read through the same allow-list; and the raw one
written (``save(..., _use_new_zipfile_serialization=False)``).

* **raw** (torch 0.4 to 1.5, and ``_use_new_zipfile_serialization=False`` since): five
  pickles back to back — torch's magic number, protocol version 1001, a ``sys_info`` dict,
  the object (storages as persistent ids ``("storage", type, key, location, numel,
  view)``), the list of storage keys — then each storage as an int64 element count and
  its bytes, in that order. The storages' element sizes are only in the object's pickle,
  so it is read twice: first by :class:`PickleScanner`, which runs its data instructions
  and calls nothing, to collect the persistent ids, then for real.
* **tar** (before 0.4): members ``storages``, ``tensors`` and ``pickle``. torch refuses it
  with ``weights_only=True``; here the allow-list reads it like the others.
"""
from __future__ import annotations

import functools
import io
import struct
import tarfile
from typing import Any, BinaryIO

import numpy as np

from .files import CheckpointError
from .locations import LoadedStorage
from .pickler import SavedStorages, TorchPickler
from .rebuild import LoadContext, StorageType
from .trusted_unpickler import TrustedUnpickler
from .unpickler import SafeUnpickler

__all__ = ["read_legacy", "read_tar", "pickle_for_legacy", "write_legacy", "PickleScanner", "is_tar", "MAGIC"]

MAGIC = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001


class _Opaque:
    """What the scanner pushes instead of calling or building anything."""


class PickleScanner(SafeUnpickler):
    """Runs a pickle's data instructions only: a global becomes its allow-list value or a
    placeholder, ``REDUCE``/``NEWOBJ``/``BUILD`` call nothing, persistent ids are recorded.
    Nothing from the file can run; what comes out is the shape of the data."""

    def __init__(self, data: Any, ctx: LoadContext, pos: int = 0) -> None:
        super().__init__(data, ctx, None, pos)
        self.pids: list[Any] = []
        self.globals: list[str] = []

    def load(self) -> Any:
        return self.run()

    def _global(self, module: str, name: str) -> Any:
        module, name = self._path(module, name)
        self.globals.append(f"{module}.{name}")
        entry = self.table.get(f"{module}.{name}")
        return entry[1] if entry is not None and isinstance(entry[1], StorageType) else _Opaque()

    def _op_REDUCE(self) -> None:
        self.stack.pop()
        self.stack[-1] = _Opaque()

    def _newobj(self, cls: Any, args: Any, kwargs: dict | None = None) -> None:
        self.stack.append(_Opaque())

    def _op_BUILD(self) -> None:
        self.stack.pop()

    def _op_BINPERSID(self) -> None:
        self.pids.append(self.stack.pop())
        self.stack.append(_Opaque())

    def _list_target(self) -> list:
        target = self.stack[-1]
        return target if type(target) is list else []

    def _set_items(self, target: Any, items: list[Any]) -> Any:
        try:
            return super()._set_items(target, items)
        except CheckpointError:
            return target


def is_tar(data: Any) -> bool:
    return len(data) >= 512 and bytes(data[257:262]) == b"ustar"


def _itemsize(stype: Any) -> int:
    return 1 if not isinstance(stype, StorageType) or stype.dtype is None else \
        stype.dtype.itemsize


def _storage_view(ctx: LoadContext, root: LoadedStorage, view: Any) -> LoadedStorage:
    """A pre-1.0 storage view ``(key, offset, size)`` of ``root`` (its bytes; tensors on
    it do not share memory with tensors on ``root``)."""
    if not (isinstance(view, tuple) and len(view) == 3 and all(
            isinstance(v, int) for v in view[1:])):
        raise ctx.fail(f"bad storage view {view!r}")
    key, offset, size = str(view[0]), view[1], view[2]
    if key not in ctx.storages:
        es = 1 if root.dtype is None else root.dtype.itemsize
        if offset < 0 or size < 0 or (offset + size) * es > root.array.nbytes:
            raise ctx.fail(f"storage view {key!r} reaches past its storage")
        part = root.array[offset * es:(offset + size) * es]
        ctx.storages[key] = LoadedStorage(part, root.dtype, root.location, root.device)
    return ctx.storages[key]


def _unpickle(data: Any, start: int, ctx: LoadContext, weights_only: bool,
              persistent_load: Any) -> Any:
    if weights_only:
        return SafeUnpickler(data, ctx, persistent_load, start).load()
    try:
        return TrustedUnpickler(io.BytesIO(bytes(data[start:])), ctx, persistent_load).load()
    except (EOFError, IndexError) as e:
        raise ctx.fail(f"its pickle is truncated ({e})") from None


def _storage_records(data: Any, ctx: LoadContext, keys: Any, pos: int,
                     sizes: dict[str, int]) -> dict[str, memoryview]:
    """Each listed storage's bytes: an int64 element count, then the elements."""
    if not isinstance(keys, list):
        raise ctx.fail("the storage key list is not a list")
    view, out = memoryview(data), {}
    for key in keys:
        key = str(key)
        if pos + 8 > len(view):
            raise ctx.fail("the storages are truncated")
        (numel,) = struct.unpack("<q", view[pos:pos + 8])
        end = pos + 8 + numel * sizes.get(key, 1)
        if numel < 0 or end > len(view):
            raise ctx.fail(f"storage {key!r} of {numel} elements is truncated")
        out[key], pos = view[pos + 8:end], end
    return out


def read_legacy(data: Any, name: str, map_location: Any, weights_only: bool) -> Any:
    """The object in a raw (pre-zip) torch checkpoint."""
    ctx = LoadContext(name, map_location, len(data))
    head = PickleScanner(data, ctx)
    magic = head.load()
    if magic != MAGIC:
        raise CheckpointError(f"{name} is a Python pickle but not a torch checkpoint (no torch "
                              f"magic number); a bare pickle is not read (loading one can run "
                              f"arbitrary code)")
    if head.load() != PROTOCOL_VERSION:
        raise CheckpointError(f"{name}: unsupported torch legacy protocol version")
    sys_info = head.load()
    if isinstance(sys_info, dict) and sys_info.get("little_endian") is False:
        ctx.swap = not ctx.swap
    start = head.pos
    scan = PickleScanner(data, ctx, start)
    scan.load()
    sizes = {str(p[2]): _itemsize(p[1]) for p in scan.pids
             if isinstance(p, tuple) and len(p) == 6 and p[0] == "storage"}
    keys = PickleScanner(data, ctx, scan.pos)
    records = _storage_records(data, ctx, keys.load(), keys.pos, sizes)

    def persistent_load(pid: Any) -> Any:
        if isinstance(pid, tuple) and len(pid) == 4 and pid[0] == "module":
            return pid[1]  # a whole module's class, already allow-listed (or trusted)
        if not isinstance(pid, tuple) or len(pid) != 6 or pid[0] != "storage":
            raise ctx.fail(f"persistent id {pid!r} is not a storage")
        _, stype, key, location, numel, view = pid
        storage = ctx.storage(str(key), stype, numel, location,
                              lambda k, n: _record(ctx, records, k, n))
        return storage if view is None else _storage_view(ctx, storage, view)

    return _unpickle(data, start, ctx, weights_only, persistent_load)


def _record(ctx: LoadContext, records: dict[str, memoryview], key: str, nbytes: int) -> Any:
    raw = records.get(key)
    if raw is None:
        raise ctx.fail(f"storage {key!r} is named but not stored")
    if len(raw) != nbytes:
        raise ctx.fail(f"storage {key!r} holds {len(raw)} bytes, its tensors need {nbytes}")
    return raw


# ----------------------------------------------------------------------------- tar
def _members(data: Any, name: str) -> dict[str, bytes]:
    try:
        with tarfile.open(fileobj=io.BytesIO(bytes(data)), mode="r:") as tar:
            out = {}
            for m in tar.getmembers():
                if m.isfile() and m.name in ("storages", "tensors", "pickle", "sys_info"):
                    f = tar.extractfile(m)
                    out[m.name] = f.read() if f is not None else b""
    except (tarfile.TarError, OSError, EOFError) as e:
        raise CheckpointError(f"{name} is a tar archive but is truncated or corrupted "
                              f"({e})") from None
    missing = {"storages", "tensors", "pickle"} - set(out)
    if missing:
        raise CheckpointError(f"{name} is a tar archive but not a torch checkpoint (no "
                              f"{', '.join(sorted(missing))})")
    return out


def _tar_storages(raw: bytes, ctx: LoadContext) -> None:
    u = SafeUnpickler(raw, ctx)
    for _ in range(_count(u, ctx)):
        entry = u.load()
        if not (isinstance(entry, tuple) and len(entry) == 3):
            raise ctx.fail("bad storage entry")
        key, location, stype = entry
        if u.pos + 8 > len(raw):
            raise ctx.fail("the storages are truncated")
        (numel,) = struct.unpack("<q", raw[u.pos:u.pos + 8])
        start, u.pos = u.pos + 8, u.pos + 8 + max(numel, 0) * _itemsize(stype)
        body = memoryview(raw)[start:u.pos]
        ctx.storage(str(key), stype, numel, location, functools.partial(_exact, ctx, body))
    for view in u.load() or []:  # (target, root, offset, numel)
        if not (isinstance(view, tuple) and len(view) == 4 and str(view[1]) in ctx.storages):
            raise ctx.fail(f"bad storage view {view!r}")
        _storage_view(ctx, ctx.storages[str(view[1])], (view[0], view[2], view[3]))


def _count(u: SafeUnpickler, ctx: LoadContext) -> int:
    count = u.load()
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ctx.fail(f"bad entry count {count!r}")
    return count


def _exact(ctx: LoadContext, body: memoryview, key: str, nbytes: int) -> memoryview:
    if len(body) != nbytes:
        raise ctx.fail(f"storage {key!r} is truncated")
    return body


def _tar_tensors(raw: bytes, ctx: LoadContext) -> dict[str, Any]:
    u, out = SafeUnpickler(raw, ctx), {}
    for _ in range(_count(u, ctx)):
        entry = u.load()
        if not (isinstance(entry, tuple) and len(entry) == 3):
            raise ctx.fail("bad tensor entry")
        key, storage_id = str(entry[0]), str(entry[1])
        if u.pos + 8 > len(raw) or storage_id not in ctx.storages:
            raise ctx.fail(f"tensor {key!r} is truncated or names a missing storage")
        (ndim,) = struct.unpack("<i", raw[u.pos:u.pos + 4])
        need = 8 + 16 * max(ndim, 0) + 8
        if ndim < 0 or ndim > 64 or u.pos + need > len(raw):
            raise ctx.fail(f"tensor {key!r} is truncated")
        dims = struct.unpack(f"<{2 * ndim + 1}q", raw[u.pos + 8:u.pos + need])
        u.pos += need
        out[key] = ctx.rebuild(ctx.storages[storage_id], dims[-1], dims[:ndim],
                               dims[ndim:2 * ndim])
    return out


def read_tar(data: Any, name: str, map_location: Any, weights_only: bool) -> Any:
    """The object in a pre-0.4 tar checkpoint."""
    ctx = LoadContext(name, map_location, len(data))
    members = _members(data, name)
    _tar_storages(members["storages"], ctx)
    tensors = _tar_tensors(members["tensors"], ctx)

    def persistent_load(pid: Any) -> Any:
        if isinstance(pid, tuple) and pid:
            return pid[0]  # a module's class (container type, source file, source)
        found = tensors.get(str(pid))
        if found is None:
            found = ctx.storages.get(str(pid))
        if found is None:
            raise ctx.fail(f"persistent id {pid!r} names nothing stored")
        return found

    return _unpickle(members["pickle"], 0, ctx, weights_only, persistent_load)


# ------------------------------------------------------------------------- writing
def pickle_for_legacy(obj: Any) -> tuple[bytes, SavedStorages]:
    """``obj``'s main pickle (legacy persistent ids) and its storages."""
    storages = SavedStorages()
    return TorchPickler(storages, legacy=True).dump(obj), storages


def write_legacy(main: bytes, storages: SavedStorages, out: BinaryIO) -> None:
    """torch's raw pre-zip format: header pickles, ``main``, the storages."""

    def plain(value: Any) -> bytes:
        return TorchPickler(SavedStorages()).dump(value)

    out.write(plain(MAGIC))
    out.write(plain(PROTOCOL_VERSION))
    out.write(plain({"protocol_version": PROTOCOL_VERSION, "little_endian": True,
                     "type_sizes": {"short": 2, "int": 4, "long": 4}}))
    out.write(main)
    out.write(plain(list(storages.records)))
    for key, arr in storages.records.items():
        untyped = TorchPickler.untyped(storages.dtypes[key])
        count = arr.nbytes if untyped else arr.shape[0]
        out.write(struct.pack("<q", count))
        out.write(arr.view(np.uint8).tobytes() if arr.size else b"")

