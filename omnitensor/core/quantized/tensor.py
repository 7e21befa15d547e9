"""Quantized tensors: a Tensor subclass made of an ordinary integer tensor and its
quantization parameters, as torch's (``torch.ao``) quantized tensors are.

A :class:`QuantizedTensor` holds ``_int`` (the integer representation: an int8, uint8 or
int32 tensor on any device) and either a per-tensor ``_scale`` (float) and ``_zero_point``
(int) or per-channel ``_scales`` (float64), ``_zero_points`` (int64) and ``_axis``. Its value
is ``(int - zero_point) * scale``. Its dtype is the quantized dtype (``qint8``, ``quint8``,
``qint32``). Like torch's, it takes part in few ops (``dequantize()``, ``int_repr()``, the
``q_*`` accessors, moves, clones, the quantized pools and batch norm): a dense op given one
is refused with a clear error (it has no dense float storage) instead of computing on the
integers.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..graph import no_grad_ctx
from ..legacy import Size
from ..sparse.tensor import _calling_op
from ..tensor import Tensor

__all__ = ["qscheme", "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
           "per_channel_symmetric", "per_channel_affine_float_qparams", "QuantizedTensor",
           "make_per_tensor", "make_per_channel"]

_new = object.__new__


class qscheme:  # torch's lower-case class name
    """torch's quantization scheme objects (``torch.per_tensor_affine``...): interned and
    named (a torch checkpoint names them ``torch.<name>``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"omnitensor.{self.name}"

    __str__ = __repr__

    def __reduce__(self) -> str:
        return self.name  # pickled as the module-level global of that name


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")


class QuantizedTensor(Tensor):
    """A quantized tensor (see the module doc). Make one with ``quantize_per_tensor`` or
    ``quantize_per_channel``."""

    _int: Tensor
    _qscheme: qscheme
    _scale: float
    _zero_point: int
    _scales: Tensor | None
    _zero_points: Tensor | None
    _axis: int

    is_quantized = True

    @property
    def _data(self) -> Any:
        op = _calling_op()
        name = f"{op}()" if op else "this operation"
        raise RuntimeError(f"{name} does not support quantized tensors (dtype "
                           f"{self._dtype.name}); call .dequantize() for a float tensor "
                           f"first (quantized tensors: docs/quantized.md)")

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self) -> Size:
        return self._int.shape

    @property
    def ndim(self) -> int:
        return self._int.ndim

    def dim(self) -> int:
        return self._int.ndim

    ndimension = dim

    def numel(self) -> int:
        return self._int.numel()

    nelement = numel

    def __len__(self) -> int:
        return len(self._int)

    def stride(self, dim: int | None = None) -> Any:
        return self._int.stride(dim)

    def is_contiguous(self, memory_format: Any = None) -> bool:
        return self._int.is_contiguous()

    def element_size(self) -> int:
        return self._int.element_size()

    @property
    def requires_grad(self) -> bool:
        return False

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")

    @property
    def grad_fn(self) -> Any:
        return None

    @grad_fn.setter
    def grad_fn(self, value: Any) -> None:
        if value is not None:
            raise RuntimeError("a quantized tensor has no autograd history")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    # ------------------------------------------------------ structure and moves
    def _with_int(self, rep: Tensor) -> "QuantizedTensor":
        """This tensor's quantization parameters (on ``rep``'s device) over ``rep``."""
        if self._scales is None:
            return make_per_tensor(rep, self._dtype, self._scale, self._zero_point)
        dev = rep.device
        return make_per_channel(rep, self._dtype, self._scales.to(dev),
                                self._zero_points.to(dev), self._axis)  # type: ignore[union-attr]

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """Moved to another device (the quantized dtype is kept; ``.to(float)`` is refused
        as torch refuses it: use ``dequantize()``)."""
        from ..ops.conversion import to as _to
        with no_grad_ctx():
            rep = _to(self._int, *args, **kwargs)
        if rep.dtype is not self._int.dtype:
            raise RuntimeError(f"to({rep.dtype}): a quantized tensor changes dtype only "
                               f"through .dequantize() or quantize_per_tensor()")
        return self if rep is self._int else self._with_int(rep)

    def cpu(self, memory_format: Any = None) -> Tensor:
        return self.to("cpu")

    def clone(self, *, memory_format: Any = None) -> Tensor:
        return self._with_int(self._int.clone())

    def contiguous(self, memory_format: Any = None) -> Tensor:
        return self if self._int.is_contiguous() else self._with_int(self._int.contiguous())

    def _view_op(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """A shape op (indexing, reshape, transpose...) on the integers, same parameters:
        per-tensor only (a per-channel tensor's axis would have to follow the op)."""
        if self._scales is not None:
            raise RuntimeError(f"{name}() of a per-channel quantized tensor is not supported; "
                               f"dequantize() it first")
        rep = getattr(self._int, name)(*args, **kwargs)
        if isinstance(rep, (tuple, list)):  # split, chunk, unbind
            return tuple(make_per_tensor(r, self._dtype, self._scale, self._zero_point)
                         for r in rep)
        return make_per_tensor(rep, self._dtype, self._scale, self._zero_point)

    def __getitem__(self, index: Any) -> Any:
        return self._view_op("__getitem__", index)

    def detach(self) -> Tensor:
        return self

    def detach_(self) -> Tensor:
        return self

    def numpy(self, *, force: bool = False) -> np.ndarray:
        raise TypeError(f"can't convert a quantized tensor ({self._dtype.name}) to numpy; "
                        f"use .dequantize() or .int_repr() first")

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return self.numpy()

    def tolist(self) -> Any:
        raise TypeError("tolist() of a quantized tensor: use .dequantize().tolist()")

    def __repr__(self) -> str:
        from .ops import dequantize
        head = repr(dequantize(self))
        body = head[:head.rindex(")")] if head.endswith(")") else head
        for tail in (f", device='{self.device}'", ", dtype=omnitensor.float32"):
            body = body.replace(tail, "")
        pad = " " * len("tensor(")
        out = f"{body}, size={tuple(self.shape)}, dtype=omnitensor.{self._dtype.name}"
        if self._device.type != "cpu":
            out += f", device='{self._device}'"
        out += f",\n{pad}quantization_scheme={self._qscheme!r}"
        if self._scales is None:
            return out + f", scale={self._scale}, zero_point={self._zero_point})"
        s = repr(self._scales.cpu()).replace("\n", "\n" + pad)
        z = repr(self._zero_points.cpu()).replace("\n", "\n" + pad)  # type: ignore[union-attr]
        return out + f",\n{pad}scale={s},\n{pad}zero_point={z}, axis={self._axis})"

    __str__ = __repr__


def _bind_view_ops() -> None:
    """torch's shape ops on a per-tensor quantized tensor (one rule: ``_view_op``)."""
    def method(name: str) -> Any:
        def op(self: QuantizedTensor, *args: Any, **kwargs: Any) -> Any:
            return self._view_op(name, *args, **kwargs)
        op.__name__ = name
        op.__doc__ = f"``{name}`` of the integers, with the same quantization parameters."
        return op
    for name in _VIEW_OPS:
        setattr(QuantizedTensor, name, method(name))


#: the shape ops a per-tensor quantized tensor takes (as torch's do)
_VIEW_OPS = ("reshape", "view", "transpose", "permute", "flatten", "squeeze", "unsqueeze",
             "t", "select", "narrow", "expand", "flip", "unflatten", "movedim", "split",
             "chunk", "unbind")
_bind_view_ops()


def _base(rep: Tensor, dtype: Any, scheme: qscheme) -> QuantizedTensor:
    t = _new(QuantizedTensor)
    t._device = rep.device
    t._dtype = dtype
    t._int = rep
    t._qscheme = scheme
    return t


def make_per_tensor(rep: Tensor, dtype: Any, scale: float, zero_point: int) -> QuantizedTensor:
    """A per-tensor affine quantized tensor from trusted parts (callers checked them)."""
    t = _base(rep, dtype, per_tensor_affine)
    t._scale, t._zero_point = float(scale), int(zero_point)
    t._scales = t._zero_points = None
    t._axis = 0
    return t


def make_per_channel(rep: Tensor, dtype: Any, scales: Tensor, zero_points: Tensor,
                     axis: int) -> QuantizedTensor:
    """A per-channel affine quantized tensor from trusted parts (float64 scales, int64
    zero points, one per index of dimension ``axis``)."""
    t = _base(rep, dtype, per_channel_affine)
    t._scale, t._zero_point = 0.0, 0
    t._scales, t._zero_points, t._axis = scales, zero_points, int(axis)
    return t
