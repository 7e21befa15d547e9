"""The allow-list: every global a checkpoint may name on the default (``weights_only``)
path, and what it means in omnitensor.

The list follows torch's ``torch/_weights_only_unpickler.py`` (rebuild functions, storage
and tensor types, dtypes, ``torch.Size``, ``torch.device``, ``OrderedDict``,
``Counter``, ``set``, ``complex``, ``bytearray``, ``_codecs.encode``) plus NumPy's numeric
arrays and scalars, ``frozenset``, ``slice`` and ``defaultdict`` with a builtin factory.
A name maps to omnitensor's own object, never to the named one: ``torch._utils.
_rebuild_tensor_v2`` is :meth:`LoadContext.rebuild_v2`, ``builtins.set`` is a wrapper
that builds a set from a list and nothing else, ``numpy.dtype`` accepts numeric dtypes only.
Each entry is a *call* (``REDUCE`` may call it) or a *value* (it may only be passed).
Names that torch allows but omnitensor cannot build (quantized, sparse, nested tensors,
float8 dtypes) raise a clear error.
"""
from __future__ import annotations

import codecs
from collections import Counter, OrderedDict, defaultdict
from typing import Any

import numpy as np

from ..core import dtypes as _dt
from .files import CheckpointError
from .rebuild import LoadContext, StorageType

__all__ = ["allowed_globals", "build_numpy", "CALL", "VALUE", "torch_storage_name",
           "unsupported_global", "TORCH_DTYPES"]

CALL, VALUE = "call", "value"

#: torch's dtype names (``str(torch.float32)`` less ``torch.``) -> omnitensor dtypes
TORCH_DTYPES: dict[str, _dt.DType] = {
    "float64": _dt.float64, "float32": _dt.float32, "float16": _dt.float16,
    "bfloat16": _dt.bfloat16, "int64": _dt.int64, "int32": _dt.int32, "int16": _dt.int16,
    "int8": _dt.int8, "uint8": _dt.uint8, "uint16": _dt.uint16, "uint32": _dt.uint32,
    "uint64": _dt.uint64, "bool": _dt.bool_, "complex64": _dt.complex64,
    "complex128": _dt.complex128}
_DTYPE_ALIASES = {"double": "float64", "float": "float32", "half": "float16", "long": "int64",
                  "int": "int32", "short": "int16", "cfloat": "complex64",
                  "cdouble": "complex128"}
#: torch's typed storage classes (written by torch for these dtypes; the others it writes
#: as UntypedStorage plus a dtype)
_STORAGES = {"DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
             "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16",
             "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
             "BFloat16Storage": "bfloat16", "ComplexDoubleStorage": "complex128",
             "ComplexFloatStorage": "complex64"}
_STORAGE_OF = {v: k for k, v in _STORAGES.items()}
_UNSUPPORTED = {
    "_rebuild_sparse_tensor": "a sparse tensor",
    "_rebuild_nested_tensor": "a nested tensor",
    "_rebuild_meta_tensor_no_storage": "a meta tensor (no data)",
    "_rebuild_wrapper_subclass": "a tensor subclass without storage (a fake or meta tensor)",
    "QUInt4x2Storage": "a sub-byte quantized tensor",
    "QUInt2x4Storage": "a sub-byte quantized tensor"}
_FACTORIES = (list, dict, set, frozenset, int, float, tuple, str, bytes, OrderedDict)


def torch_storage_name(dtype: _dt.DType) -> str | None:
    """``FloatStorage`` & co. for the dtypes torch writes as typed storages, else None
    (torch writes ``UntypedStorage`` and the dtype)."""
    return _STORAGE_OF.get(dtype.name)


def _check_items(value: Any, what: str) -> list:
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise CheckpointError(f"a checkpoint builds a {what} from {type(value).__name__}")
    return list(value)


def _set(items: Any = ()) -> set:
    return set(_check_items(items, "set"))


def _frozenset(items: Any = ()) -> frozenset:
    return frozenset(_check_items(items, "frozenset"))


def _complex(real: Any = 0.0, imag: Any = 0.0) -> complex:
    if not all(isinstance(v, (int, float)) for v in (real, imag)):
        raise CheckpointError("a checkpoint builds a complex number from non-numbers")
    return complex(real, imag)


def _bytearray(data: Any = b"") -> bytearray:
    if not isinstance(data, (bytes, bytearray)):  # bytearray(10**12) would allocate it
        raise CheckpointError(f"a checkpoint builds a bytearray from {type(data).__name__}")
    return bytearray(data)


def _slice(*args: Any) -> slice:
    if len(args) > 3 or not all(a is None or isinstance(a, int) for a in args):
        raise CheckpointError("a checkpoint builds a slice from non-integers")
    return slice(*args)


