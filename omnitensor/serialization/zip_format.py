"""torch's zip checkpoint format (``torch.save`` since 1.6), read and written.

An archive ``<name>/`` holds ``data.pkl`` (the pickled object, tensors as persistent ids
naming storages), ``data/<key>`` (each storage's bytes, little-endian, uncompressed and
64-byte aligned so they can be memory-mapped), ``byteorder``, ``version``,
``.format_version`` and ``.storage_alignment``. omnitensor adds one record torch ignores,
``.data/omnitensor_devices`` (JSON, storage key -> device), for storages saved from a
device torch has no tag for (``opencl:0``, ``sycl:0``): their torch tag is ``cpu``, so
real torch loads them on the host and omnitensor puts them back where they were.

Reading checks the archive before it builds anything: records must be stored (not
compressed), inside the file, of the size their tensors declare, with their CRC.
"""
from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from typing import Any, BinaryIO

from .files import CheckpointError
from .pickler import SavedStorages, TorchPickler
from .rebuild import LoadContext
from .trusted_unpickler import TrustedUnpickler
from .unpickler import SafeUnpickler

__all__ = ["pickle_for_zip", "write_zip", "read_zip", "is_zip"]

_ALIGN = 64
_DEVICES = ".data/omnitensor_devices"
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # a zip local file header, 30 bytes


def is_zip(data: Any) -> bool:
    return bytes(data[:4]) in (b"PK\x03\x04", b"PK\x05\x06")


# ------------------------------------------------------------------------- writing
def _write_record(zf: zipfile.ZipFile, out: BinaryIO, name: str, data: Any) -> None:
    """One stored record whose data starts on a 64-byte boundary (torch's alignment:
    the padding goes in an extra field, as torch's writer puts it)."""
    raw = memoryview(data).cast("B") if not isinstance(data, (bytes, str)) else data
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    info = zipfile.ZipInfo(f"archive/{name}", date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    zip64 = len(raw) * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own rule for the header
    header = _LOCAL_HEADER.size + len(info.filename.encode("utf-8")) + 4 + (20 if zip64 else 0)
    pad = -(out.tell() + header) % _ALIGN
    info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad
    zf.writestr(info, raw)


def pickle_for_zip(obj: Any) -> tuple[bytes, SavedStorages]:
    """``obj``'s ``data.pkl`` and its storages (before any file is opened: an object
    that cannot be saved leaves the target untouched)."""
    storages = SavedStorages()
    return TorchPickler(storages).dump(obj), storages


def write_zip(pkl: bytes, storages: SavedStorages, out: BinaryIO) -> None:
    """A torch zip archive of ``data.pkl`` and its storages into the seekable ``out``."""
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        _write_record(zf, out, "data.pkl", pkl)
        _write_record(zf, out, ".format_version", b"1")
        _write_record(zf, out, ".storage_alignment", str(_ALIGN).encode())
        _write_record(zf, out, "byteorder", b"little")
        for key, arr in storages.records.items():
            _write_record(zf, out, f"data/{key}", arr.view("u1") if arr.size else b"")
        if storages.devices:
            _write_record(zf, out, _DEVICES, json.dumps(storages.devices).encode())
        _write_record(zf, out, "version", b"3\n")


# ------------------------------------------------------------------------- reading
class _Archive:
    """The records of a torch zip archive in ``buf`` (bytes or a memory map)."""

    def __init__(self, buf: Any, name: str, check_crc: bool) -> None:
        self.buf, self.name, self.check_crc = buf, name, check_crc
        try:
            self.zf = zipfile.ZipFile(io.BytesIO(buf) if isinstance(buf, bytes) else buf)
            infos = self.zf.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError,
                struct.error, NotImplementedError, KeyError, IndexError) as e:
            raise CheckpointError(f"{name} is a zip archive but is truncated or corrupted "
                                  f"({e})") from None
        self.infos = {i.filename: i for i in infos}
        first = infos[0].filename if infos else ""
        self.prefix = first.split("/", 1)[0] if "/" in first else ""
        if f"{self.prefix}/data.pkl" not in self.infos:
            names = {n.split("/", 1)[-1] for n in self.infos}
            if "constants.pkl" in names or any(n.startswith("code/") for n in names):
                raise CheckpointError(f"{name} is a TorchScript archive (torch.jit.save), not "
                                      f"a checkpoint; omnitensor does not run TorchScript")
            raise CheckpointError(f"{name} is a zip archive but not a torch checkpoint (no "
                                  f"data.pkl record)")

    def has(self, record: str) -> bool:
        return f"{self.prefix}/{record}" in self.infos

    def read(self, record: str, size: int | None = None) -> memoryview:
        """The bytes of ``record`` (exactly ``size`` of them when given), uncopied."""
        info = self.infos.get(f"{self.prefix}/{record}")
        if info is None:
            raise CheckpointError(f"{self.name} is corrupted or truncated: record {record!r} "
                                  f"is missing from the archive")
        if info.compress_type != zipfile.ZIP_STORED:
            raise CheckpointError(f"{self.name}: record {record!r} is compressed (method "
                                  f"{info.compress_type}); torch writes stored records, "
                                  f"re-save the checkpoint with torch.save or omnitensor.save")
        if size is not None and info.file_size != size:
            raise CheckpointError(f"{self.name} is corrupted: record {record!r} holds "
                                  f"{info.file_size} bytes, its tensors need {size}")
        view = memoryview(self.buf)
        at = info.header_offset
        head = bytes(view[at:at + _LOCAL_HEADER.size])
        if len(head) != _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
            raise CheckpointError(f"{self.name} is corrupted: record {record!r} has no local "
                                  f"header")
        fields = _LOCAL_HEADER.unpack(head)
        start = at + _LOCAL_HEADER.size + fields[-2] + fields[-1]
        end = start + info.file_size
        if end > len(view):
            raise CheckpointError(f"{self.name} is truncated: record {record!r} ends at byte "
                                  f"{end}, the file has {len(view)}")
        data = view[start:end]
        if self.check_crc and info.CRC and zlib.crc32(data) != info.CRC:
            raise CheckpointError(f"{self.name} is corrupted: record {record!r} fails its "
                                  f"CRC-32 check")
        return data


