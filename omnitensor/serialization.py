"""Safe checkpoints: ``omnitensor.save(obj, path)`` / ``omnitensor.load(path)``.

The file is a plain safetensors file (written with the ``safetensors`` library's NumPy
API): the tensors, flat, under generated keys, plus one JSON string in the header's
metadata that describes the structure of ``obj``. What can be saved: nested dicts, lists
and tuples of tensors, Python ``int``/``float``/``bool``/``str``/``None`` and NumPy arrays
— everything a model's or an optimizer's ``state_dict`` holds. Nothing is pickled, so
loading a file, even an untrusted one, only ever builds those types: it cannot run code.

Writes are atomic (a temporary file in the target directory, fsynced, then renamed over
the target), so a crash never leaves a half-written checkpoint under the real name. A
truncated, corrupted or foreign file (a torch pickle/zip, an unrelated safetensors file)
raises :class:`CheckpointError` saying which.

Each tensor records its device; ``load`` restores it there, or wherever ``map_location``
says (a device, a ``{"old": "new"}`` dict, or a callable ``f(device_str) -> device``).
"""
from __future__ import annotations

import json
import math
import os
import struct
import tempfile
from typing import Any

import numpy as np

from .core import dtypes as _dt
from .core.tensor import Tensor

__all__ = ["save", "load", "CheckpointError"]

FORMAT = "omnitensor.checkpoint"
VERSION = 1
_META_KEY = "omnitensor"
_MAX_HEADER = 100 * 1024 * 1024  # safetensors' own limit


class CheckpointError(ValueError):
    """The file is not a readable omnitensor checkpoint (truncated, corrupted, foreign)."""


def _safetensors() -> Any:
    try:
        import safetensors.numpy as st
    except ImportError as e:
        raise ImportError(
            "omnitensor.save/load need the safetensors package, which is not installed "
            f"({e}). Install it with: pip install 'omnitensor[checkpoint]'") from None
    return st


