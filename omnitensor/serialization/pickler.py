"""Writing torch's pickle: what ``torch.save`` puts in ``data.pkl``, for omnitensor objects.

The pickle is written instruction by instruction, in protocol 2 with only the opcodes
torch's ``weights_only`` unpickler accepts, so real ``torch.load(path, weights_only=True)``
reads a state dict or an optimizer state saved here. A tensor is
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``
(``_rebuild_tensor_v3`` with an untyped storage for uint16/32/64, as torch writes them),
the storage a persistent id ``("storage", torch.FloatStorage, key, location, numel)``
whose bytes the caller writes as ``data/<key>``; tensors that share memory (views, tied
weights, ``state_dict()``'s detached aliases) share one storage (:class:`SavedStorages`).

Other objects follow the rules of omnitensor's safetensors format: containers, numbers,
strings, bytes, ``Size``, devices, dtypes, numeric NumPy arrays, classes and functions by
name, and other objects as their class and state (``NEWOBJ`` + ``BUILD``), which loading
rebuilds only when the class is allowlisted. An object whose pickling protocol says
"rebuild me by calling something" (its own ``__reduce__``) is refused: loading it would
mean calling what the file names.
"""
from __future__ import annotations

import pickle
import struct
import types
from collections import Counter, OrderedDict, defaultdict
from typing import Any

import numpy as np

from .objects import global_path, object_state
from ..core import dtypes as _dt
from ..core.device import Device
from ..core.shape_util import Size
from ..core.tensor import Tensor, host_array
from .torch_names import torch_storage_name
from .views import extent_ok, memory_position

__all__ = ["TorchPickler", "SavedStorages", "location_tag"]

_FACTORIES = {list: "list", dict: "dict", set: "set", int: "int", float: "float",
              tuple: "tuple", str: "str"}


def location_tag(device: Any) -> str:
    """torch's location tag for a device: ``cuda:N`` stays, everything else is saved from
    a host copy under ``cpu`` (the real device goes in omnitensor's side record)."""
    return str(device) if device.type == "cuda" else "cpu"


class SavedStorages:
    """The storages of one save: each distinct memory block once, in key order."""

    def __init__(self) -> None:
        self.records: dict[str, np.ndarray] = {}   # key -> host copy (1-D)
        self.devices: dict[str, str] = {}          # key -> omnitensor device, if not a tag
        self.tags: dict[str, str] = {}
        self.dtypes: dict[str, _dt.DType] = {}
        self._roots: dict[int, tuple[str, Any, int]] = {}  # id(base) -> key, position, numel
        self._alive: list[Any] = []

    def _new(self, arr: np.ndarray, device: Any, dtype: _dt.DType) -> str:
        key = str(len(self.records))
        self.records[key] = np.ascontiguousarray(arr).reshape(-1)
        self.dtypes[key] = dtype
        self.tags[key] = location_tag(device)
        if self.tags[key] != str(device):
            self.devices[key] = str(device)
        return key

    def place(self, t: Tensor) -> tuple[str, int, tuple[int, ...], int]:
        """``(key, offset, stride, storage numel)`` of ``t``: on its base's storage when
        ``t`` lies inside a contiguous base, else on a contiguous copy of its own."""
        base = t._base if t._base is not None else t
        found = self._on_base(t, base)
        if found is not None:
            return found
        key = self._new(host_array(t), t.device, t.dtype)
        strides, acc = [], 1
        for n in reversed(t.shape):
            strides.append(acc)
            acc *= n
        return key, 0, tuple(reversed(strides)), int(self.records[key].shape[0])

    def _on_base(self, t: Tensor, base: Tensor) -> tuple[str, int, tuple[int, ...], int] | None:
        if base.dtype is not t.dtype or base.device != t.device or not base.is_contiguous():
            return None
        pos_t, pos_b = memory_position(t), memory_position(base)
        if pos_t is None or pos_b is None or pos_t[0] != pos_b[0] or pos_t[2] != pos_b[2]:
            return None
        delta, item = pos_t[1] - pos_b[1], pos_b[2]
        stride = tuple(int(s) for s in t.stride())
        numel = base.numel()
        if delta % item or any(s < 0 for s in stride):
            return None
        offset = delta // item
        if not extent_ok(numel, offset, t.shape, stride):
            return None
        entry = self._roots.get(id(base))
        if entry is None:
            entry = (self._new(host_array(base), base.device, base.dtype), pos_b, numel)
            self._roots[id(base)] = entry
            self._alive.append(base)
        return entry[0], offset, stride, entry[2]