def _devices(archive: _Archive) -> dict[str, str]:
    if not archive.has(_DEVICES):
        return {}
    try:
        devices = json.loads(bytes(archive.read(_DEVICES)).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        devices = None
    if not isinstance(devices, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in devices.items()):
        raise CheckpointError(f"{archive.name} is corrupted: bad {_DEVICES} record")
    return devices


def read_zip(buf: Any, name: str, map_location: Any, weights_only: bool,
             mmap: bool = False) -> Any:
    """The object in a torch zip archive."""
    archive = _Archive(buf, name, check_crc=not mmap)
    order = "little"
    if archive.has("byteorder"):
        order = bytes(archive.read("byteorder")).decode("ascii", "replace")
        if order not in ("little", "big"):
            raise CheckpointError(f"{name} is corrupted: byte order {order!r}")
    ctx = LoadContext(name, map_location, len(buf), _devices(archive), order, mmap)

    def persistent_load(pid: Any) -> Any:
        if not isinstance(pid, tuple) or len(pid) != 5 or pid[0] not in ("storage", b"storage"):
            raise ctx.fail(f"persistent id {pid!r} is not a storage")
        _, stype, key, location, numel = pid
        key = key.decode("ascii", "replace") if isinstance(key, bytes) else str(key)
        return ctx.storage(key, stype, numel, location,
                           lambda k, n: archive.read(f"data/{k}", n))

    pkl = archive.read("data.pkl")
    if weights_only:
        return SafeUnpickler(pkl, ctx, persistent_load).load()
    try:
        return TrustedUnpickler(io.BytesIO(pkl), ctx, persistent_load).load()
    except (EOFError, IndexError) as e:
        raise CheckpointError(f"{name} is corrupted: its pickle is truncated ({e})") from None