_TEXT_CODECS = {"latin1", "latin-1", "iso-8859-1", "utf-8", "utf8", "ascii"}


def _encode(text: Any, encoding: str = "utf-8") -> bytes:
    """``_codecs.encode`` as protocol-2 pickles use it for bytes: text codecs only (another
    codec name would make the codec registry import a module)."""
    if not isinstance(text, str) or not isinstance(encoding, str) or \
            encoding.lower() not in _TEXT_CODECS:
        raise CheckpointError(f"a checkpoint calls _codecs.encode with {encoding!r}; only "
                              f"text codecs ({', '.join(sorted(_TEXT_CODECS))}) are read")
    return codecs.encode(text, encoding)


def _ordered_dict(items: Any = ()) -> OrderedDict:
    return OrderedDict(items if isinstance(items, dict) else _check_items(items, "dict"))


def _counter(items: Any = ()) -> Counter:
    return Counter(items if isinstance(items, dict) else _check_items(items, "Counter"))


def _defaultdict(factory: Any = None, items: Any = ()) -> defaultdict:
    plain = _PLAIN_FACTORY.get(id(factory), factory)
    if plain is not None and plain not in _FACTORIES:
        raise CheckpointError(f"a checkpoint builds a defaultdict with the factory "
                              f"{factory!r}; only builtin containers and numbers are read")
    return defaultdict(plain, items if isinstance(items, dict) else _check_items(items, "dict"))


_PLAIN_FACTORY = {id(_set): set, id(_frozenset): frozenset, id(_ordered_dict): OrderedDict}


# ---------------------------------------------------------------------------- NumPy
def _np_dtype(spec: Any, align: Any = False, copy: Any = False) -> np.dtype:
    if not isinstance(spec, str):
        raise CheckpointError(f"a checkpoint builds a NumPy dtype from {spec!r}")
    try:
        dt = np.dtype(spec)
    except TypeError:
        raise CheckpointError(f"a checkpoint names the NumPy dtype {spec!r}") from None
    if dt.kind not in "biufc":
        raise CheckpointError(f"a checkpoint holds a NumPy array of dtype {dt}; only "
                              f"numeric arrays are read (an object array runs code)")
    return np.dtype(dt, copy=True)  # its own object: BUILD sets its byte order


def _np_reconstruct(cls: Any, shape: Any, typecode: Any) -> np.ndarray:
    if cls is not np.ndarray:
        raise CheckpointError(f"a checkpoint rebuilds a NumPy array of type {cls!r}")
    return np.ndarray((0,), np.uint8)  # filled by BUILD (see build_numpy)


def _np_scalar(dtype: Any, raw: Any = b"") -> Any:
    if not isinstance(dtype, np.dtype) or dtype.kind not in "biufc" or \
            not isinstance(raw, bytes) or len(raw) != dtype.itemsize:
        raise CheckpointError("a checkpoint holds a malformed NumPy scalar")
    return np.frombuffer(raw, dtype=dtype)[0]


def build_numpy(inst: Any, state: Any, ctx: LoadContext) -> bool:
    """BUILD on a NumPy array or dtype made by the entries above: the state is checked to
    be numeric data (never an object array, whose state would be unpickled objects), then
    NumPy's own ``__setstate__`` applies it. False when ``inst`` is neither."""
    if type(inst) is np.ndarray:
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise ctx.fail("malformed NumPy array state")
        shape, dtype, _fortran, raw = state[-4:]
        if not isinstance(dtype, np.dtype) or dtype.kind not in "biufc" or \
                not isinstance(raw, bytes) or not isinstance(shape, tuple) or \
                not all(isinstance(s, int) and s >= 0 for s in shape):
            raise ctx.fail("malformed NumPy array state")
        n = 1
        for s in shape:
            n *= s
        if n * dtype.itemsize != len(raw):
            raise ctx.fail(f"a NumPy array of shape {shape} has {len(raw)} bytes of data")
        ctx.charge(len(raw), "its NumPy arrays")
        inst.__setstate__(state)
        return True
    if isinstance(inst, np.dtype):
        ok = (isinstance(state, tuple) and len(state) in (8, 9) and state[0] in (3, 4)
              and state[1] in ("<", ">", "|", "=") and state[2:5] == (None, None, None))
        if not ok or inst.kind not in "biufc":
            raise ctx.fail("malformed NumPy dtype state")
        inst.__setstate__(state)  # type: ignore[attr-defined]
        return True
    return False