class TorchPickler:
    """Writes one object as a torch ``data.pkl`` (protocol 2); storages go to
    ``storages``. ``legacy`` writes torch's pre-1.6 persistent ids (one more field)."""

    def __init__(self, storages: SavedStorages, legacy: bool = False) -> None:
        self.storages, self.legacy = storages, legacy
        self.out = bytearray()
        self.memo: dict[Any, int] = {}
        self.alive: list[Any] = []

    @staticmethod
    def untyped(dtype: _dt.DType) -> bool:
        """Whether torch saves ``dtype`` on an untyped storage (size in bytes) plus the
        dtype, rather than on a typed one (``FloatStorage``: size in elements)."""
        return torch_storage_name(dtype) is None

    def dump(self, obj: Any) -> bytes:
        self.out += pickle.PROTO + b"\x02"
        try:
            self.save(obj, "")
        except RecursionError:
            raise TypeError("omnitensor.save: the object is nested too deeply to "
                            "save") from None
        self.out += pickle.STOP
        return bytes(self.out)

    # ---------------------------------------------------------------- primitives
    def _put(self, key: Any, obj: Any) -> None:
        i = self.memo[key] = len(self.memo)
        self.alive.append(obj)
        self.out += (pickle.BINPUT + bytes([i]) if i < 256
                     else pickle.LONG_BINPUT + struct.pack("<I", i))

    def _get(self, key: Any) -> bool:
        i = self.memo.get(key)
        if i is None:
            return False
        self.out += (pickle.BINGET + bytes([i]) if i < 256
                     else pickle.LONG_BINGET + struct.pack("<I", i))
        return True

    def _global(self, module: str, name: str) -> None:
        key = ("global", module, name)
        if not self._get(key):
            self.out += pickle.GLOBAL + f"{module}\n{name}\n".encode("utf-8")
            self._put(key, None)

    def _int(self, v: int) -> None:
        if 0 <= v < 256:
            self.out += pickle.BININT1 + bytes([v])
        elif 0 <= v < 65536:
            self.out += pickle.BININT2 + struct.pack("<H", v)
        elif -(1 << 31) <= v < (1 << 31):
            self.out += pickle.BININT + struct.pack("<i", v)
        else:
            raw = pickle.encode_long(v)
            if len(raw) > 255:
                raise TypeError(f"omnitensor.save: the integer {v} is too large to save")
            self.out += pickle.LONG1 + bytes([len(raw)]) + raw

    def _str(self, s: str) -> None:
        raw = s.encode("utf-8", "surrogatepass")
        self.out += pickle.BINUNICODE + struct.pack("<I", len(raw)) + raw

    def _tuple(self, items: tuple, path: str) -> None:
        if not items:
            self.out += pickle.EMPTY_TUPLE
            return
        if len(items) > 3:
            self.out += pickle.MARK
        for i, v in enumerate(items):
            self.save(v, f"{path}[{i}]")
        self.out += (pickle.TUPLE, pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3)[
            len(items) if len(items) <= 3 else 0]

    def _call(self, module: str, name: str, args: tuple, path: str) -> None:
        self._global(module, name)
        self._tuple(args, path)
        self.out += pickle.REDUCE

    def _items(self, obj: dict, path: str) -> None:
        if not obj:
            return
        self.out += pickle.MARK
        for k, v in obj.items():
            self.save(k, f"{path}<key>")
            self.save(v, f"{path}[{k!r}]")
        self.out += pickle.SETITEMS

    # ---------------------------------------------------------------- objects
    def save(self, obj: Any, path: str) -> None:
        """Write ``obj`` (``path`` names where it sits, for error messages)."""
        if obj is None:
            self.out += pickle.NONE
        elif obj is True or obj is False:
            self.out += pickle.NEWTRUE if obj else pickle.NEWFALSE
        elif isinstance(obj, int) and type(obj) is int:
            self._int(obj)
        elif type(obj) is float:
            self.out += pickle.BINFLOAT + struct.pack(">d", obj)
        elif type(obj) is str:
            self._str(obj)
        elif isinstance(obj, np.generic):
            self.save(obj.item(), path)
        elif not self._get(id(obj)):
            self._save_new(obj, path)

    def _save_new(self, obj: Any, path: str) -> None:
        if isinstance(obj, Tensor):
            self._tensor(obj, path)
        elif type(obj) in (dict, list, tuple, set, frozenset, OrderedDict, defaultdict,
                           Counter):
            self._container(obj, path)
        elif isinstance(obj, (bytes, bytearray, complex, np.ndarray, _dt.DType, Size, Device)):
            self._value(obj, path)
        elif isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
            self._global(*global_path(obj).rsplit(".", 1))
        else:
            self._object(obj, path)

    def _tensor(self, obj: Tensor, path: str) -> None:
        from ..nn.parameter import Parameter
        if isinstance(obj, Parameter):
            self._global("torch._utils", "_rebuild_parameter")
            self.out += pickle.MARK
            self._tensor_data(obj, False)
            self.save(bool(obj.requires_grad), path)
            self._call("collections", "OrderedDict", (), path)
            self.out += pickle.TUPLE + pickle.REDUCE
        elif getattr(obj, "is_quantized", False):
            self._qtensor_data(obj)
        else:
            self._tensor_data(obj, bool(obj.requires_grad))
        self._put(id(obj), obj)

    def _storage_pid(self, key: str, storage_name: str, numel: int) -> None:
        self.out += pickle.MARK + pickle.MARK
        self._str("storage")
        self._global(*storage_name.rsplit(".", 1))
        self._str(key)
        self._str(self.storages.tags[key])
        self._int(numel)
        if self.legacy:
            self.out += pickle.NONE  # no storage view
        self.out += pickle.TUPLE + pickle.BINPERSID

    def _qtensor_data(self, q: Any) -> None:
        """A quantized tensor as torch writes one: ``_rebuild_qtensor`` on a
        ``QInt8Storage``/``QUInt8Storage``/``QInt32Storage`` of its integers, with its
        scheme and parameters (read back by serialization/quantized.py)."""
        from .quantized import storage_name_of
        key, offset, stride, numel = self.storages.place(q._int.detach())
        self._global("torch._utils", "_rebuild_qtensor")
        self._storage_pid(key, storage_name_of(q.dtype), numel)
        self._int(offset)
        self._tuple(tuple(int(s) for s in q.shape), "")
        self._tuple(stride, "")
        self.out += pickle.MARK
        self._global("torch", q.qscheme().name)
        if q._scales is None:
            self.save(float(q._scale), "")
            self.save(int(q._zero_point), "")
        else:
            self.save(q._scales, "")
            self.save(q._zero_points, "")
            self._int(int(q._axis))
        self.out += pickle.TUPLE
        self.save(False, "")
        self._call("collections", "OrderedDict", (), "")
        self.out += pickle.TUPLE + pickle.REDUCE

    def _tensor_data(self, t: Tensor, requires_grad: bool) -> None:
        key, offset, stride, numel = self.storages.place(t.detach())
        storage_name = torch_storage_name(t.dtype)
        untyped = storage_name is None  # uint16/32/64: an untyped storage and the dtype
        self._global("torch._utils", "_rebuild_tensor_v3" if untyped else "_rebuild_tensor_v2")
        self._storage_pid(key, "torch.storage.UntypedStorage" if untyped else
                          f"torch.{storage_name}",
                          numel * t.dtype.itemsize if untyped else numel)
        self._int(offset)
        self._tuple(tuple(int(s) for s in t.shape), "")
        self._tuple(stride, "")
        self.save(requires_grad, "")
        self._call("collections", "OrderedDict", (), "")
        if untyped:
            self._global("torch", t.dtype.name)
        self.out += pickle.TUPLE + pickle.REDUCE

    def _container(self, obj: Any, path: str) -> None:
        kind = type(obj)
        if kind is tuple:
            self._tuple(obj, path)
        elif kind is list:
            self.out += pickle.EMPTY_LIST
            self._put(id(obj), obj)
            if obj:
                self.out += pickle.MARK
                for i, v in enumerate(obj):
                    self.save(v, f"{path}[{i}]")
                self.out += pickle.APPENDS
            return
        elif kind is dict:
            self.out += pickle.EMPTY_DICT
            self._put(id(obj), obj)
            self._items(obj, path)
            return
        elif kind in (set, frozenset):
            self._call("builtins", kind.__name__, (list(obj),), path)
        elif kind is Counter:
            self._call("collections", "Counter", (dict(obj),), path)
        else:
            self._mapping(obj, path)
            return
        self._put(id(obj), obj)

    def _mapping(self, obj: Any, path: str) -> None:
        """OrderedDict (with its attributes, a state_dict's ``_metadata``) or defaultdict."""
        if type(obj) is OrderedDict:
            self._call("collections", "OrderedDict", (), path)
        else:
            factory = obj.default_factory
            if factory is not None and factory not in _FACTORIES:
                raise TypeError(f"omnitensor.save: a defaultdict at {path or 'the top level'} "
                                f"has the factory {factory!r}; only "
                                f"{', '.join(_FACTORIES.values())} (or None) can be saved")
            self._global("collections", "defaultdict")
            if factory is None:
                self.out += pickle.NONE
            else:
                self._global("builtins", _FACTORIES[factory])
            self.out += pickle.TUPLE1 + pickle.REDUCE
        self._put(id(obj), obj)
        self._items(obj, path)
        state = getattr(obj, "__dict__", None)
        if state:
            self.save(dict(state), f"{path}.__dict__")
            self.out += pickle.BUILD

    def _value(self, obj: Any, path: str) -> None:
        if isinstance(obj, (bytes, bytearray)):
            if type(obj) is bytearray:
                self._global("builtins", "bytearray")
                self._call("_codecs", "encode", (bytes(obj).decode("latin1"), "latin1"), path)
                self.out += pickle.TUPLE1 + pickle.REDUCE
            else:
                self._call("_codecs", "encode", (obj.decode("latin1"), "latin1"), path)
        elif isinstance(obj, complex):
            self._call("builtins", "complex", (obj.real, obj.imag), path)
        elif isinstance(obj, np.ndarray):
            self._ndarray(obj, path)
        elif isinstance(obj, _dt.DType):
            self._global("torch", obj.name)
        elif isinstance(obj, Size):
            self._call("torch", "Size", (tuple(int(v) for v in obj),), path)
        else:  # a Device
            args = (obj.type,) if obj.type == "cpu" else (obj.type, obj.index)
            self._call("torch", "device", args, path)
        self._put(id(obj), obj)

    def _ndarray(self, arr: np.ndarray, path: str) -> None:
        """A numeric array as NumPy pickles it (``_reconstruct`` + ``BUILD``)."""
        if arr.dtype.kind not in "biufc" or type(arr) is not np.ndarray:
            raise TypeError(f"omnitensor.save: cannot save a NumPy array of dtype {arr.dtype} "
                            f"at {path or 'the top level'} (numeric arrays only)")
        reduced: Any = arr.__reduce__()
        func, (_cls, shape, code), _state = reduced
        self._global(func.__module__, func.__name__)
        self.out += pickle.MARK
        self._global("numpy", "ndarray")
        self._tuple(tuple(shape), path)
        self._call("_codecs", "encode", (code.decode("latin1"), "latin1"), path)
        self.out += pickle.TUPLE + pickle.REDUCE
        dt = arr.dtype
        self.out += pickle.MARK
        self._int(1)
        self._tuple(tuple(int(s) for s in arr.shape), path)
        self._call("numpy", "dtype", (dt.str[1:], False, True), path)
        self._tuple((3, dt.byteorder if dt.byteorder != "=" else "<", None, None, None,
                     -1, -1, 0), path)
        self.out += pickle.BUILD
        self.save(not arr.flags.c_contiguous and arr.flags.f_contiguous, path)
        raw = (arr if arr.flags.f_contiguous and not arr.flags.c_contiguous
               else np.ascontiguousarray(arr)).tobytes(order="A")
        self._call("_codecs", "encode", (raw.decode("latin1"), "latin1"), path)
        self.out += pickle.TUPLE + pickle.BUILD

    def _object(self, obj: Any, path: str) -> None:
        where = path or "the top level"
        cls = type(obj)
        if isinstance(obj, (types.ModuleType, types.MethodType, types.GeneratorType)) or \
                cls.__module__ == "builtins":
            raise TypeError(f"omnitensor.save: cannot save an object of type {cls.__name__} "
                            f"at {where}")
        if isinstance(obj, (dict, list, set)):
            raise TypeError(f"omnitensor.save: cannot save a {cls.__name__} (a subclass of "
                            f"{cls.__mro__[1].__name__}) at {where}; convert it to a plain "
                            f"container first")
        if cls.__reduce_ex__ is not object.__reduce_ex__ or cls.__reduce__ is not object.__reduce__:
            raise TypeError(f"omnitensor.save: cannot save an object of type {cls.__name__} at "
                            f"{where}: it defines __reduce__, so it cannot be stored as its "
                            f"class and state; save its state_dict() or plain data instead")
        self._global(*global_path(cls).rsplit(".", 1))
        if isinstance(obj, tuple):  # a namedtuple: its fields are the constructor's arguments
            self._tuple(tuple(obj), path)
        else:
            self.out += pickle.EMPTY_TUPLE
        self.out += pickle.NEWOBJ
        self._put(id(obj), obj)
        if not isinstance(obj, tuple):
            self.save(object_state(obj), f"{path}.__state__")
            self.out += pickle.BUILD
