"""Object collectives over a safe encoding (never pickle).

torch pickles objects for ``broadcast_object_list``/``all_gather_object``: unpickling
bytes from another process runs whatever code they name. Here objects travel as JSON with
a small tagged encoding for what JSON lacks::

    tuple -> {"__ot__": "tuple", "v": [...]}     bytes -> {"__ot__": "bytes", "v": base64}
    complex, set, frozenset, dicts with non-string keys, numpy arrays and scalars,
    omnitensor Tensors (dtype, shape, device, base64 of the raw bytes), dtypes, devices

Anything else raises TypeError naming the type (convert it to one of these first). The
bytes always travel through MPI on the host, with the group's timeout.
"""
from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np

from .group import _world, resolve_group

__all__ = ["encode", "decode", "broadcast_object_list", "all_gather_object",
           "gather_object", "scatter_object_list"]

_TAG = "__ot__"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _enc(obj: Any) -> Any:
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, list):
        return [_enc(x) for x in obj]
    if isinstance(obj, tuple):
        return {_TAG: "tuple", "v": [_enc(x) for x in obj]}
    if isinstance(obj, dict):
        if all(isinstance(k, str) for k in obj) and _TAG not in obj:
            return {k: _enc(v) for k, v in obj.items()}
        return {_TAG: "dict", "v": [[_enc(k), _enc(v)] for k, v in obj.items()]}
    if isinstance(obj, (bytes, bytearray)):
        return {_TAG: "bytes", "v": _b64(bytes(obj))}
    if isinstance(obj, complex):
        return {_TAG: "complex", "v": [obj.real, obj.imag]}
    if isinstance(obj, (set, frozenset)):
        return {_TAG: type(obj).__name__, "v": [_enc(x) for x in obj]}
    if isinstance(obj, np.generic):
        return _enc(obj.item())
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biufc":
            raise TypeError(f"cannot encode a numpy array of dtype {obj.dtype} safely")
        arr = np.ascontiguousarray(obj)
        return {_TAG: "ndarray", "dtype": arr.dtype.str, "shape": list(arr.shape),
                "v": _b64(arr.tobytes())}
    from ..core.device import Device
    from ..core.dtypes import DType
    from ..core.tensor import Tensor
    if isinstance(obj, Tensor):
        arr = np.ascontiguousarray(obj._device.backend.to_numpy(obj._data))
        return {_TAG: "tensor", "dtype": obj.dtype.name, "shape": list(obj.shape),
                "device": str(obj.device), "requires_grad": bool(obj.requires_grad),
                "v": _b64(arr.tobytes())}
    if isinstance(obj, DType):
        return {_TAG: "dtype", "v": obj.name}
    if isinstance(obj, Device):
        return {_TAG: "device", "v": str(obj)}
    raise TypeError(f"object collectives send only JSON-like data (None, bool, int, float, "
                    f"str, list, tuple, dict, bytes, complex, set, numpy arrays, Tensors); "
                    f"got {type(obj).__name__}. omnitensor never pickles: convert it first")


def _dec(obj: Any) -> Any:
    if isinstance(obj, list):
        return [_dec(x) for x in obj]
    if not isinstance(obj, dict):
        return obj
    tag = obj.get(_TAG)
    if tag is None:
        return {k: _dec(v) for k, v in obj.items()}
    v: Any = obj.get("v")
    if tag == "tuple":
        return tuple(_dec(x) for x in v)
    if tag == "dict":
        return {_dec(k): _dec(x) for k, x in v}
    if tag == "bytes":
        return base64.b64decode(v)
    if tag == "complex":
        return complex(v[0], v[1])
    if tag == "set":
        return {_dec(x) for x in v}
    if tag == "frozenset":
        return frozenset(_dec(x) for x in v)
    if tag == "ndarray":
        dtype = np.dtype(obj["dtype"])
        if dtype.kind not in "biufc":
            raise ValueError(f"refusing to decode a numpy array of dtype {dtype}")
        return np.frombuffer(base64.b64decode(v), dtype).reshape(obj["shape"]).copy()
    if tag == "tensor":
        return _tensor(obj)
    if tag == "dtype":
        from ..core.dtypes import as_dtype
        return as_dtype(v)
    if tag == "device":
        from ..core.device import device
        return device(v)
    raise ValueError(f"unknown tag {tag!r} in an encoded object")