# ---------------------------------------------------------------------------- table
def _unsupported(path: str, what: str, name: str) -> CheckpointError:
    return CheckpointError(f"{name} holds {what} ({path}), which omnitensor has no "
                           f"equivalent of; convert it to a plain tensor with torch first")


def allowed_globals(ctx: LoadContext) -> dict[str, tuple[str, Any]]:
    """``"module.name" -> (CALL or VALUE, object)`` for one load."""
    from ..core.device import device
    from ..core.legacy import LEGACY_TYPES, strided
    from ..core.shape_util import Size
    from ..nn.parameter import Parameter
    from ..core.tensor import Tensor

    def layout(name: Any) -> Any:
        if name != "torch.strided":
            raise _unsupported(f"layout {name}", "a tensor of a non-strided layout",
                               ctx.name)
        return strided

    def torch_device(spec: Any, index: Any = None) -> Any:
        if not isinstance(spec, str) or not (index is None or isinstance(index, int)):
            raise ctx.fail(f"bad torch.device({spec!r}, {index!r})")
        return device(spec, index)

    u = "torch._utils."
    table: dict[str, tuple[str, Any]] = {
        u + "_rebuild_tensor": (CALL, ctx.rebuild_v1),
        u + "_rebuild_tensor_v2": (CALL, ctx.rebuild_v2),
        u + "_rebuild_tensor_v3": (CALL, ctx.rebuild_v3),
        u + "_rebuild_parameter": (CALL, ctx.rebuild_parameter),
        u + "_rebuild_parameter_with_state": (CALL, ctx.rebuild_parameter),
        u + "_rebuild_device_tensor_from_cpu_tensor": (CALL, ctx.rebuild_from_cpu_tensor),
        u + "_rebuild_device_tensor_from_numpy": (CALL, ctx.rebuild_from_numpy),
        "torch._tensor._rebuild_from_type_v2": (CALL, ctx.rebuild_from_type),
        "torch.serialization._get_layout": (CALL, layout),
        "torch.Size": (CALL, Size), "torch.device": (CALL, torch_device),
        "torch.Tensor": (VALUE, Tensor), "torch.nn.parameter.Parameter": (VALUE, Parameter),
        "collections.OrderedDict": (CALL, _ordered_dict),
        "collections.Counter": (CALL, _counter),
        "collections.defaultdict": (CALL, _defaultdict),
        "builtins.set": (CALL, _set), "builtins.frozenset": (CALL, _frozenset),
        "builtins.complex": (CALL, _complex), "builtins.bytearray": (CALL, _bytearray),
        "builtins.slice": (CALL, _slice), "_codecs.encode": (CALL, _encode),
        "numpy.ndarray": (VALUE, np.ndarray), "numpy.dtype": (CALL, _np_dtype),
    }
    for f in _FACTORIES:  # defaultdict factories: passed, never called from the file
        table.setdefault(f"builtins.{f.__name__}", (VALUE, f))
    for mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
        table[f"{mod}._reconstruct"] = (CALL, _np_reconstruct)
        table[f"{mod}.scalar"] = (CALL, _np_scalar)
    for name, dt in TORCH_DTYPES.items():
        table[f"torch.{name}"] = (VALUE, dt)
    for alias, name in _DTYPE_ALIASES.items():
        table[f"torch.{alias}"] = (VALUE, TORCH_DTYPES[name])
    for prefix in ("torch.", "torch.cuda."):
        for sname, dname in _STORAGES.items():
            table[prefix + sname] = (VALUE, StorageType(sname, TORCH_DTYPES[dname]))
        for tname, ttype in LEGACY_TYPES.items():
            table[prefix + tname] = (VALUE, ttype)
    for path in ("torch.UntypedStorage", "torch.storage.UntypedStorage",
                 "torch.storage._UntypedStorage", "torch.cuda.UntypedStorage"):
        table[path] = (VALUE, StorageType("UntypedStorage", None))
    from .quantized import quantized_globals  # _rebuild_qtensor, QInt8Storage...
    table.update(quantized_globals(ctx, CALL, VALUE))
    return table


def unsupported_global(path: str, name: str) -> CheckpointError | None:
    """The error for a name torch allows but omnitensor cannot build, else None."""
    last = path.rpartition(".")[2]
    if path.startswith("torch.") and last in _UNSUPPORTED:
        return _unsupported(path, _UNSUPPORTED[last], name)
    if path.startswith("torch.") and ("float8" in last or last in ("complex32", "float4_e2m1fn_x2")
                                      or last.startswith(("qint", "quint", "bits"))):
        return _unsupported(path, f"the dtype {last}", name)
    if path.startswith("torch.per_") or path.startswith("torch.sparse_"):
        return _unsupported(path, "a quantized or sparse tensor", name)
    return None