# --------------------------------------------------------------------------- encode
class _Encoder:
    """Turns an object tree into JSON-able nodes plus a dict of NumPy arrays."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def _array(self, arr: np.ndarray, node: dict[str, Any]) -> dict[str, Any]:
        key = f"t{len(self.arrays)}"
        if arr.dtype.kind == "c":
            # complex values as a trailing (real, imag) axis: safetensors has no complex dtype
            node["complex"] = True
            arr = np.stack([arr.real, arr.imag], axis=-1)
        self.arrays[key] = np.ascontiguousarray(arr)
        node["key"] = key
        return node

    def encode(self, obj: Any, path: str) -> Any:
        """A JSON node for ``obj`` (tensors go to ``self.arrays``)."""
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return obj
        if isinstance(obj, float):
            if math.isfinite(obj):
                return obj
            return {"__float__": repr(obj)}  # inf / -inf / nan are not JSON
        if isinstance(obj, Tensor):
            from .nn.parameter import Parameter
            t = obj.detach()
            node: dict[str, Any] = {"__tensor__": True, "dtype": t.dtype.name,
                                    "shape": list(t.shape), "device": str(t.device)}
            if isinstance(obj, Parameter):
                node["parameter"] = True
                node["requires_grad"] = bool(obj.requires_grad)
            elif obj.requires_grad:
                node["requires_grad"] = True
            return self._array(np.asarray(t.cpu().numpy()), node)
        if isinstance(obj, np.ndarray):
            if obj.dtype.kind not in "biufc":
                raise TypeError(f"omnitensor.save: cannot save a NumPy array of dtype "
                                f"{obj.dtype} at {path or 'the top level'}")
            return self._array(obj, {"__ndarray__": True, "dtype": obj.dtype.name,
                                     "shape": list(obj.shape)})
        if isinstance(obj, np.generic):
            return self.encode(obj.item(), path)
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if not (k is None or isinstance(k, (str, int, float, bool))):
                    raise TypeError(f"omnitensor.save: dict keys must be str, int, float, bool "
                                    f"or None; got {type(k).__name__} at {path or 'top'}")
                items.append([self.encode(k, path), self.encode(v, f"{path}[{k!r}]")])
            return {"__dict__": items}
        if isinstance(obj, tuple):
            return {"__tuple__": [self.encode(v, f"{path}[{i}]") for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return {"__list__": [self.encode(v, f"{path}[{i}]") for i, v in enumerate(obj)]}
        raise TypeError(
            f"omnitensor.save: cannot save an object of type {type(obj).__name__} at "
            f"{path or 'the top level'}; checkpoints hold tensors, NumPy arrays, numbers, "
            f"strings, None and dicts/lists/tuples of them (use state_dict())")


def save(obj: Any, f: str | os.PathLike | Any, *, metadata: dict[str, str] | None = None
         ) -> None:
    """Write ``obj`` (e.g. ``{"model": model.state_dict(), "optim": opt.state_dict(),
    "epoch": 3}``) to ``f`` (a path, written atomically, or a binary file object) as a
    safetensors file. ``metadata`` adds string entries to the file header."""
    st = _safetensors()
    enc = _Encoder()
    tree = enc.encode(obj, "")
    header: dict[str, str] = {str(k): str(v) for k, v in (metadata or {}).items()}
    if _META_KEY in header:
        raise ValueError(f"omnitensor.save: metadata key {_META_KEY!r} is reserved")
    header[_META_KEY] = json.dumps({"format": FORMAT, "version": VERSION, "tree": tree},
                                   separators=(",", ":"), allow_nan=False)
    data = st.save(enc.arrays, metadata=header)
    if hasattr(f, "write"):
        f.write(data)
        return
    path = os.fspath(f)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".omnitensor-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a saved file is ordinary
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0o22)  # the only way to read it is to set it; put it back at once
    os.umask(mask)
    return mask


# --------------------------------------------------------------------------- decode
def _read_header(data: bytes, name: str) -> dict[str, Any]:
    """Check the safetensors framing ourselves, so that every failure names its cause."""
    # a safetensors file is an 8-byte little-endian header length, then a JSON object: its
    # first byte is the length's low byte, which can be anything (0x80 included), so test
    # the framing before guessing at foreign formats from the first bytes
    framed = len(data) >= 9 and data[8:9] == b"{"
    if not framed and len(data) >= 2 and data[0] == 0x80 and 2 <= data[1] <= 5:
        raise CheckpointError(f"{name} is a Python pickle (e.g. torch.save's legacy format), "
                              f"not an omnitensor checkpoint; pickles are refused because "
                              f"loading one can run arbitrary code")
    if len(data) < 8:
        raise CheckpointError(f"{name} is truncated or not a checkpoint: {len(data)} bytes, "
                              f"too short for a safetensors header")
    if not framed and data[:4] == b"PK\x03\x04":
        raise CheckpointError(f"{name} is a zip archive (torch.save's format, which holds a "
                              f"pickle), not an omnitensor checkpoint; it is refused because "
                              f"loading a pickle can run arbitrary code. Convert it with "
                              f"torch and safetensors, then load the .safetensors file")
    (n,) = struct.unpack("<Q", data[:8])
    if n > _MAX_HEADER:
        raise CheckpointError(f"{name} is not a safetensors file (header length {n} is "
                              f"implausible)")
    if 8 + n > len(data):
        raise CheckpointError(f"{name} is truncated: the header needs {8 + n} bytes, the file "
                              f"has {len(data)}")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{name} is corrupted or not a safetensors file (bad header: "
                              f"{e})") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{name} is not a safetensors file (header is not an object)")
    end = 0
    for key, info in header.items():
        if key == "__metadata__":
            continue
        try:
            end = max(end, int(info["data_offsets"][1]))
        except (TypeError, KeyError, IndexError, ValueError):
            raise CheckpointError(f"{name} is corrupted (bad entry {key!r} in the "
                                  f"header)") from None
    if 8 + n + end > len(data):
        raise CheckpointError(f"{name} is truncated: the tensors need {8 + n + end} bytes, the "
                              f"file has {len(data)}")
    meta = header.get("__metadata__") or {}
    if not isinstance(meta, dict) or _META_KEY not in meta:
        raise CheckpointError(f"{name} is a safetensors file but not an omnitensor checkpoint "
                              f"(no {_META_KEY!r} metadata); read it with "
                              f"safetensors.numpy.load_file")
    try:
        info = json.loads(meta[_META_KEY])
    except (TypeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{name} has corrupted omnitensor metadata ({e})") from None
    if not isinstance(info, dict) or info.get("format") != FORMAT:
        raise CheckpointError(f"{name} has unknown omnitensor metadata")
    if not isinstance(info.get("version"), int) or info["version"] > VERSION:
        raise CheckpointError(f"{name} was written by a newer omnitensor (checkpoint version "
                              f"{info.get('version')}, this one reads up to {VERSION})")
    return info


MapLocation = Any


def _target_device(saved: str, map_location: MapLocation) -> Any:
    if map_location is None:
        return saved
    if callable(map_location):
        return map_location(saved)
    if isinstance(map_location, dict):
        return map_location.get(saved, saved)
    return map_location


class _Decoder:
    def __init__(self, arrays: dict[str, np.ndarray], map_location: MapLocation,
                 name: str) -> None:
        self.arrays, self.map_location, self.name = arrays, map_location, name

    def _fail(self, what: str) -> CheckpointError:
        return CheckpointError(f"{self.name} is corrupted: {what}")

    def _array(self, node: dict[str, Any]) -> np.ndarray:
        key = node.get("key")
        if not isinstance(key, str) or key not in self.arrays:
            raise self._fail(f"tensor {key!r} named in the structure is missing")
        arr = self.arrays[key]
        if node.get("complex"):
            if arr.ndim == 0 or arr.shape[-1] != 2:
                raise self._fail(f"complex tensor {key!r} has shape {arr.shape}")
            arr = arr[..., 0] + 1j * arr[..., 1]
        shape = node.get("shape")
        if isinstance(shape, list) and not shape and arr.shape == (1,):
            arr = arr.reshape(())  # 0-d tensors come back as (1,) from safetensors' NumPy API
        if not isinstance(shape, list) or tuple(arr.shape) != tuple(shape):
            raise self._fail(f"tensor {key!r} has shape {arr.shape}, the structure says "
                             f"{shape}")
        return arr

    def decode(self, node: Any) -> Any:
        """The object a JSON node describes."""
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            raise self._fail("unexpected JSON list in the structure")
        if not isinstance(node, dict) or len(node) == 0:
            raise self._fail("unexpected node in the structure")
        if "__dict__" in node:
            items = node["__dict__"]
            if not isinstance(items, list) or any(not isinstance(i, list) or len(i) != 2
                                                  for i in items):
                raise self._fail("bad dict node")
            return {self.decode(k): self.decode(v) for k, v in items}
        if "__list__" in node:
            return [self.decode(v) for v in _seq(node["__list__"], self)]
        if "__tuple__" in node:
            return tuple(self.decode(v) for v in _seq(node["__tuple__"], self))
        if "__float__" in node:
            text = node["__float__"]
            if text not in ("inf", "-inf", "nan"):
                raise self._fail(f"bad float {text!r}")
            return float(text)
        if "__ndarray__" in node:
            arr = self._array(node)
            return arr.astype(np.dtype(node.get("dtype", arr.dtype.name)), copy=False)
        if "__tensor__" in node:
            return self._tensor(node)
        raise self._fail(f"unknown node {sorted(node)[:3]}")

    def _tensor(self, node: dict[str, Any]) -> Tensor:
        from .core.ops.creation import tensor
        arr = self._array(node)
        try:
            dtype = _dt.as_dtype(node["dtype"])
        except (KeyError, _dt.DTypeError):
            raise self._fail(f"bad dtype {node.get('dtype')!r}") from None
        saved = node.get("device", "cpu")
        target = _target_device(str(saved), self.map_location)
        try:
            t = tensor(arr, dtype=dtype, device=target)
        except Exception as e:  # noqa: BLE001 - explain with the remedy
            raise RuntimeError(f"omnitensor.load: cannot restore a tensor saved on {saved} onto "
                               f"{target}: {e}. Pass map_location='cpu' (or another available "
                               f"device) to load it elsewhere") from e
        if node.get("parameter"):
            from .nn.parameter import Parameter
            return Parameter(t, bool(node.get("requires_grad", True)))
        if node.get("requires_grad") and t.dtype.kind in "fc":
            t.requires_grad_(True)
        return t


def _seq(value: Any, dec: _Decoder) -> list:
    if not isinstance(value, list):
        raise dec._fail("bad sequence node")
    return value


def load(f: str | os.PathLike | Any, map_location: MapLocation = None, *,
         weights_only: bool = True, **_: Any) -> Any:
    """Read a checkpoint written by :func:`save`. ``map_location``: None restores each
    tensor on the device it was saved from; a device string/object puts every tensor
    there; a dict maps saved device strings to new ones; a callable maps one to the other.
    ``weights_only`` is accepted for torch compatibility (loading is always safe)."""
    st = _safetensors()
    if hasattr(f, "read"):
        data = f.read()
        name = getattr(f, "name", "the checkpoint stream")
    else:
        name = os.fspath(f)
        with open(name, "rb") as fh:
            data = fh.read()
    if isinstance(data, str):
        raise TypeError("omnitensor.load: open the file in binary mode ('rb')")
    data = bytes(data)
    name = name if isinstance(name, str) else repr(name)
    info = _read_header(data, name)
    try:
        arrays = st.load(data)
    except Exception as e:  # noqa: BLE001 - SafetensorError and friends
        raise CheckpointError(f"{name} is corrupted: safetensors could not read it "
                              f"({type(e).__name__}: {e})") from None
    return _Decoder(arrays, map_location, name).decode(info.get("tree"))