def _tensor(obj: dict) -> Any:
    from ..core.device import device as as_device
    from ..core.dtypes import as_dtype
    from ..core.ops.creation import from_numpy
    dtype = as_dtype(obj["dtype"])
    arr = np.frombuffer(base64.b64decode(obj["v"]), dtype.np).reshape(obj["shape"]).copy()
    t = from_numpy(arr)
    try:  # onto the sender's device when this rank has it, else stay on cpu
        dev = as_device(obj["device"])
        if dev != t.device:
            t = t.to(dev)  # raises when the device is absent here
    except Exception:  # noqa: BLE001
        pass
    if obj.get("requires_grad"):
        t.requires_grad_(True)
    return t


def encode(obj: Any) -> bytes:
    """``obj`` as UTF-8 JSON bytes (see the module docstring for what is accepted)."""
    return json.dumps(_enc(obj), separators=(",", ":")).encode()


def decode(data: bytes) -> Any:
    """The object :func:`encode` produced."""
    return _dec(json.loads(data.decode()))


# ---------------------------------------------------------------------- collectives
def _g(group: Any) -> Any:
    return _world.default if group is None and _world.default is not None else \
        resolve_group(group)


def broadcast_object_list(object_list: list, src: int | None = None, group: Any = None,
                          device: Any = None, group_src: int | None = None) -> None:
    """Replace ``object_list``'s items on every rank by rank ``src``'s (same length)."""
    from .mpi_backend import bcast_bytes
    g = _g(group)
    if not g.is_member:
        return
    root = group_src if group_src is not None else g.group_rank(0 if src is None else src)
    data = encode(list(object_list)) if g.rank() == root else None
    got = decode(bcast_bytes(g, data, root, "broadcast_object_list"))
    if len(got) != len(object_list):
        from .types import CollectiveMismatchError
        raise CollectiveMismatchError(f"broadcast_object_list: rank {g.rank()} passed a list "
                                      f"of {len(object_list)}, the source {len(got)}")
    object_list[:] = got


def all_gather_object(object_list: list, obj: Any, group: Any = None) -> None:
    """``object_list[i]`` = rank i's ``obj`` on every rank (the list has group size)."""
    from .mpi_backend import allgather_bytes
    g = _g(group)
    if not g.is_member:
        return
    if len(object_list) != g.size():
        raise ValueError(f"all_gather_object: object_list must have group size "
                         f"({g.size()}) entries, got {len(object_list)}")
    parts = allgather_bytes(g, encode(obj), "all_gather_object")
    object_list[:] = [decode(p) for p in parts]


def gather_object(obj: Any, object_gather_list: list | None = None, dst: int | None = None,
                  group: Any = None, group_dst: int | None = None) -> None:
    """Rank ``dst``'s ``object_gather_list[i]`` = rank i's ``obj`` (an all-gather of the
    bytes underneath: simple, and objects are small)."""
    from .mpi_backend import allgather_bytes
    g = _g(group)
    if not g.is_member:
        return
    root = group_dst if group_dst is not None else g.group_rank(0 if dst is None else dst)
    parts = allgather_bytes(g, encode(obj), "gather_object")
    if g.rank() == root:
        if object_gather_list is None or len(object_gather_list) != g.size():
            raise ValueError(f"gather_object: dst must pass a list of group size "
                             f"({g.size()})")
        object_gather_list[:] = [decode(p) for p in parts]


def scatter_object_list(scatter_object_output_list: list,
                        scatter_object_input_list: list | None = None, src: int | None = None,
                        group: Any = None, group_src: int | None = None) -> None:
    """``scatter_object_output_list[0]`` = rank ``src``'s input list item for this rank."""
    from .mpi_backend import bcast_bytes
    g = _g(group)
    if not g.is_member:
        return
    root = group_src if group_src is not None else g.group_rank(0 if src is None else src)
    data = None
    if g.rank() == root:
        if scatter_object_input_list is None or len(scatter_object_input_list) != g.size():
            raise ValueError(f"scatter_object_list: src must pass a list of group size "
                             f"({g.size()})")
        data = encode(list(scatter_object_input_list))
    items = decode(bcast_bytes(g, data, root, "scatter_object_list"))
    if not scatter_object_output_list:
        scatter_object_output_list.append(None)
    scatter_object_output_list[0] = items[g.rank()]
