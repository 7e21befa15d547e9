"""omnitensor's own checkpoint format: a safetensors file, nothing pickled.

The file is a plain safetensors file (written with the ``safetensors`` library's NumPy
API): the tensors, flat, under generated keys, plus one JSON string in the header's
metadata that describes the structure of the object. It holds data only, never code,
and any safetensors reader can take the tensors out of it.

What can be saved: nested dicts (``OrderedDict``, ``defaultdict`` too), lists, tuples
and sets of tensors, NumPy arrays, Python numbers, strings, bytes and None, devices,
dtypes and ``Size``, and whole objects (stored as their class's import path and their
state, see :mod:`omnitensor.serialization.objects`); a tensor or object reached twice (tied
weights, an optimizer's parameters) is stored once and comes back shared. Each tensor
records its device. Written with ``omnitensor.save(obj, f, format="safetensors")`` or to a
``.safetensors`` path; ``omnitensor.load`` recognises it from its first bytes.
"""
from __future__ import annotations

import base64
import json
import math
import struct
import types
from typing import Any

import numpy as np

from .objects import global_path, object_state, rebuild_object, resolve_global
from ..core import dtypes as _dt
from ..core.tensor import Tensor
from .files import BYTES_PER_FILE_BYTE, MAX_DEPTH, CheckpointError, build_budget
from .locations import MapLocation, resolve_location

__all__ = ["encode", "decode", "is_safetensors", "FORMAT", "VERSION"]

FORMAT = "omnitensor.checkpoint"
VERSION = 2  # 2: objects, globals, shared references, sets/bytes/devices/dtypes
_META_KEY = "omnitensor"
_MAX_HEADER = 100 * 1024 * 1024  # safetensors' own limit


def _safetensors() -> Any:
    try:
        import safetensors.numpy as st
    except ImportError as e:
        raise ImportError(
            "omnitensor.save/load need the safetensors package, which is not installed "
            f"({e}). Install it with: pip install 'omnitensor[checkpoint]'") from None
    return st


#: safetensors dtype names -> NumPy dtypes: those of ``safetensors.numpy`` plus BF16, which
#: its loader lacks (its saver writes ml_dtypes' bfloat16 as BF16, as torch does)
_ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16,
              "BF16": _dt.bfloat16.np, "I64": np.int64, "U64": np.uint64, "I32": np.int32,
              "U32": np.uint32, "I16": np.int16, "U16": np.uint16, "I8": np.int8,
              "U8": np.uint8, "BOOL": np.bool_, "C64": np.complex64}


def _load_arrays(data: bytes) -> dict[str, np.ndarray]:
    """``safetensors.numpy.load(data)``, with BF16 tensors as ml_dtypes bfloat16 arrays
    (a dtype it does not know raises KeyError: the caller reports a corrupted file)."""
    _safetensors()
    from safetensors import deserialize
    return {k: np.frombuffer(v["data"], dtype=_ST_DTYPES[v["dtype"]]).reshape(v["shape"])
            for k, v in deserialize(data)}


# --------------------------------------------------------------------------- encode
_DEFAULT_FACTORIES = {"dict": dict, "list": list, "set": set, "int": int, "float": float}


