"""Moving a torch sample into the face, and both sides' outputs into one comparable form.

:class:`Converter` maps a sample's tensors (input, args, kwargs, nested lists, tuples and
dicts) to face tensors on the device under test, and torch's dtypes, devices, memory formats
and sizes to the face's. :func:`canon` turns an output of either library into plain data:
:class:`Arr` for a tensor, lists for sequences, Python numbers, ``("dtype", name)``.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .oracle import dtype_name, torch

#: dtypes NumPy cannot hold natively: read through float32 / complex64, cast back after
_WIDENED = {"bfloat16": "float32", "complex32": "complex64"}


class Unconvertible(Exception):
    """A sample holds something the face has no counterpart for (a sparse tensor, a
    quantized dtype, a generator): the sample is skipped, not failed."""


def torch_array(t: Any) -> np.ndarray:
    """A torch tensor's values as a NumPy array (bfloat16 widened to float32)."""
    t = t.detach()
    if t.layout != torch().strided:
        raise Unconvertible(f"a {t.layout} tensor")
    if t._is_zerotensor():  # torch's gradient of a constant (sgn of complex): all zeros
        t = torch().zeros(t.shape, dtype=t.dtype)
    t = t.resolve_conj().resolve_neg()
    name = dtype_name(t.dtype)
    if name in _WIDENED:
        t = t.to(getattr(torch(), _WIDENED[name]))
    elif t.is_quantized:
        raise Unconvertible(f"a quantized {name} tensor")
    return np.asarray(t.cpu().numpy())


class Converter:
    """torch objects -> the face's, on ``device``. With ``grad``, a tensor that requires
    grad becomes a leaf that requires grad; :attr:`pairs` holds each (torch, face) pair."""

    def __init__(self, ns: Any, device: str, grad: bool = False) -> None:
        self.ns, self.device, self.grad = ns, device, grad
        self.pairs: list[tuple[Any, Any]] = []
        self._memo: dict[int, Any] = {}  # one face tensor per torch tensor object

    def tensor(self, t: Any) -> Any:
        if id(t) not in self._memo:
            self._memo[id(t)] = self._new(t)
        return self._memo[id(t)]

    def _new(self, t: Any) -> Any:
        if t.layout in _sparse_layouts():
            return self._sparse(t)
        name = dtype_name(t.dtype)
        dt = getattr(self.ns, name, None)
        if dt is None:
            raise Unconvertible(f"dtype {name}, which the face lacks")
        want_grad = self.grad and bool(t.requires_grad)
        out = self._partial_view(t, dt)
        if out is None:
            out = self.ns.tensor(torch_array(t), device=self.device)
            if out.dtype != dt:
                out = out.to(dt)
        if want_grad:
            out.requires_grad_(True)
            self.pairs.append((t, out))
        return out

    def _partial_view(self, t: Any, dt: Any) -> Any:
        """A contiguous view of a larger torch storage (``base[5:15]``) as the same view of
        a face storage holding the same elements, so ops that address the storage
        (``as_strided``, ``storage_offset``) see what torch's do; ``None`` for any other
        tensor (it is copied: other layouts are materialized)."""
        if t.layout != torch().strided or t.is_conj() or t.is_neg() or \
                not t.is_contiguous() or not t.numel():
            return None
        held = t.untyped_storage().nbytes() // t.element_size()
        if t.storage_offset() == 0 and held == t.numel():
            return None
        flat = torch().as_strided(t.detach(), (held,), (1,), 0)
        store = self.ns.tensor(torch_array(flat), device=self.device)
        if store.dtype != dt:
            store = store.to(dt)
        return store.as_strided(tuple(t.shape), t.stride(), t.storage_offset())

    def _sparse(self, t: Any) -> Any:
        """A torch COO/CSR/CSC tensor as the face's, from its converted components (the
        stored values as a plain tensor: a sparse input's gradient is not compared)."""
        if self.grad and t.requires_grad:
            raise Unconvertible(f"the gradient of a {t.layout} input")
        tm, ns = torch(), self.ns
        t = t.detach()
        if t.layout == tm.sparse_coo:
            t = t if t.is_coalesced() else t.coalesce()
            coo = (t.indices(), t.values())  # held: the memo is keyed by id()
            idx, vals = (Converter(ns, self.device)(p) for p in coo)
            return ns.sparse_coo_tensor(idx, vals, tuple(t.shape))
        if t.dim() != 2 or t.values().dim() != 1:
            raise Unconvertible(f"a batched or hybrid {t.layout} tensor")
        csr = t.layout == tm.sparse_csr
        parts = ((t.crow_indices(), t.col_indices()) if csr else
                 (t.ccol_indices(), t.row_indices())) + (t.values(),)
        ptr, plain, vals = (Converter(ns, self.device)(p) for p in parts)
        make = ns.sparse_csr_tensor if csr else ns.sparse_csc_tensor
        return make(ptr, plain, vals, tuple(t.shape))

    def module(self, m: Any) -> Any:
        """A stateless torch module in a sample (``distance_function=nn.PairwiseDistance()``)
        as the face's module of the same class and settings."""
        if any(True for _ in m.parameters()) or any(True for _ in m.buffers()):
            raise Unconvertible(f"a torch {type(m).__name__} module with parameters")
        cls = getattr(self.ns.nn, type(m).__name__, None)
        if cls is None:
            raise Unconvertible(f"torch.nn.{type(m).__name__}, which the face lacks")
        new = cls()
        for k, v in vars(m).items():  # its settings (PairwiseDistance: norm, eps, keepdim)
            if not k.startswith("_") and isinstance(v, (bool, int, float, str)) and \
                    hasattr(new, k):
                setattr(new, k, v)
        return new

    def __call__(self, obj: Any) -> Any:
        tm = torch()
        if isinstance(obj, tm.Tensor):
            return self.tensor(obj)
        if isinstance(obj, tm.dtype):
            dt = getattr(self.ns, dtype_name(obj), None)
            if dt is None:
                raise Unconvertible(f"dtype {obj}")
            return dt
        if isinstance(obj, tm.device):
            return self.ns.device(self.device)  # the sample's device is the one under test
        if isinstance(obj, tm.Size):
            return self.ns.Size(tuple(obj))
        if isinstance(obj, (tm.memory_format, tm.layout)):
            found = getattr(self.ns, str(obj).rpartition(".")[2], None)
            if found is None:
                raise Unconvertible(f"{obj}")
            return found
        if isinstance(obj, tm.Generator):
            raise Unconvertible("a torch.Generator argument")
        if isinstance(obj, tm.nn.Module):
            return self.module(obj)
        if isinstance(obj, list):
            return [self(v) for v in obj]
        if isinstance(obj, tuple):
            vals = [self(v) for v in obj]
            return type(obj)(*vals) if hasattr(obj, "_fields") else tuple(vals)
        if isinstance(obj, dict):
            return {k: self(v) for k, v in obj.items()}
        return obj


