"""The Tensor: a backend array on one device, plus autograd bookkeeping.

This module holds the object itself (storage, metadata, conversions, autograd fields).
Math and shape methods (``x.exp()``, ``x + y``, ``x.sum(dim=1)``) are the functions of
``core/ops`` bound as methods in ``core/methods.py``, so each op is written once.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

import numpy as np

from .device import Device
from .dtypes import DType
from .grad_mode import INFERENCE_ACTIVE, INFERENCE_SEEN, _mode, is_grad_enabled
from .hooks import RemovableHandle
from .printing import tensor_repr
from .shape_util import Size, contiguous_strides

__all__ = ["Tensor"]

_new = object.__new__


class Tensor:
    """A multi-dimensional array on a device, with torch semantics and the Array API's
    array object interface. Create tensors with ``omnitensor.tensor``, ``zeros``,
    ``asarray``... rather than with this class."""

    # The hot fields are slots set by ``_make``; the rarely-set ones are class-level
    # defaults, shadowed per instance only when assigned (saves ~0.1 us per op).
    __slots__ = ("_data", "_device", "_dtype", "requires_grad", "grad_fn", "__dict__",
                 "__weakref__")
    grad: "Tensor | None" = None
    # NumPy scalars and arrays on the left of an operator defer to the Tensor's reflected
    # operator (``np.float32(2) * t`` is a Tensor, as in torch), instead of converting it
    __array_priority__ = 1000
    _output_nr = 0
    _base: "Tensor | None" = None   # the tensor owning the storage, for views and aliases
    _vc = 0                          # in-place version counter (kept on the base)
    _view_fn: Any = None             # replays this view from its base (autograd)
    _accumulator: Any = None         # this leaf's AccumulateGrad node (created on first use)
    _hooks: Any = None
    _post_hooks: Any = None
    _retains_grad = False
    _inference = False               # made inside inference_mode (read on the storage owner)

    # construction: ``Tensor(data)`` is bound by core/methods.py (it is ``omnitensor.tensor``)

    # --------------------------------------------------------------------- metadata
    @property
    def shape(self) -> Size:
        """The shape: a :class:`Size`, torch's tuple of ints with ``numel()``."""
        return Size(self._data.shape)

    @property
    def dtype(self) -> DType:
        return self._dtype

    @property
    def device(self) -> Device:
        return self._device

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        """Number of elements."""
        n = 1
        for s in self._data.shape:
            n *= s
        return n

    nelement = numel

    def element_size(self) -> int:
        return self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self._dtype.itemsize

    def stride(self, dim: int | None = None) -> Any:
        """Strides in elements, as torch."""
        s = self._device.backend.strides(self._data)
        return s if dim is None else s[dim]

    def is_contiguous(self) -> bool:
        shape = self._data.shape
        strides = self._device.backend.strides(self._data)
        return all(st == cs for st, cs, n in zip(strides, contiguous_strides(shape), shape)
                   if n != 1)

    def is_floating_point(self) -> bool:
        return self._dtype.kind == "f"

    def is_complex(self) -> bool:
        return self._dtype.kind == "c"

    @property
    def is_leaf(self) -> bool:
        """True unless the tensor was produced by a recorded op."""
        return self.grad_fn is None

    @property
    def is_cuda(self) -> bool:
        """True on a CUDA device, and under the torch alias on the device type ``cuda``
        names (as PyTorch's ROCm builds say for AMD GPUs)."""
        t = self._device.type
        if t == "cuda":
            return True
        if t == "cpu":
            return False
        from .accelerators import cuda_device_type
        return cuda_device_type() == t

    @property
    def _version(self) -> int:
        """The in-place version counter, shared by a tensor and its views."""
        base = self._base
        return (self if base is None else base)._vc

    def _bump_version(self) -> None:
        base = self._base
        root = self if base is None else base
        if INFERENCE_SEEN and root._inference and not _mode.inference:
            raise RuntimeError(_INFERENCE_INPLACE)
        root._vc += 1

    def is_inference(self) -> bool:
        """Whether this is an inference tensor (torch's rule): made inside
        ``inference_mode()`` (not ``inference_mode(False)``), or a view of one; a view of a
        normal tensor is normal wherever it was made."""
        base = self._base
        return (self if base is None else base)._inference

    # --------------------------------------------------------------- autograd state
    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables; "
                               "use .detach() to get a tensor that does not require grad")
        if requires_grad and self._dtype.kind not in "fc":
            raise RuntimeError(f"only Tensors of floating point and complex dtype can require "
                               f"gradients, got {self._dtype.name}")
        if requires_grad and INFERENCE_SEEN and self.is_inference() and not _mode.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self.requires_grad = bool(requires_grad)
        return self

    def detach(self) -> "Tensor":
        """A tensor sharing data (and the version counter) with no graph history."""
        return self._alias()

    def detach_(self) -> "Tensor":
        self.grad_fn = None
        self.requires_grad = False
        return self

    def _detached_copy(self) -> "Tensor":
        """A copy with its own memory and no history (a leaf's new ``.grad``)."""
        return _make(self._device.backend.copy(self._data), self._device, self._dtype)

    def _alias(self) -> "Tensor":
        t = _make(self._data, self._device, self._dtype)
        t._base = self if self._base is None else self._base
        return t

    @property
    def data(self) -> "Tensor":
        """A detached alias (torch's ``.data``); assigning replaces the storage."""
        return self._alias()

    @data.setter
    def data(self, value: "Tensor") -> None:
        self._data = value._data
        self._device = value._device
        self._dtype = value._dtype
        self._bump_version()

    def register_hook(self, hook: Callable[["Tensor"], "Tensor | None"]) -> Any:
        """``hook(grad)`` runs when this tensor's gradient is computed; a returned tensor
        replaces the gradient. Returns a handle with ``remove()``."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self.grad_fn is not None:
            return self.grad_fn._add_pre_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return RemovableHandle(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[["Tensor"], None]) -> Any:
        """``hook(tensor)`` runs after the gradient was accumulated into this leaf's
        ``.grad`` (data-parallel training all-reduces gradients from here)."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(hook)
        return RemovableHandle(self._post_hooks, hook)

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if self.grad_fn is None:
            if not self.requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retains_grad:
            return
        self._retains_grad = True
        import weakref
        ref = weakref.ref(self)

        def keep(grad: "Tensor") -> None:
            t = ref()
            if t is not None:
                t.grad = grad.detach() if t.grad is None else t.grad + grad.detach()
        self.grad_fn._add_pre_hook(self._output_nr, keep)

    @property
    def retains_grad(self) -> bool:
        return bool(self._retains_grad)

    # ------------------------------------------------------------------ conversion
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The values as a NumPy array (shares memory on ``cpu``, as torch does)."""
        fn = self.grad_fn  # a tensor carrying forward-AD tangents only may (torch)
        if self.requires_grad and not force and is_grad_enabled() and not (
                fn is not None and fn._fw_only):
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return host_array(self)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        arr = host_array(self)
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        return arr.copy() if copy else arr

    def item(self) -> Any:
        """The single value as a Python scalar (waits for the device)."""
        if self.numel() != 1:
            raise ValueError(f"item(): a Tensor with {self.numel()} elements cannot be "
                             f"converted to a Python scalar")
        return host_array(self).reshape(()).item()

    def tolist(self) -> Any:
        return host_array(self).tolist()

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self.numel()} elements is "
                               f"ambiguous; use .any() or .all()")
        return bool(self.item())

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if self._dtype.kind not in "biu":  # a bool is 0 or 1 here, as in torch
            raise TypeError(f"only integer tensors can be used as an index, got "
                            f"{self._dtype.name}")
        return int(self._scalar("index"))

    def _scalar(self, what: str) -> Any:
        if self.numel() != 1:
            raise TypeError(f"only one-element tensors can be converted to Python {what}s, "
                            f"got {self.numel()} elements")
        return self.item()

    def __len__(self) -> int:
        if not self._data.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator["Tensor"]:
        if not self._data.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return tensor_repr(self)

    @classmethod
    def __torch_function__(cls, func: Callable[..., Any], types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        """torch's default ``__torch_function__``: calls ``func`` with the protocol off and
        hands Tensor results back as ``cls``; NotImplemented when some type in ``types`` is
        not a base of ``cls``. omnitensor's own ops never call it: only
        ``handle_torch_function`` (core/torch_function.py) and subclasses' ``super()``."""
        from .torch_function import DisableTorchFunctionSubclass, convert_result
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with DisableTorchFunctionSubclass():
            return convert_result(func(*args, **(kwargs or {})), cls)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self.numel() == 1 and spec:
            return format(self.item(), spec)
        return repr(self)

    def __reduce_ex__(self, protocol: int) -> Any:
        raise TypeError("omnitensor tensors are not pickled (a pickle can run code when "
                        "loaded); use omnitensor.save/omnitensor.load (safetensors)")

    # ---------------------------------------------------------------------- DLPack
    def _check_dlpack_dtype(self) -> None:
        if self._dtype.compute is not self._dtype:  # a widened array would pass as float32
            raise BufferError(
                f"DLPack export of {self._dtype.name} tensors is not supported (the array "
                f"libraries omnitensor binds have no bfloat16 DLPack); export "
                f"t.float() and convert back with .bfloat16() on the other side")

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any:
        self._check_dlpack_dtype()
        data = self._data
        if not hasattr(data, "__dlpack__"):
            # declared in the backend contract; its default raises a clear BufferError
            return self._device.backend.dlpack_export(data, copy=copy, dl_device=dl_device,
                                                      max_version=max_version)
        kwargs: dict[str, Any] = {}
        if stream is not None:
            kwargs["stream"] = stream
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        try:
            return data.__dlpack__(**kwargs)
        except TypeError:
            return data.__dlpack__()

    def __dlpack_device__(self) -> tuple[int, int]:
        self._check_dlpack_dtype()  # consumers ask for the device first (torch.from_dlpack)
        data = self._data
        if not hasattr(data, "__dlpack_device__"):
            device = getattr(self._device.backend, "dlpack_device", None)
            if device is None:
                raise BufferError(f"the {self._device.type} backend has no DLPack device")
            return device(data)
        return data.__dlpack_device__()

    # ------------------------------------------------------------------ Array API
    def __array_namespace__(self, *, api_version: str | None = None) -> Any:
        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
            raise ValueError(f"unsupported Array API version {api_version!r}; omnitensor "
                             f"implements 2024.12")
        import omnitensor
        return omnitensor

    def to_device(self, device: Any, /, *, stream: Any = None) -> "Tensor":
        return self.to(device)

    @property
    def mT(self) -> "Tensor":
        """Transpose of the last two axes."""
        if self.ndim < 2:
            raise ValueError(f"mT needs at least 2 dimensions, got a {self.ndim}-d tensor")
        return self.transpose(-2, -1)

    @property
    def T(self) -> "Tensor":
        """Reverse all axes (for 2-D: the transpose)."""
        if self.ndim > 2:
            raise ValueError(f"T is only defined for tensors with at most 2 dimensions, got "
                             f"{self.ndim}; use .mT or .permute(...)")
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mH(self) -> "Tensor":
        return self.mT.conj()

    @property
    def H(self) -> "Tensor":
        return self.T.conj()


def host_array(t: Tensor) -> np.ndarray:
    """``t``'s values as a NumPy array of its dtype. A backend whose library has no
    bfloat16 holds it widened to float32 (``Backend.bfloat16_storage``): that array is
    narrowed here (exactly: the values are bfloat16 values)."""
    arr = t._device.backend.to_numpy(t._data)
    d = t._dtype
    if d.compute is not d and arr.dtype != d.np:
        arr = arr.astype(d.np)
    return arr


def _make(data: Any, device: Device, dtype: DType) -> Tensor:
    """Wrap a backend array (hot path: no checks)."""
    t = _new(Tensor)
    t._data = data
    t._device = device
    t._dtype = dtype
    t.requires_grad = False
    t.grad_fn = None
    if INFERENCE_ACTIVE and _mode.inference:  # one global read outside inference mode
        t._inference = True
    return t


_INFERENCE_INPLACE = ("Inplace update to inference tensor outside InferenceMode is not "
                      "allowed.You can make a clone to get a normal tensor before doing "
                      "inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                      "details.")
