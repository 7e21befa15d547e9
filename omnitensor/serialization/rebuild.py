"""Rebuilding tensors from torch checkpoints: the state of one load (:class:`LoadContext`)
and omnitensor's own versions of torch's ``torch._utils._rebuild_*`` functions.

A torch pickle names ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, hooks)``; the allow-list maps that name to :meth:`LoadContext.rebuild_v2`
(see :mod:`.torch_names`), never to torch's function. Each storage becomes one 1-D tensor
on its target device, and every tensor on it is a view of that (:mod:`.views`), so
tensors that shared memory when saved share it again. What a file makes us build is
bounded by its size (:func:`.files.build_budget`): storages come from its bytes, and a
layout copied because no view reaches it is charged.
"""
from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

from ..core import dtypes as _dt
from ..core.tensor import Tensor
from .files import BYTES_PER_FILE_BYTE, CheckpointError, build_budget
from .locations import LoadedStorage, MapLocation, resolve_location
from .views import extent_ok, strided_view

__all__ = ["LoadContext", "StorageType"]

_MAX_DIMS = 64


class StorageType:
    """What ``torch.FloatStorage`` & co. (and ``torch.UntypedStorage``: ``dtype`` None,
    bytes) mean in a checkpoint: the element dtype of a saved storage."""

    def __init__(self, name: str, dtype: _dt.DType | None) -> None:
        self.name, self.dtype = name, dtype

    def __repr__(self) -> str:
        return f"StorageType({self.name})"


def _ints(value: Any, what: str, name: str) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)) or len(value) > _MAX_DIMS or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        raise CheckpointError(f"{name} is corrupted: a tensor's {what} is {value!r}, not a "
                              f"tuple of at most {_MAX_DIMS} non-negative ints")
    return tuple(value)