class _Encoder:
    """Turns an object tree into JSON-able nodes plus a dict of NumPy arrays. Tensors and
    objects get an ``id``; meeting one again writes ``{"__ref__": id}`` (shared identity)."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.memo: dict[int, int] = {}
        self.alive: list[Any] = []  # keeps memoised objects alive so ids stay unique

    def _array(self, arr: np.ndarray, node: dict[str, Any]) -> dict[str, Any]:
        key = f"t{len(self.arrays)}"
        if arr.dtype.kind == "c":
            # complex values as a trailing (real, imag) axis: safetensors has no complex dtype
            node["complex"] = True
            arr = np.stack([arr.real, arr.imag], axis=-1)
        self.arrays[key] = np.ascontiguousarray(arr)
        node["key"] = key
        return node

    def _remember(self, obj: Any, node: dict[str, Any]) -> dict[str, Any]:
        node["id"] = self.memo[id(obj)] = len(self.memo)
        self.alive.append(obj)
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
        if id(obj) in self.memo:
            return {"__ref__": self.memo[id(obj)]}
        if isinstance(obj, Tensor):
            return self._remember(obj, self._tensor(obj))
        if isinstance(obj, np.ndarray):
            if obj.dtype.kind not in "biufc":
                raise TypeError(f"omnitensor.save: cannot save a NumPy array of dtype "
                                f"{obj.dtype} at {path or 'the top level'}")
            return self._array(obj, {"__ndarray__": True, "dtype": obj.dtype.name,
                                     "shape": list(obj.shape)})
        if isinstance(obj, np.generic):
            return self.encode(obj.item(), path)
        plain = self._plain(obj, path)
        if plain is not None:
            return plain
        if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
            return {"__global__": global_path(obj)}
        if isinstance(obj, (types.ModuleType, types.MethodType, types.GeneratorType)):
            raise TypeError(f"omnitensor.save: cannot save a {type(obj).__name__} at "
                            f"{path or 'the top level'}")
        cls = type(obj)
        if cls.__module__ == "builtins":  # object(), range, slice...: no state of their own
            raise TypeError(f"omnitensor.save: cannot save an object of type {cls.__name__} at "
                            f"{path or 'the top level'}")
        if cls.__reduce_ex__ is not object.__reduce_ex__ or cls.__reduce__ is not object.__reduce__:
            # its pickling protocol says "rebuild me by calling something": class + state
            # would not reproduce it, and calling what a file names is what we never do
            raise TypeError(f"omnitensor.save: cannot save an object of type {cls.__name__} at "
                            f"{path or 'the top level'}: it defines __reduce__, so it cannot "
                            f"be stored as its class and state; save its state_dict() or "
                            f"plain data instead")
        # any other object: its class by name and its state, as data
        node = self._remember(obj, {"__object__": global_path(cls)})
        node["state"] = self.encode(object_state(obj), f"{path}.__state__")
        return node

    def _tensor(self, obj: Tensor) -> dict[str, Any]:
        from ..nn.parameter import Parameter
        t = obj.detach()
        node: dict[str, Any] = {"__tensor__": True, "dtype": t.dtype.name,
                                "shape": list(t.shape), "device": str(t.device)}
        if isinstance(obj, Parameter):
            node["parameter"] = True
            node["requires_grad"] = bool(obj.requires_grad)
        elif obj.requires_grad:
            node["requires_grad"] = True
        return self._array(np.asarray(t.cpu().numpy()), node)

    def _plain(self, obj: Any, path: str) -> Any:
        """Nodes for containers and the plain value types load always accepts; None when
        ``obj`` is none of them."""
        from collections import OrderedDict, defaultdict
        from ..core.device import Device
        from ..core.legacy import Size
        where = path or "the top level"
        if type(obj) in (dict, OrderedDict, defaultdict):
            items = [[self.encode(k, f"{path}<key>"), self.encode(v, f"{path}[{k!r}]")]
                     for k, v in obj.items()]
            node: dict[str, Any] = {"__dict__": items}
            if type(obj) is OrderedDict:
                node["ordered"] = True
            elif type(obj) is defaultdict:  # an optimizer's state: factories are builtins
                factory = obj.default_factory
                name = next((n for n, f in _DEFAULT_FACTORIES.items() if f is factory), None)
                if name is None and factory is not None:
                    raise TypeError(f"omnitensor.save: a defaultdict at {where} has the "
                                    f"factory {factory!r}; only {', '.join(_DEFAULT_FACTORIES)} "
                                    f"(or None) can be saved")
                node["defaultdict"] = name
            return node
        if isinstance(obj, Size):
            return {"__size__": [int(v) for v in obj]}
        if type(obj) is tuple:
            return {"__tuple__": [self.encode(v, f"{path}[{i}]") for i, v in enumerate(obj)]}
        if type(obj) is list:
            return {"__list__": [self.encode(v, f"{path}[{i}]") for i, v in enumerate(obj)]}
        if type(obj) in (set, frozenset):
            kind = "__set__" if type(obj) is set else "__frozenset__"
            return {kind: [self.encode(v, f"{path}<item>") for v in obj]}
        if isinstance(obj, complex):
            return {"__complex__": [self.encode(obj.real, where), self.encode(obj.imag, where)]}
        if isinstance(obj, (bytes, bytearray)):
            return {"__bytes__": base64.b64encode(bytes(obj)).decode("ascii")}
        if isinstance(obj, Device):
            return {"__device__": str(obj)}
        if isinstance(obj, _dt.DType):
            return {"__dtype__": obj.name}
        return None


# --------------------------------------------------------------------------- decode
def _read_header(data: bytes, name: str) -> dict[str, Any]:
    """Check the safetensors framing ourselves, so that every failure names its cause."""
    if len(data) < 8:
        raise CheckpointError(f"{name} is truncated or not a checkpoint: {len(data)} bytes, "
                              f"too short for a safetensors header")
    (n,) = struct.unpack("<Q", data[:8])
    if n > _MAX_HEADER:
        raise CheckpointError(f"{name} is not a safetensors file (header length {n} is "
                              f"implausible)")
    if 8 + n > len(data):
        raise CheckpointError(f"{name} is truncated: the header needs {8 + n} bytes, the file "
                              f"has {len(data)}")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # huge ints, deep nesting
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
    except (TypeError, ValueError) as e:  # incl. a 5000-digit int (int max_str_digits)
        raise CheckpointError(f"{name} has corrupted omnitensor metadata ({e})") from None
    except RecursionError:
        raise CheckpointError(f"{name} has corrupted omnitensor metadata (nested too "
                              f"deeply)") from None
    if not isinstance(info, dict) or info.get("format") != FORMAT:
        raise CheckpointError(f"{name} has unknown omnitensor metadata")
    if not isinstance(info.get("version"), int) or info["version"] > VERSION:
        raise CheckpointError(f"{name} was written by a newer omnitensor (checkpoint version "
                              f"{info.get('version')}, this one reads up to {VERSION})")
    return info


class _Decoder:
    def __init__(self, arrays: dict[str, np.ndarray], map_location: MapLocation,
                 name: str, weights_only: bool = True, file_bytes: int | None = None) -> None:
        self.arrays, self.map_location, self.name = arrays, map_location, name
        self.weights_only = weights_only
        self.memo: dict[int, Any] = {}
        # what the structure may build: each stored array once (a second use must be a
        # __ref__, which shares the first object), within a multiple of the file's size
        self.used: set[str] = set()
        self.budget = build_budget(file_bytes)
        self.depth = 0

    def _fail(self, what: str) -> CheckpointError:
        return CheckpointError(f"{self.name} is corrupted: {what}")

    def _array(self, node: dict[str, Any]) -> np.ndarray:
        key = node.get("key")
        if not isinstance(key, str) or key not in self.arrays:
            raise self._fail(f"tensor {key!r} named in the structure is missing")
        if key in self.used:
            raise self._fail(f"stored tensor {key!r} is named by more than one node (a "
                             f"tensor reached twice is saved once and referenced)")
        self.used.add(key)
        arr = self.arrays[key]
        if self.budget is not None:
            self.budget -= arr.nbytes
            if self.budget < 0:
                raise self._fail(f"its structure would build more than "
                                 f"{BYTES_PER_FILE_BYTE}x the file's size in tensors")
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
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise self._fail(f"the structure is nested more than {MAX_DEPTH} levels deep")
            return self._decode(node)
        finally:
            self.depth -= 1

    def _decode(self, node: Any) -> Any:
        if isinstance(node, list):
            raise self._fail("unexpected JSON list in the structure")
        if not isinstance(node, dict) or len(node) == 0:
            raise self._fail("unexpected node in the structure")
        if "__dict__" in node:
            items = node["__dict__"]
            if not isinstance(items, list) or any(not isinstance(i, list) or len(i) != 2
                                                  for i in items):
                raise self._fail("bad dict node")
            pairs = [(self.decode(k), self.decode(v)) for k, v in items]
            try:
                if node.get("ordered"):
                    from collections import OrderedDict
                    return OrderedDict(pairs)
                if "defaultdict" in node:
                    from collections import defaultdict
                    name = node["defaultdict"]
                    if name is not None and name not in _DEFAULT_FACTORIES:
                        raise self._fail(f"bad defaultdict factory {name!r}")
                    return defaultdict(_DEFAULT_FACTORIES.get(name), pairs)
                return dict(pairs)
            except TypeError:
                raise self._fail("a dict key is not hashable") from None
        if "__list__" in node:
            return [self.decode(v) for v in _seq(node["__list__"], self)]
        if "__tuple__" in node:
            return tuple(self.decode(v) for v in _seq(node["__tuple__"], self))
        if "__float__" in node:
            text = node["__float__"]
            if text not in ("inf", "-inf", "nan"):
                raise self._fail(f"bad float {text!r}")
            return float(text)
        if "__ref__" in node:
            ref = node["__ref__"]
            if not isinstance(ref, int) or ref not in self.memo:
                raise self._fail(f"reference {ref!r} to an object not seen before it")
            return self.memo[ref]
        if "__ndarray__" in node:
            arr = self._array(node)
            if node.get("dtype") != arr.dtype.name or arr.dtype.kind not in "biufc":
                raise self._fail(f"array {node.get('key')!r} is stored as {arr.dtype}, the "
                                 f"structure says {node.get('dtype')!r}")
            return arr
        if "__tensor__" in node:
            return self._remember(node, self._tensor(node))
        if "__object__" in node or "__global__" in node:
            return self._object(node)
        return self._plain(node)

    def _remember(self, node: dict[str, Any], obj: Any) -> Any:
        ref = node.get("id")
        if ref is not None:
            if not isinstance(ref, int) or ref in self.memo:
                raise self._fail(f"bad or repeated object id {ref!r}")
            self.memo[ref] = obj
        return obj

    def _plain(self, node: dict[str, Any]) -> Any:
        if "__size__" in node:
            from ..core.legacy import Size
            values = _seq(node["__size__"], self)
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                raise self._fail("bad Size node")
            return Size(values)
        for kind, make in (("__set__", set), ("__frozenset__", frozenset)):
            if kind in node:
                try:
                    return make(self.decode(v) for v in _seq(node[kind], self))
                except TypeError:
                    raise self._fail("a set item is not hashable") from None
        if "__complex__" in node:
            parts = [self.decode(v) for v in _seq(node["__complex__"], self)]
            if len(parts) != 2 or not all(isinstance(v, (int, float)) for v in parts):
                raise self._fail("bad complex node")
            return complex(parts[0], parts[1])
        if "__bytes__" in node:
            try:
                return base64.b64decode(node["__bytes__"], validate=True)
            except (TypeError, ValueError):
                raise self._fail("bad bytes node") from None
        if "__device__" in node:
            from ..core.device import device
            try:
                return device(node["__device__"])
            except Exception:  # noqa: BLE001 - any bad device string is corruption
                raise self._fail(f"bad device {node['__device__']!r}") from None
        if "__dtype__" in node:
            try:
                return _dt.as_dtype(node["__dtype__"])
            except (_dt.DTypeError, TypeError):
                raise self._fail(f"bad dtype {node['__dtype__']!r}") from None
        raise self._fail(f"unknown node {sorted(node)[:3]}")

    def _object(self, node: dict[str, Any]) -> Any:
        """A class/function reference or an object, only if allowlisted (weights_only) or
        trusted (weights_only=False): see omnitensor.serialization.objects."""
        if "__global__" in node:
            path = node["__global__"]
            if not isinstance(path, str):
                raise self._fail("bad global node")
            return resolve_global(path, self.weights_only, "class or function")
        path = node["__object__"]
        if not isinstance(path, str):
            raise self._fail("bad object node")
        cls = resolve_global(path, self.weights_only)
        if not isinstance(cls, type):
            raise self._fail(f"{path} is not a class")
        # register the object before its state is decoded, so cycles/back-references work
        new: Any = cls.__new__  # any class's __new__, called as unpickling does
        obj = new(cls)
        self._remember(node, obj)
        state = self.decode(node.get("state"))
        rebuilt = rebuild_object(cls, state, into=obj)
        return rebuilt

    def _tensor(self, node: dict[str, Any]) -> Tensor:
        from ..core.ops.creation import tensor
        arr = self._array(node)
        try:
            dtype = _dt.as_dtype(node["dtype"])
        except (KeyError, TypeError, _dt.DTypeError):
            raise self._fail(f"bad dtype {node.get('dtype')!r}") from None
        if arr.dtype != dtype.np:  # never a silent cast of what the file stores
            raise self._fail(f"tensor {node.get('key')!r} is stored as {arr.dtype}, the "
                             f"structure says {dtype.name}")
        saved = node.get("device", "cpu")
        target = resolve_location(str(saved), self.map_location)
        try:
            t = tensor(arr, dtype=dtype, device=target)
        except Exception as e:  # explain with the remedy
            raise RuntimeError(f"omnitensor.load: cannot restore a tensor saved on {saved} onto "
                               f"{target}: {e}. Pass map_location='cpu' (or another available "
                               f"device) to load it elsewhere") from e
        if node.get("parameter"):
            from ..nn.parameter import Parameter
            return Parameter(t, bool(node.get("requires_grad", True)))
        if node.get("requires_grad") and t.dtype.kind in "fc":
            t.requires_grad_(True)
        return t


def _seq(value: Any, dec: _Decoder) -> list:
    if not isinstance(value, list):
        raise dec._fail("bad sequence node")
    return value




def is_safetensors(data: bytes) -> bool:
    """A safetensors file: an 8-byte little-endian header length, then a JSON object. Its
    first byte is the length's low byte, which can be anything (0x80, a pickle's first
    byte, included), so this is tested before other formats' first bytes."""
    return len(data) >= 9 and data[8:9] == b"{"


