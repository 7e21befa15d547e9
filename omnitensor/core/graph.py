"""The autograd graph: nodes, saved tensors and :func:`record`.

Core ops call :func:`record` after computing a result when :func:`needs_grad` says some
input requires grad. The engine that replays the graph (``core/engine.py``) sits next to
this module, and grad mode in ``core/grad_mode.py``: the whole machinery lives in core, and
``omnitensor.autograd`` is its public face plus what is built on it (``Function``,
``gradcheck``, ``checkpoint``, anomaly detection). A node's ``backward`` is the op's backward
formula, written with Tensor ops, so it runs on every backend and builds a graph itself when
``create_graph=True``.
"""
from __future__ import annotations

import itertools
import threading
import traceback
import weakref
from typing import Any, Callable, Sequence

from .grad_mode import (INFERENCE_SEEN, _mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad_ctx, set_grad_enabled_raw)
from .hooks import RemovableHandle
from .tensor import Tensor

# the grad-mode names are re-exported: libraries import them from here with record()
__all__ = ["Node", "AccumulateGrad", "record", "needs_grad", "edge_of", "is_grad_enabled",
           "set_grad_enabled_raw", "is_inference_mode_enabled", "no_grad_ctx"]


_seq = itertools.count()


class _SavedHooks(threading.local):
    """The thread's stack of ``(pack, unpack)`` saved-tensor hooks
    (``autograd.graph.saved_tensors_hooks``) and the reason they are disabled, if any."""

    def __init__(self) -> None:
        self.stack: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = []
        self.disabled: str | None = None


saved_hooks = _SavedHooks()


class _Packed:
    """A saved tensor as a pack hook returned it, with the unpack hook that restores it."""

    __slots__ = ("value", "unpack")

    def __init__(self, value: Any, unpack: Callable[[Any], Any]) -> None:
        self.value, self.unpack = value, unpack

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


class Node:
    """A recorded op (``tensor.grad_fn``). ``backward_fn(node, *grads)`` returns one gradient
    (or None) per input; ``next_functions`` holds ``(node, output_nr)`` per input, None
    where the input needs no gradient. Extra attributes an op needs in backward (shapes,
    axes) are stored on the node itself, as on torch's ``ctx``."""

    __slots__ = ("_name", "backward_fn", "next_functions", "input_meta", "seq", "_saved",
                 "needs_input_grad", "num_outputs", "_output_meta", "__dict__",
                 "__weakref__")
    # rarely set: class defaults, shadowed per node only when assigned
    _saved_versions: tuple = ()
    _saved_outputs: tuple = ()
    _pre_hooks: dict | None = None
    _hooks: list | None = None
    materialize_grads = True
    non_differentiable: frozenset = frozenset()
    #: True only for the marker that tensors carrying forward-AD tangents alone have as
    #: ``grad_fn`` (core/forward_ad.py): not part of the reverse graph
    _fw_only = False

    def __init__(self, name: str, backward_fn: Callable[..., Sequence[Any]],
                 next_functions: tuple = (), input_meta: tuple = (),
                 needs_input_grad: tuple = ()) -> None:
        self._name = name
        self.backward_fn = backward_fn
        self.next_functions = next_functions
        self.input_meta = input_meta
        self.needs_input_grad = needs_input_grad
        self.seq = next(_seq)
        self._saved: tuple | None = ()
        self.num_outputs = 1
        self._output_meta: tuple = ()

    # -- torch's ctx API -------------------------------------------------------
    def save_for_backward(self, *tensors: Any) -> None:
        """Keep tensors for backward; in-place changes to them are detected."""
        saved: list[Any] = []
        versions: list[Any] = []
        is_out: list[bool] = []
        for t in tensors:
            if isinstance(t, Tensor) and t.grad_fn is self:
                # an output of this node: keep a graph-free alias to avoid a reference
                # cycle; the grad_fn is put back when unpacked (torch's SavedVariable)
                a = t._alias()
                fw = t.__dict__.get("_fw")
                if fw is not None:  # the same forward-AD tangents, as the dict itself
                    a.__dict__["_fw"] = fw
                saved.append(a)
                is_out.append(True)
            else:
                saved.append(t)
                is_out.append(False)
            versions.append(t._version if isinstance(t, Tensor) else None)
        hooks = saved_hooks.stack
        if hooks:  # the innermost pack hook decides what is kept (torch's SavedVariable)
            pack, unpack = hooks[-1]
            saved = [_Packed(pack(t), unpack) if isinstance(t, Tensor) else t for t in saved]
            versions = [None] * len(versions)  # the hook's copy is what backward reads
        self._saved = tuple(saved)
        self._saved_versions = tuple(versions)
        self._saved_outputs = tuple(is_out)

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to :meth:`save_for_backward`, checked for in-place changes."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        if not saved:
            return ()
        out = []
        for t, v, is_out in zip(saved, self._saved_versions, self._saved_outputs):
            if isinstance(t, _Packed):
                t = t.unpack(t.value)
            if v is not None and t._version != v:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: [{t.dtype.name} {list(t.shape)}] is at version "
                    f"{t._version}; expected version {v} instead (saved by {self._name}). "
                    f"Use out-of-place ops (x = x * 2) or .clone() before modifying it.")
            if is_out:
                fw = t.__dict__.get("_fw")
                t = t._alias()
                t.grad_fn = self
                t.requires_grad = True
                if fw is not None:
                    t.__dict__["_fw"] = fw
            out.append(t)
        return tuple(out)

    def mark_non_differentiable(self, *tensors: Any) -> None:
        self.non_differentiable = frozenset(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)

    def release(self) -> None:
        """Free saved tensors (after a backward without retain_graph)."""
        if self._saved:
            self._saved = None

    # -- hooks -------------------------------------------------------------------
    def register_hook(self, fn: Callable) -> Any:
        """``fn(grad_inputs, grad_outputs)`` runs after this node's backward."""
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(fn)
        return RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn: Callable) -> Any:
        """``fn(grad_outputs)`` runs before this node's backward; may return new grads."""
        return self._add_pre_hook(-1, fn)

    def _add_pre_hook(self, output_nr: int, fn: Callable) -> Any:
        if self._pre_hooks is None:
            self._pre_hooks = {}
        lst = self._pre_hooks.setdefault(output_nr, [])
        lst.append(fn)
        return RemovableHandle(lst, fn)

    def name(self) -> str:
        """The op's name, e.g. ``"MulBackward0"``."""
        return self._name

    def __call__(self, *grads: Any) -> Any:
        return self.backward_fn(self, *grads)

    def __repr__(self) -> str:
        return f"<{self._name} object at {hex(id(self))}>"


