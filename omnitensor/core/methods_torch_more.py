"""More of torch's Tensor methods, each family bound by one rule:

* the in-place views (``squeeze_``, ``unsqueeze_``, ``transpose_``, ``swapaxes_``,
  ``swapdims_``, ``t_``, ``as_strided_``): the view of the same name, whose shape, strides and
  history the tensor takes over (:func:`inplace_view`);
* torch's removed methods (``eig``, ``lstsq``, ``solve``, ``symeig``, ``reinforce``): torch's
  own RuntimeError, naming the replacement (:func:`removed`);
* layout and autograd queries (``dim_order``, ``output_nr``, ``name``, ``volatile``,
  ``grad_dtype``; ``is_pinned``/``pin_memory`` from ``core/pinned.py``) and the deprecated
  out-of-place ``resize``/``resize_as``,
  ``as_subclass`` and ``hash_tensor``.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from .graph import needs_grad
from .shape_util import normalize_axes
from .tensor import Tensor, host_array
from . import pinned
from .ops import creation, join, shape as sh, storage
from .ops.inplace import _graph_alias, check_leaf


def inplace_view(view: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    """torch's in-place view ``name``: ``x.name(*args)`` makes ``x`` the view ``view(x,
    *args)`` (shape, strides, autograd history), and returns ``x``. A leaf that requires
    grad is refused in grad mode, as torch refuses it."""
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if needs_grad(self):
            check_leaf(self)
        new = view(self, *args, **kwargs)
        self._data = new._data
        self.grad_fn, self._output_nr = new.grad_fn, new._output_nr
        self.requires_grad = new.requires_grad
        if self._base is not None:  # a view of a base: the new view replays from it
            self._view_fn = new._view_fn
        return self
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"torch's ``{name}``: ``{name[:-1]}``, in place (the tensor becomes it)."
    return method


INPLACE_VIEWS: dict[str, Callable[..., Tensor]] = {
    "squeeze_": sh.squeeze_torch, "unsqueeze_": sh.unsqueeze, "transpose_": sh.transpose,
    "swapaxes_": sh.transpose, "swapdims_": sh.transpose, "t_": sh.t,
    "as_strided_": storage.as_strided,
}

_DEPRECATED = "This function was deprecated since version 1.9 and is now removed. "

#: torch's removed methods and the first line of the error torch raises for each
REMOVED = {
    "eig": _DEPRECATED + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or "
                         "`cdouble` rather than real tensors mimicking complex tensors.",
    "lstsq": _DEPRECATED + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.",
    "solve": _DEPRECATED + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. "
                           "`torch.linalg.solve` has its arguments reversed and does not "
                           "return the LU factorization.",
    "symeig": _DEPRECATED + "The default behavior has changed from using the upper "
                            "triangular portion of the matrix by default to using the "
                            "lower triangular portion.",
    "reinforce": "reinforce() was removed.\nUse torch.distributions instead.",
}


def removed(name: str, message: str) -> Callable[..., Any]:
    """A method torch removed: it raises torch's RuntimeError."""
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(message)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Removed from torch: raises torch's error ({message.splitlines()[0]})"
    return method


def dim_order(self: Tensor, *, ambiguity_check: Any = False) -> tuple[int, ...]:
    """torch's ``dim_order()``: the dimensions from outermost to innermost in memory (by
    stride, largest first; ties keep their order)."""
    strides = self.stride()
    return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))


def _resized(self: Tensor, sizes: tuple, name: str) -> Tensor:
    """torch's autograd ``Resize``: a new shape of the same number of elements."""
    warnings.warn(f"non-inplace {name} is deprecated", stacklevel=3)
    shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) \
        else tuple(sizes)
    n = int(np.prod(shape)) if shape else 1
    if n != self.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, shape))} ({n} elements in total), but "
            f"the given tensor has a size of {'x'.join(map(str, self.shape))} "
            f"({self.numel()} elements). autograd's resize can only change the shape of a "
            f"given tensor, while preserving the number of elements. ")
    return self.contiguous().reshape(shape)


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """torch's deprecated out-of-place ``resize``: ``self`` reshaped to ``sizes``, which
    must hold as many elements (torch's autograd ``Resize``)."""
    return _resized(self, sizes, "resize")


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """torch's deprecated out-of-place ``resize_as``: :func:`resize` to ``tensor``'s shape."""
    return _resized(self, tuple(tensor.shape), "resize_as")


