"""In-place ops under autograd (torch's rebase and CopySlices).

An in-place op on a tensor that takes part in the graph is computed out of place from a
clone of the old value (so a backward formula that needs the old value still has it), the
result is written into the tensor's storage (views see it), and the tensor's ``grad_fn``
is moved to the new node. When the tensor is a view of a base in the graph, the base's
history is updated too: the base becomes "old base with this region replaced", whose
backward sends the region's gradient to the view's op and the rest to the old base.
Forward-AD tangents follow the same values: the new value's tangent is written into the
tensor's tangent (``forward_ad.after_inplace``); under ``no_grad`` (reached only while a
dual level is active) only that happens, and the reverse graph is left as it was.
"""
from __future__ import annotations

from typing import Any, Callable

from .. import dtypes as _dt
from .. import forward_ad
from ..graph import _mode, edge_of, needs_grad, no_grad_ctx, record
from ..tensor import Tensor, _make

__all__ = ["apply_inplace", "inplace_method", "check_leaf"]


def check_leaf(x: Tensor) -> None:
    """torch's refusal of an in-place op on a leaf that requires grad (in grad mode)."""
    if x.grad_fn is None and x.requires_grad and _mode.grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def apply_inplace(x: Tensor, compute: Callable[[Tensor], Tensor], name: str) -> Tensor:
    """Make ``x`` hold ``compute(old x)`` in place, recording the graph."""
    if not _mode.grad:  # no_grad inside a dual level: tangents only
        new = compute(_graph_alias(x))
        _write_storage(x, new)
        forward_ad.after_inplace(x, new)
        return x
    base = x._base
    if base is not None and x._view_fn is not None:
        return _inplace_on_view(x, base, compute)
    old = _graph_alias(x).clone()  # differentiable copy of the old value
    new = compute(old)
    _write_storage(x, new)
    if _in_reverse(new) or not _in_reverse(x):
        x.grad_fn = new.grad_fn
        x._output_nr = new._output_nr
        x.requires_grad = new.requires_grad
    if _mode.fw_levels:
        forward_ad.after_inplace(x, new)
    return x


def _in_reverse(t: Tensor) -> bool:
    return t.requires_grad and not (t.grad_fn is not None and t.grad_fn._fw_only)


def _graph_alias(x: Tensor) -> Tensor:
    """A new Tensor object standing for x's current value in the graph."""
    a = x._alias()
    a.grad_fn = x.grad_fn
    a._output_nr = x._output_nr
    a.requires_grad = x.requires_grad
    a._accumulator = x._accumulator
    if x.grad_fn is None and x.requires_grad:
        # a leaf: make sure both objects feed the same AccumulateGrad node
        edge_of(x)
        a._accumulator = x._accumulator
    forward_ad.alias_tangents(x, a)
    return a


def _write_storage(x: Tensor, new: Tensor) -> None:
    be = x._device.backend
    with no_grad_ctx():
        data = new._data if new._dtype is x._dtype else be.astype(new._data, x._dtype.np)
        be.assign(x._data, data)
    x._bump_version()


def _inplace_on_view(view: Tensor, base: Tensor, compute: Callable[[Tensor], Tensor]) -> Tensor:
    if base.grad_fn is None and base.requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    replay = view._view_fn
    old_base = _graph_alias(base).clone()
    old_view = replay(old_base)           # the view's old value, differentiable via base
    forward_ad.alias_tangents(view, old_view)  # its tangent is the view's own
    new_view = compute(old_view)
    _write_storage(view, new_view)  # writes through the view into base's storage
    if _in_reverse(new_view) or _in_reverse(base):
        # new base = old base with the view's region replaced by new_view
        mask_keep = _region_mask(base, replay)
        base_out = _graph_alias(base)
        record("CopySlices", _copy_slices_backward, base_out, (old_base, new_view), (),
               replay=replay, keep=mask_keep)
        base.grad_fn = base_out.grad_fn
        base._output_nr = 0
        base.requires_grad = True
        # the view is now "replay(new base)"
        fresh = replay(_graph_alias(base))
        view.grad_fn = fresh.grad_fn
        view._output_nr = fresh._output_nr
        view.requires_grad = True
    if _mode.fw_levels:
        forward_ad.after_inplace(view, new_view)
    return view


def _region_mask(base: Tensor, replay: Callable[[Tensor], Tensor]) -> Tensor:
    """A bool tensor of base's shape: True outside the view's region."""
    with no_grad_ctx():
        dev = base._device
        keep = _make(dev.backend.full(base.shape, True, _dt.bool_.np, dev.index), dev,
                     _dt.bool_)
        region = replay(keep)
        keep._device.backend.assign(region._data, False)
    return keep


def _copy_slices_backward(node: Any, g: Tensor) -> tuple:
    g_old = g * node.keep if node.needs_input_grad[0] else None
    g_view = node.replay(g) if node.needs_input_grad[1] else None
    if g_view is not None and not isinstance(g_view, Tensor):  # pragma: no cover
        g_view = None
    return g_old, g_view


def inplace_method(fn: Callable, name: str) -> Callable:
    """An in-place method (``x.clamp_``) from an out-of-place function: compute, then write
    back; under autograd through :func:`apply_inplace`."""
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if needs_grad(self) or (_mode.enabled and any(
                getattr(a, "requires_grad", False) for a in args)):
            check_leaf(self)
            return apply_inplace(self, lambda base: fn(base, *args, **kwargs), name)
        res = fn(self, *args, **kwargs)
        be = self._device.backend
        be.assign(self._data, res._data if res._dtype is self._dtype else
                  be.astype(res._data, self._dtype.np))
        self._bump_version()
        return self
    method.__name__ = name + "_"
    return method