class AccumulateGrad(Node):
    """The sink node of a leaf tensor that requires grad: adds into ``leaf.grad``. The
    leaf owns it (``_accumulator``) and it points back weakly, so no cycle forms and the
    node is reused by every graph the leaf enters."""

    __slots__ = ("_variable",)

    def __init__(self, variable: Any) -> None:
        super().__init__("AccumulateGrad", _no_backward)
        self._variable = weakref.ref(variable)

    @property
    def variable(self) -> Any:
        return self._variable()


def _no_backward(node: Node, *grads: Any) -> tuple:
    return ()


def needs_grad(*inputs: Any) -> bool:
    """Whether an op on ``inputs`` must be recorded (grad mode on and an input requires
    grad). Non-tensor inputs are ignored."""
    if not _mode.enabled:
        return False
    for t in inputs:
        if getattr(t, "requires_grad", False):
            return True
    return False


def edge_of(t: Any) -> tuple | None:
    """The graph edge a tensor's gradient flows into: (grad_fn, output_nr), the leaf's
    AccumulateGrad, or None."""
    if not getattr(t, "requires_grad", False):
        return None
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    acc = t._accumulator
    if acc is None:
        acc = t._accumulator = AccumulateGrad(t)
    return (acc, 0)


def _refuse_inference(saved: Sequence[Any]) -> None:
    """torch's refusal to save an inference tensor for a backward pass."""
    for t in saved:
        if isinstance(t, Tensor) and t.is_inference():
            raise RuntimeError("Inference tensors cannot be saved for backward. Please do not "
                               "use Tensors created in inference mode in computation tracked "
                               "by autograd. To work around this, you can make a clone to get "
                               "a normal tensor and use it in autograd.")


def record(name: str, backward_fn: Callable[..., Sequence[Any]], outputs: Any,
           inputs: Sequence[Any], saved: Sequence[Any] = (), **attrs: Any) -> Node:
    """Attach a new node to ``outputs`` (a Tensor or a tuple of Tensors).

    ``inputs`` are the op's tensor inputs in the order ``backward_fn`` returns their
    gradients (None or non-tensors where there is none); ``saved`` are tensors the
    backward reads through ``node.saved_tensors``; ``attrs`` become node attributes.

    The node joins the reverse graph when grad mode is on and an input is in it; when an
    input carries forward-AD tangents, the outputs' tangents are derived from the same
    node (``core/forward_ad.py``), under ``no_grad`` too."""
    n = len(inputs)
    edges: list = [None] * n
    meta: list = [None] * n
    needs: list = [False] * n
    grad_on = _mode.grad
    fw_only = False  # an input only carries forward-AD tangents: not an edge
    for i, t in enumerate(inputs):
        if grad_on and isinstance(t, Tensor) and t.requires_grad:
            fn = t.grad_fn
            if fn is not None:
                if fn._fw_only:
                    fw_only = True
                    continue
                edges[i] = (fn, t._output_nr)
            else:
                acc = t._accumulator
                if acc is None:
                    acc = t._accumulator = AccumulateGrad(t)
                edges[i] = (acc, 0)
            needs[i] = True
            meta[i] = (t._data.shape, t._dtype, t._device)
    # created after the inputs' edges: a new AccumulateGrad must get a smaller ``seq``
    # than its consumer (the engine runs nodes in decreasing seq)
    node = Node(name, backward_fn, tuple(edges), tuple(meta), tuple(needs))
    if attrs:
        node.__dict__.update(attrs)
    forward = _mode.forward and _forward_ad().carries_tangents(inputs)
    if forward:
        _forward_ad().prepare_outputs(outputs)  # saved outputs share their tangents
    if not (any(needs) or (grad_on and not fw_only and not _mode.fw_levels)):
        pass  # not in the reverse graph: no_grad, or forward-AD tangents only
    elif outputs.__class__ is tuple:
        node.num_outputs = len(outputs)
        out_meta: list[tuple | None] = []
        for i, o in enumerate(outputs):
            if o is None:
                out_meta.append(None)
                continue
            if o._dtype.kind in "fc":
                o.requires_grad = True
                o.grad_fn = node
                o._output_nr = i
            out_meta.append((o._data.shape, o._dtype, o._device))
        node._output_meta = tuple(out_meta)
    elif outputs._dtype.kind in "fc":
        outputs.requires_grad = True
        outputs.grad_fn = node
    if saved:
        if INFERENCE_SEEN and grad_on and any(needs):
            _refuse_inference(saved)
        node.save_for_backward(*saved)
    if _mode.anomaly:
        node.__dict__["_trace"] = "".join(traceback.format_stack()[:-2])
    if forward:
        _forward_ad().record_tangents(node, outputs, inputs)
    return node


def _forward_ad() -> Any:
    """core/forward_ad.py, imported on first use (it builds on the engine, above this)."""
    from . import forward_ad
    return forward_ad