def encode(obj: Any, metadata: dict[str, str] | None = None) -> bytes:
    """``obj`` as an omnitensor safetensors checkpoint; ``metadata`` adds string entries
    to the file header."""
    st = _safetensors()
    enc = _Encoder()
    tree = enc.encode(obj, "")
    header: dict[str, str] = {str(k): str(v) for k, v in (metadata or {}).items()}
    if _META_KEY in header:
        raise ValueError(f"omnitensor.save: metadata key {_META_KEY!r} is reserved")
    header[_META_KEY] = json.dumps({"format": FORMAT, "version": VERSION, "tree": tree},
                                   separators=(",", ":"), allow_nan=False)
    return st.save(enc.arrays, metadata=header)


def decode(data: bytes, name: str, map_location: MapLocation, weights_only: bool) -> Any:
    """The object in an omnitensor safetensors checkpoint."""
    _safetensors()  # a clear ImportError before reading anything
    info = _read_header(data, name)
    try:
        arrays = _load_arrays(data)
    except Exception as e:  # noqa: BLE001 - SafetensorError and friends
        raise CheckpointError(f"{name} is corrupted: safetensors could not read it "
                              f"({type(e).__name__}: {e})") from None
    try:
        return _Decoder(arrays, map_location, name, bool(weights_only),
                        len(data)).decode(info.get("tree"))
    except RecursionError:
        raise CheckpointError(f"{name} is corrupted: the structure is nested too "
                              f"deeply") from None