class LoadContext:
    """One load: where storages go, what may still be built, and the rebuild functions
    the allow-list hands to the unpickler (bound here, so loads never share state)."""

    def __init__(self, name: str, map_location: MapLocation, file_bytes: int | None,
                 devices: dict[str, str] | None = None, byteorder: str = "little",
                 mmap: bool = False) -> None:
        self.name, self.map_location = name, map_location
        self.budget = build_budget(file_bytes)
        self.devices = devices or {}  # storage key -> the omnitensor device it was saved on
        self.swap = byteorder != sys.byteorder
        self.mmap = mmap
        self.storages: dict[str, LoadedStorage] = {}

    def fail(self, what: str) -> CheckpointError:
        return CheckpointError(f"{self.name} is corrupted: {what}")

    def charge(self, nbytes: int, what: str) -> None:
        if self.budget is None:
            return
        self.budget -= nbytes
        if self.budget < 0:
            raise self.fail(f"{what} would build more than {BYTES_PER_FILE_BYTE}x the "
                            f"file's size in tensors")

    # ---------------------------------------------------------------- storages
    def storage(self, key: str, stype: Any, numel: Any, location: Any,
                read: Callable[[str, int], Any]) -> LoadedStorage:
        """The storage a persistent id names, read once per key (``read(key, nbytes)``
        returns its bytes and checks the file holds exactly that many)."""
        if not isinstance(stype, StorageType):
            raise self.fail(f"storage {key!r} has type {stype!r}, not a torch storage type")
        if not isinstance(numel, int) or isinstance(numel, bool) or numel < 0:
            raise self.fail(f"storage {key!r} has size {numel!r}")
        if isinstance(location, bytes):
            location = location.decode("ascii", "replace")
        if not isinstance(location, str):
            raise self.fail(f"storage {key!r} has location {location!r}")
        key = str(key)
        if key in self.storages:
            return self.storages[key]
        np_dtype = np.dtype(np.uint8) if stype.dtype is None else np.dtype(stype.dtype.np)
        raw = read(key, numel * np_dtype.itemsize)
        arr = np.frombuffer(raw, dtype=np.uint8)
        saved = self.devices.get(key, location)
        out = LoadedStorage(arr, stype.dtype, saved, saved)
        out.device = resolve_location(saved, self.map_location, out)
        self.storages[key] = out
        return out

    def _typed(self, storage: LoadedStorage, dtype: _dt.DType) -> np.ndarray:
        arr = storage.array
        if arr.nbytes % dtype.itemsize:
            raise self.fail(f"a {dtype.name} tensor is on a storage of {arr.nbytes} bytes, "
                            f"not a whole number of elements")
        typed = arr.view(dtype.np)
        return typed.byteswap() if self.swap else typed

    def _base(self, storage: LoadedStorage, dtype: _dt.DType) -> Tensor:
        base = storage.bases.get(dtype.name)
        if base is not None:
            return base
        from ..core.ops.creation import from_numpy, tensor
        typed = self._typed(storage, dtype)
        self.charge(typed.nbytes, "its storages")
        target = storage.device
        try:
            if (self.mmap and typed.flags.writeable and typed.flags.aligned
                    and str(target) == "cpu"):
                base = from_numpy(typed)  # shares the file mapping's pages
            else:
                base = tensor(typed, dtype=dtype, device=target)
        except Exception as e:  # explain with the remedy
            raise RuntimeError(
                f"omnitensor.load: cannot restore a storage saved on {storage.location} onto "
                f"{target}: {e}. Pass map_location='cpu' (or another available device) to "
                f"load it elsewhere") from e
        storage.bases[dtype.name] = base
        return base

    # ---------------------------------------------------------------- tensors
    def rebuild(self, storage: Any, offset: Any, size: Any, stride: Any,
                requires_grad: Any = False, dtype: Any = None, metadata: Any = None) -> Tensor:
        """The tensor ``storage[offset]`` with ``size`` and ``stride`` (elements)."""
        if not isinstance(storage, LoadedStorage):
            raise self.fail(f"a tensor is rebuilt from {type(storage).__name__}, not a storage")
        dtype = storage.dtype if dtype is None else dtype
        if not isinstance(dtype, _dt.DType):
            raise self.fail(f"a tensor on an untyped storage has dtype {dtype!r}")
        size, stride = _ints(size, "size", self.name), _ints(stride, "stride", self.name)
        if not isinstance(offset, int) or isinstance(offset, bool) or len(size) != len(stride):
            raise self.fail(f"a tensor has offset {offset!r}, size {size} and stride {stride}")
        if not isinstance(requires_grad, bool):
            raise self.fail(f"a tensor's requires_grad is {type(requires_grad).__name__}")
        base = self._base(storage, dtype)
        if not extent_ok(base.shape[0], offset, size, stride):
            raise self.fail(f"a tensor of size {list(size)}, stride {list(stride)} at offset "
                            f"{offset} reaches past its storage of {base.shape[0]} elements")
        t = strided_view(base, offset, size, stride)
        if t is None:  # overlapping layout: no chain of view ops reaches it, so a copy
            t = self._copied(storage, dtype, offset, size, stride)
        else:
            t = t.detach()
        if metadata:
            t = self._apply_metadata(t, metadata)
        if requires_grad and t.dtype.kind in "fc":
            t.requires_grad_(True)
        return t

    def _copied(self, storage: LoadedStorage, dtype: _dt.DType, offset: int,
                size: tuple[int, ...], stride: tuple[int, ...]) -> Tensor:
        from ..core.ops.creation import tensor
        n = 1
        for s in size:
            n *= s
        self.charge(n * dtype.itemsize, "an overlapping tensor layout")
        typed = self._typed(storage, dtype)
        item = typed.itemsize
        arr = np.lib.stride_tricks.as_strided(typed[offset:], shape=size,
                                              strides=[s * item for s in stride])
        return tensor(np.ascontiguousarray(arr), dtype=dtype, device=storage.device)

    def _apply_metadata(self, t: Tensor, metadata: Any) -> Tensor:
        if not isinstance(metadata, dict) or set(metadata) - {"conj", "neg"}:
            raise self.fail(f"unknown tensor metadata {metadata!r}")
        if metadata.get("neg"):
            t = -t
        if metadata.get("conj"):
            t = t.conj()
        return t

    # ------------------------------------------- torch._utils names (see torch_names)
    def rebuild_v1(self, storage: Any, offset: Any, size: Any, stride: Any) -> Tensor:
        return self.rebuild(storage, offset, size, stride)

    def rebuild_v2(self, storage: Any, offset: Any, size: Any, stride: Any,
                   requires_grad: Any, backward_hooks: Any = None,
                   metadata: Any = None) -> Tensor:
        return self.rebuild(storage, offset, size, stride, requires_grad, None, metadata)

    def rebuild_v3(self, storage: Any, offset: Any, size: Any, stride: Any,
                   requires_grad: Any, backward_hooks: Any, dtype: Any,
                   metadata: Any = None) -> Tensor:
        return self.rebuild(storage, offset, size, stride, requires_grad, dtype, metadata)

    def rebuild_parameter(self, data: Any, requires_grad: Any,
                          backward_hooks: Any = None, state: Any = None) -> Any:
        from ..nn.parameter import Parameter
        if not isinstance(data, Tensor):
            raise self.fail(f"a Parameter is rebuilt from {type(data).__name__}")
        if not isinstance(requires_grad, bool):
            raise self.fail(f"a Parameter's requires_grad is {type(requires_grad).__name__}")
        p = Parameter(data, requires_grad and data.dtype.kind in "fc")
        return set_state(p, state, self)

    def rebuild_from_type(self, func: Any, new_type: Any, args: Any, state: Any) -> Any:
        """torch's ``_rebuild_from_type_v2``: ``func(*args)`` as ``new_type`` (Tensor or
        Parameter; ``func`` is already an allow-listed object), plus Python attributes."""
        from ..nn.parameter import Parameter
        if not isinstance(args, tuple):
            raise self.fail("bad _rebuild_from_type_v2 arguments")
        out = func(*args)
        if new_type is Parameter and not isinstance(out, Parameter):
            out = Parameter(out, out.requires_grad)
        elif new_type not in (Tensor, Parameter):
            raise self.fail(f"a tensor subclass {new_type!r}, which omnitensor cannot "
                            f"rebuild")
        return set_state(out, state, self)

    def rebuild_from_cpu_tensor(self, data: Any, dtype: Any, device: Any,
                                requires_grad: Any) -> Tensor:
        if not isinstance(data, Tensor) or not isinstance(dtype, _dt.DType):
            raise self.fail("bad _rebuild_device_tensor_from_cpu_tensor arguments")
        target = resolve_location(str(device), self.map_location)
        t = data.to(device=target, dtype=dtype)
        if requires_grad and t.dtype.kind in "fc":
            t.requires_grad_(True)
        return t

    def rebuild_from_numpy(self, data: Any, dtype: Any, device: Any,
                           requires_grad: Any) -> Tensor:
        from ..core.ops.creation import tensor
        if not isinstance(data, np.ndarray) or data.dtype.kind not in "biufc":
            raise self.fail("bad _rebuild_device_tensor_from_numpy arguments")
        self.charge(data.nbytes, "a tensor from NumPy")
        cpu = tensor(data, dtype=dtype)
        return self.rebuild_from_cpu_tensor(cpu, dtype, device, requires_grad)


def set_state(obj: Any, state: Any, ctx: LoadContext) -> Any:
    """torch's ``_set_obj_state`` on a tensor, limited to plain attributes: a name the class
    defines (``_data``, ``grad_fn``, methods) is never overwritten from a file."""
    if not state:
        return obj
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    for part in (state, slots):
        if not part:
            continue
        if not isinstance(part, dict):
            raise ctx.fail(f"a tensor's Python state is {type(part).__name__}, not a dict")
        for k, v in part.items():
            if not isinstance(k, str) or hasattr(type(obj), k) or k.startswith("__"):
                raise ctx.fail(f"a tensor's Python state sets {k!r}, which is not a plain "
                               f"attribute")
            setattr(obj, k, v)
    return obj
