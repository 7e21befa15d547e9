"""``torch.PyTorchFileReader``: the records of a torch zip checkpoint, by name.

torch's reader is C++ (``caffe2::serialize``); libraries use it to read ``data.pkl`` and
single storages lazily. Here it is a view over :class:`~.zip_format._Archive`, the reader
``torch.load`` uses, so the same checks (stored records, sizes, CRC) apply.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from .files import read_checkpoint_bytes
from .zip_format import _Archive

__all__ = ["PyTorchFileReader"]


class PyTorchFileReader:
    """Records of the archive at ``name`` (a path) or in ``buffer`` (a binary file object);
    names are given without the archive's top folder, as torch's are (``"data.pkl"``,
    ``"data/0"``)."""

    def __init__(self, name_or_buffer: Any) -> None:
        if isinstance(name_or_buffer, (str, os.PathLike)):
            data, label = read_checkpoint_bytes(name_or_buffer)
        else:
            data, label = name_or_buffer.read(), "<buffer>"
        self._archive = _Archive(bytes(data), label, check_crc=True)

    def _full(self, name: str) -> str:
        return f"{self._archive.prefix}/{name}"

    def get_all_records(self) -> list[str]:
        """Every record's name."""
        return [n.split("/", 1)[-1] for n in self._archive.infos]

    def has_record(self, name: str) -> bool:
        return self._archive.has(name)

    def get_record(self, name: str) -> bytes:
        """The bytes of record ``name`` (a KeyError-like error when it is missing)."""
        return bytes(self._archive.read(name))

    def get_record_size(self, name: str) -> int:
        return self._archive.infos[self._full(name)].file_size

    def get_record_offset(self, name: str) -> int:
        """Where the record's bytes start in the file."""
        info = self._archive.infos[self._full(name)]
        return info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)

    def get_storage_from_record(self, name: str, numel: int, dtype: Any) -> Any:
        """The first ``numel`` elements of record ``name`` as a 1-D tensor of ``dtype``."""
        from ..core import dtypes as dt
        from ..core.ops.creation import from_numpy
        np_dtype = dt.as_dtype(dtype).np
        raw = self._archive.read(name)
        return from_numpy(np.frombuffer(raw, dtype=np_dtype, count=numel).copy())

    def serialization_id(self) -> str:
        """The archive's ``.data/serialization_id`` record, or "" when it has none."""
        if self._archive.has(".data/serialization_id"):
            return self.get_record(".data/serialization_id").decode()
        return ""