def as_subclass(self: Tensor, cls: type) -> Tensor:
    """torch's ``as_subclass(cls)``: a ``cls`` instance sharing ``self``'s data and staying
    attached to its autograd graph; ``cls`` must subclass Tensor."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass: expected a subclass of torch.Tensor, got {cls!r}")
    alias = _graph_alias(self)
    alias.__class__ = cls
    return alias


_HASH_BITS = {"f": np.float64, "c": np.complex128, "b": np.uint64, "i": np.int64,
              "u": np.uint64}


def hash_tensor(self: Tensor, dim: Any = None, *, keepdim: bool = False,
                mode: int = 0) -> Tensor:
    """torch's ``hash_tensor``: the xor of the elements' 64-bit patterns (floats widened to
    float64, integers to 64 bits) over ``dim`` (all by default), as uint64."""
    if mode != 0:
        raise ValueError(f"hash_tensor: only mode=0 (xor reduction) is supported, got {mode}")
    a = host_array(self)
    wide = a.astype(_HASH_BITS[a.dtype.kind]).view(np.uint64)
    if a.dtype.kind == "c":  # real and imaginary parts each
        wide = wide.reshape(a.shape + (2,))
        wide = np.bitwise_xor.reduce(wide, axis=-1)
    # a 0-d tensor's one element is its own hash over dim 0 / -1, as for torch's reductions
    axes = normalize_axes(None if dim == () else dim, a.ndim, op="hash_tensor")
    axes = axes if a.ndim else ()
    out: Any = wide
    if axes:
        out = np.bitwise_xor.reduce(wide, axis=axes, keepdims=True)
        out = out if keepdim else out.reshape([n for i, n in enumerate(out.shape)
                                               if i not in axes])
    return creation.asarray(np.asarray(out, dtype=np.uint64), device=self.device)


def split(self: Tensor, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """torch's ``x.split(split_size, dim=0)``: pieces of ``split_size`` along ``dim`` (the
    last smaller), or of the sizes in a list."""
    return join.split(self, split_size, dim)


#: torch's moves to device types omnitensor has no backend for, and the error a torch
#: build without them raises
ABSENT_DEVICES = {
    "xpu": (AssertionError, "Torch not compiled with XPU enabled"),
    "mtia": (AssertionError, "Torch not compiled with MTIA enabled"),
    "ipu": (RuntimeError, "PyTorch is not linked with support for ipu devices"),
}


def _absent_device(name: str, error: type, message: str) -> Callable[..., Any]:
    def move(self: Tensor, device: Any = None, non_blocking: bool = False, *,
             memory_format: Any = None) -> Tensor:
        raise error(message)
    move.__name__ = move.__qualname__ = name
    move.__doc__ = f"torch's ``{name}()``: refused, as torch without {name} refuses it."
    return move


def _volatile(self: Tensor) -> bool:
    warnings.warn("volatile was removed (Variable.volatile is always False)", stacklevel=2)
    return False


def record_stream(self: Tensor, stream: Any) -> None:
    """torch's ``Tensor.record_stream``: mark the tensor's memory in use by work queued on
    ``stream``. Every omnitensor device runs its ops through one in-order queue (all its
    streams are that queue, ``omnitensor/streams.py``), and freed memory is reused only by
    work queued after the free, which runs after the stream's work: nothing to record. As
    torch, a cpu tensor has no streams and a stream of another device is refused."""
    dev = getattr(stream, "device", None)
    if self.device.type == "cpu":
        raise NotImplementedError("record_stream: cpu tensors have no streams (as in torch); "
                                  "it applies to device tensors")
    if dev is None or not hasattr(stream, "wait_stream"):
        raise RuntimeError(f"record_stream: expected a Stream, got {type(stream).__name__}")
    if dev != self.device:
        raise RuntimeError(f"record_stream: the stream is on {dev}, the tensor on "
                           f"{self.device}; record a stream of the tensor's device")


def bind(T: Any) -> None:
    """Bind this module's methods and properties onto ``T`` (the Tensor class)."""
    for name, view in INPLACE_VIEWS.items():
        setattr(T, name, inplace_view(view, name))
    for name, message in REMOVED.items():
        setattr(T, name, removed(name, message))
    for fn in (dim_order, resize, resize_as, as_subclass, hash_tensor, split, record_stream):
        setattr(T, fn.__name__, fn)
    T.slice_inverse = storage.slice_inverse
    T.is_pinned, T.pin_memory = pinned.is_pinned, pinned.pin_memory
    T.output_nr = property(lambda self: self._output_nr,
                           doc="Which output of its ``grad_fn`` this tensor is.")
    T.name = property(lambda self: None, doc="torch's ``name``: None (no named tensors).")
    T.volatile = property(_volatile, doc="Removed from torch: always False, with a warning.")
    for name, (error, message) in ABSENT_DEVICES.items():
        setattr(T, name, _absent_device(name, error, message))
    T.is_xla = property(lambda self: False, doc="False: no XLA device here.")
    T.is_maia = property(lambda self: False, doc="False: no MAIA device here.")
    T.grad_dtype = property(lambda self: self.dtype,
                            doc="The dtype of this tensor's gradient: its own dtype.")