def _sparse_layouts() -> tuple[Any, ...]:
    tm = torch()
    return (tm.sparse_coo, tm.sparse_csr, tm.sparse_csc)


@dataclasses.dataclass
class Arr:
    """A tensor in plain form: values (bfloat16 widened), its dtype name and shape."""
    values: np.ndarray
    dtype: str
    shape: tuple[int, ...]


def _face_array(t: Any, ns: Any) -> Arr:
    name = t.dtype.name
    a = t.detach()
    if name in _WIDENED:
        a = a.to(getattr(ns, _WIDENED[name]))
    arr = np.asarray(a.to("cpu").numpy())
    return Arr(arr, name, tuple(int(s) for s in t.shape))


def canon(obj: Any, ns: Any) -> Any:
    """An output of torch or of the face in plain, comparable form."""
    tm = torch()
    if isinstance(obj, tm.Tensor):
        if obj.layout in _sparse_layouts():  # its layout, then its values
            return [("layout", str(obj.layout).rpartition(".")[2]), canon(obj.to_dense(), ns)]
        if obj.layout != tm.strided:
            return ("other", f"a {obj.layout} tensor")
        return Arr(torch_array(obj), dtype_name(obj.dtype), tuple(obj.shape))
    if isinstance(obj, ns.Tensor):
        layout = str(obj.layout).rpartition(".")[2]
        if layout != "strided":
            return [("layout", layout), canon(obj.to_dense(), ns)]
        return _face_array(obj, ns)
    if isinstance(obj, (tm.dtype, ns.DType)):
        return ("dtype", dtype_name(obj))
    if isinstance(obj, (tm.device, ns.Device)):
        return ("device",)  # either side's own device: not compared
    if isinstance(obj, (bool, int, float, complex, np.generic)):
        return obj.item() if isinstance(obj, np.generic) else obj
    if isinstance(obj, (list, tuple)):  # torch.Size and return types too
        return [canon(v, ns) for v in obj]
    if obj is None or isinstance(obj, str):
        return obj
    return ("other", type(obj).__name__)


def tensors_in(obj: Any, kind: Any) -> list[Any]:
    """Every ``kind`` tensor in ``obj`` (nested lists, tuples, dicts), in order."""
    if isinstance(obj, kind):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in tensors_in(v, kind)]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in tensors_in(v, kind)]
    return []


def to_float64(obj: Any, memo: dict[int, Any] | None = None) -> Any:
    """A copy of a torch sample part with float32/16 tensors in float64 (the reference a
    float32 result is judged against when it differs from torch's float32 one); one copy
    per tensor object, leaves that require grad as the originals do."""
    tm = torch()
    memo = {} if memo is None else memo
    if isinstance(obj, tm.Tensor):
        wide = {True: tm.complex128, False: tm.float64}[obj.is_complex()]
        if not (obj.is_floating_point() or obj.is_complex()) or obj.dtype == wide:
            return obj
        if id(obj) not in memo:
            memo[id(obj)] = obj.detach().to(wide).requires_grad_(obj.requires_grad)
        return memo[id(obj)]
    if isinstance(obj, list):
        return [to_float64(v, memo) for v in obj]
    if isinstance(obj, tuple):
        vals = [to_float64(v, memo) for v in obj]
        return type(obj)(*vals) if hasattr(obj, "_fields") else tuple(vals)
    if isinstance(obj, dict):
        return {k: to_float64(v, memo) for k, v in obj.items()}
    return obj
