"""Forward-mode AD: tangents that tensors carry, one per active dual level.

A tensor carrying a tangent at level ``L`` holds it in ``t.__dict__["_fw"][L]``. Tangents
are computed eagerly, op by op, from the reverse-mode formulas every op already has: an op
records its node (``graph.record``), and the tangent of its outputs is the Jacobian-vector
product ``J t`` of that node, obtained by the double-vjp identity

    J t = d/du < vjp(u), t >      (vjp(u) = Jᵀu is linear in u)

i.e. the node's backward formula is run on a zero cotangent ``u`` that requires grad, and
the gradient of ``<vjp(u), t>`` with respect to ``u`` is taken (``engine.grad``). Backward
formulas are written with Tensor ops, so this is exact, works for every op with a backward
and on every device, and stays differentiable: tangents have tangents at outer levels
(``jvp(jvp(f))``), are recorded in the reverse graph when their inputs are (``jacrev`` of a
``jvp``), and the backward formulas run by ``autograd.grad`` carry tangents (``jacfwd`` of
a ``jacrev``). While the tangent at level ``L`` is computed, levels ``>= L`` are hidden
(``_mode.fw_ceiling``), so a formula's ops see the primal and outer levels only.

Rules, as torch's:
* views: the tangent of a view is the same view of its input's tangent (``on_view``), so an
  in-place write through a view updates the base's tangent;
* in-place ops (``core/ops/inplace.py``): the new tangent is written into the tensor's own
  tangent in place (``after_inplace``); a tensor without one gets a new tangent (a view of
  a new zero tangent of its base when it is a view);
* tangents flow under ``no_grad`` but not in inference mode; ``detach()`` drops them.

A tensor that carries a tangent and is not in the reverse graph has ``requires_grad=True``
and ``grad_fn`` the :data:`FORWARD_ONLY` marker, so that every op's "is something to
record" test (``needs_grad``, the in-place routing) sees it; the marker is never an edge of
the reverse graph, and leaving the level restores the tensor.
"""
from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any, Iterator

from contextlib import contextmanager

from .autocast_state import state as _autocast
from .grad_mode import _mode, no_grad_ctx, set_grad_enabled_raw
from .graph import Node
from .tensor import Tensor

__all__ = ["FORWARD_ONLY", "enter_level", "exit_level", "tangent_of", "set_tangent",
           "make_dual", "unpack_dual", "hidden_from", "visible_levels", "carries_tangents",
           "prepare_outputs", "record_tangents", "on_view", "after_inplace", "after_overwrite",
           "alias_tangents",
           "detach_reverse", "reverse_leaf", "check_level"]


def _no_backward(node: Node, *grads: Any) -> tuple:
    return ()


FORWARD_ONLY = Node("ForwardADOnly", _no_backward)
FORWARD_ONLY._fw_only = True


class _Tracked(threading.local):
    """Per level, the tensors given a tangent at it (weakly): exit_level clears them."""

    def __init__(self) -> None:
        # by id: a WeakSet would compare tensors with ==, which is elementwise
        self.by_level: dict[int, weakref.WeakValueDictionary] = {}


_tracked = _Tracked()
#: level ids are never reused, so a tangent left on a tensor that outlived its level (a
#: saved alias in a graph kept after the level ended) can never be taken for a new level's
_level_ids = itertools.count()


# ----------------------------------------------------------------------------- levels
def enter_level() -> int:
    """Open a new (innermost) dual level on this thread and return it."""
    level = next(_level_ids)
    _mode.fw_levels = _mode.fw_levels + (level,)
    _tracked.by_level[level] = weakref.WeakValueDictionary()
    _mode.refresh_forward()
    return level


def exit_level(level: int | None = None) -> None:
    """Close the innermost dual level (``level``, when given, must be it): every tangent at
    it is dropped."""
    levels = _mode.fw_levels
    if not levels:
        raise RuntimeError("exit_dual_level: no dual level is active (enter one with "
                           "enter_dual_level() or `with dual_level():`)")
    if level is not None and level != levels[-1]:
        raise RuntimeError(f"exit_dual_level: level {level} is not the innermost active "
                           f"level ({levels[-1]}); levels are exited innermost first")
    level = levels[-1]
    _mode.fw_levels = levels[:-1]
    _mode.refresh_forward()
    tracked = _tracked.by_level.pop(level, None)
    for t in list(tracked.values()) if tracked is not None else ():
        fw = t.__dict__.get("_fw")
        if fw is None:
            continue
        fw.pop(level, None)
        if not fw and t.grad_fn is FORWARD_ONLY:
            t.grad_fn = None
            t.requires_grad = False


def check_level(level: int | None, what: str) -> int:
    """The level to use: ``level`` if active, else the innermost one."""
    levels = _mode.fw_levels
    if not levels:
        raise RuntimeError(f"{what}: no dual level is active; make sure to "
                           f"enter_dual_level() (or `with dual_level():`) first")
    if level is None:
        return levels[-1]
    if level not in levels:
        raise RuntimeError(f"{what}: level {level} is not an active dual level "
                           f"(active: {list(levels)})")
    return level


@contextmanager
def hidden_from(level: int, grad: bool | None = None) -> Iterator[None]:
    """Hide levels ``>= level`` (and set grad mode to ``grad`` when given) inside."""
    prev_ceiling, prev_grad = _mode.fw_ceiling, _mode.grad
    _mode.fw_ceiling = min(prev_ceiling, level)
    _mode.refresh_forward()
    if grad is not None:
        set_grad_enabled_raw(grad)
    try:
        yield
    finally:
        _mode.fw_ceiling = prev_ceiling
        _mode.refresh_forward()
        set_grad_enabled_raw(prev_grad)


def visible_levels() -> list[int]:
    """The active levels not hidden by the ceiling, outermost first."""
    ceiling = _mode.fw_ceiling
    return [lv for lv in _mode.fw_levels if lv < ceiling]


# ---------------------------------------------------------------------------- tangents
def tangent_of(t: Any, level: int) -> Tensor | None:
    """``t``'s tangent at ``level`` (None: none, a zero tangent)."""
    if not isinstance(t, Tensor):
        return None
    fw = t.__dict__.get("_fw")
    return None if fw is None else fw.get(level)


def set_tangent(t: Tensor, level: int, tangent: Tensor) -> None:
    """Give ``t`` the tangent ``tangent`` at ``level``."""
    fw = t.__dict__.get("_fw")
    if fw is None:
        fw = t.__dict__["_fw"] = {}
    fw[level] = tangent
    tracked = _tracked.by_level.get(level)
    if tracked is not None:
        tracked[id(t)] = t
    if not t.requires_grad:
        t.requires_grad = True
        t.grad_fn = FORWARD_ONLY


def carries_tangents(inputs: Any) -> bool:
    """Whether some tensor of ``inputs`` has a tangent at a visible level."""
    ceiling, levels = _mode.fw_ceiling, _mode.fw_levels
    for t in inputs:
        if isinstance(t, Tensor):
            fw = t.__dict__.get("_fw")
            if fw:
                for lv in fw:
                    if lv < ceiling and lv in levels:
                        return True
    return False


def _keep_marker(t: Tensor) -> None:
    """A tensor still holding tangents (at hidden levels too) stays visible to the ops."""
    if t.__dict__.get("_fw") and not t.requires_grad:
        t.requires_grad = True
        t.grad_fn = FORWARD_ONLY


# ------------------------------------------------------------------------ dual tensors
def make_dual(x: Tensor, tangent: Tensor, level: int | None = None) -> Tensor:
    """A view of ``x`` carrying ``tangent`` at ``level`` (the innermost by default); the
    tangent is used as is, not copied (torch)."""
    level = check_level(level, "make_dual")
    if not isinstance(x, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError(f"make_dual: expected two Tensors, got {type(x).__name__} and "
                        f"{type(tangent).__name__}")
    if x.dtype.kind not in "fc":
        raise ValueError(f"make_dual: expected primal to be floating point or complex, but "
                         f"got: {x.dtype.name}")
    if tangent.dtype.kind not in "fc":
        raise ValueError(f"make_dual: expected tangent to be floating point or complex, but "
                         f"got: {tangent.dtype.name}")
    if tuple(tangent.shape) != tuple(x.shape):
        raise ValueError(f"make_dual: the tangent has shape {tuple(tangent.shape)} but the "
                         f"primal has shape {tuple(x.shape)}; they must match")
    if tangent.device is not x.device:
        raise ValueError(f"make_dual: the tangent is on {tangent.device} but the primal is "
                         f"on {x.device}; move one with .to()")
    if tangent_of(x, level) is not None:
        raise RuntimeError(f"make_dual: making a dual Tensor based on a Tensor that already "
                           f"has a forward gradient at the same level {level} is not "
                           f"supported")
    with hidden_from(level):
        d = x.view_as(x)  # keeps x's reverse graph and its tangents at outer levels
    set_tangent(d, level, tangent)
    return d


def unpack_dual(t: Any, level: int | None = None) -> tuple[Any, Tensor | None]:
    """``(primal, tangent)``: a view of ``t`` without its tangent at ``level``, and that
    tangent (None when it has none)."""
    if not _mode.fw_levels:
        return t, None
    level = check_level(level, "unpack_dual")
    if not isinstance(t, Tensor):
        return t, None
    tangent = tangent_of(t, level)
    if tangent is None:
        return t, None
    with hidden_from(level):
        primal = t.view_as(t)
    return primal, tangent


# ------------------------------------------------------------------- recording tangents
def prepare_outputs(outputs: Any) -> None:
    """Give each floating output its tangent dict before the node saves it, so the
    saved alias shares it (``Node.save_for_backward``)."""
    for o in (outputs if outputs.__class__ is tuple else (outputs,)):
        if o is not None and o._dtype.kind in "fc" and "_fw" not in o.__dict__:
            o.__dict__["_fw"] = {}


def record_tangents(node: Node, outputs: Any, inputs: Any,
                    skip: frozenset = frozenset()) -> None:
    """Give ``outputs`` of the just-recorded ``node`` their tangents at every visible
    level, outermost first (an inner level's formula reads outer tangents); outputs whose
    index is in ``skip`` (non-differentiable) get none."""
    outs = outputs if outputs.__class__ is tuple else (outputs,)
    for level in visible_levels():
        ts = [tangent_of(t, level) for t in inputs]
        if all(t is None for t in ts):
            continue
        todo = [k for k, o in enumerate(outs) if o is not None and o._dtype.kind in "fc"
                and k not in skip and tangent_of(o, level) is None]
        if todo:
            jv = _node_jvp(node, outs, inputs, ts, level)
            for k in todo:
                set_tangent(outs[k], level, jv[k])
    for o in outs:
        if o is not None and o.__dict__.get("_fw") == {}:
            del o.__dict__["_fw"]


def _node_jvp(node: Node, outs: tuple, inputs: Any, ts: list, level: int) -> list:
    """``J t`` for each output of ``node``, by differentiating its backward formula."""
    from .engine import _fix_gradient, grad as _grad
    from .ops.creation import zeros, zeros_like
    real = any(_in_reverse(t) for t in list(inputs) + ts)
    create_graph = _mode.grad and real  # the tangent joins the reverse graph (torch)
    prev_autocast, _autocast.active = _autocast.active, False
    try:
        with hidden_from(level, grad=True):
            us: list[Tensor | None] = []
            for o in outs:
                if o is None:
                    us.append(None)
                else:
                    u = zeros(o.shape, dtype=o.dtype, device=o.device)
                    us.append(u.requires_grad_(True) if o._dtype.kind in "fc" else u)
            gs = _run_backward(node, us, ts)
            total = None
            for i, (g, t) in enumerate(zip(gs, ts)):
                if t is None or not isinstance(g, Tensor) or not g.requires_grad:
                    continue
                x = inputs[i]
                g = _fix_gradient(g, (x._data.shape, x._dtype, x._device), node, i)
                term = (g.conj() * t).real.sum() if "c" in (g.dtype.kind, t.dtype.kind) \
                    else (g * t).sum()
                total = term if total is None else total + term
            diff = [u for u in us if u is not None and u.requires_grad]
            if total is None or not total.requires_grad or not diff:
                jv: tuple = (None,) * len(diff)
            else:
                set_grad_enabled_raw(create_graph)
                jv = _grad((total,), tuple(diff), retain_graph=create_graph,
                           create_graph=create_graph, allow_unused=True)
        result: list[Tensor | None] = []
        it = iter(jv)
        for o, cot in zip(outs, us):
            j: Tensor | None = next(it) if cot is not None and cot.requires_grad else None
            if o is not None and j is None:
                with no_grad_ctx():
                    j = zeros_like(o)
            result.append(j)
        return result
    finally:
        _autocast.active = prev_autocast


def _run_backward(node: Node, us: list, ts: list) -> tuple:
    """The node's backward formula on cotangents ``us``, asked for the inputs that carry
    tangents."""
    prev = node.needs_input_grad
    node.needs_input_grad = tuple(t is not None for t in ts)
    try:
        gs = node.backward_fn(node, *us)
    except (RuntimeError, NotImplementedError, TypeError) as e:
        raise type(e)(f"forward-mode AD through {node.name()}: its backward formula failed "
                      f"({e})") from e
    finally:
        node.needs_input_grad = prev
    if gs.__class__ is not tuple:
        gs = tuple(gs) if isinstance(gs, list) else (gs,)
    return gs + (None,) * (len(ts) - len(gs))


def _in_reverse(t: Any) -> bool:
    """Whether ``t`` is in the reverse graph (a leaf that requires grad or a recorded
    result), not merely carrying tangents."""
    return isinstance(t, Tensor) and t.requires_grad and not (
        t.grad_fn is not None and t.grad_fn._fw_only)


# ----------------------------------------------------------------------- views, in-place
def on_view(x: Tensor, out: Tensor, replay: Any) -> None:
    """``out`` is ``replay(x)``, a view: its tangents are the same views of x's."""
    fw = x.__dict__.get("_fw")
    if not fw:
        return
    ceiling, levels = _mode.fw_ceiling, _mode.fw_levels
    for level, t in list(fw.items()):
        if level < ceiling and level in levels:
            with hidden_from(level):
                vt = replay(t)
            set_tangent(out, level, vt)


def after_inplace(x: Tensor, new: Tensor) -> None:
    """``x`` now holds ``new``'s values (written in place): make x's tangents ``new``'s,
    written into x's own tangent storage so that views and bases sharing it see them."""
    for level in visible_levels():
        nt, xt = tangent_of(new, level), tangent_of(x, level)
        if nt is None and xt is None:
            continue
        with hidden_from(level):
            if xt is None:
                xt = _new_tangent_storage(x, level)
            if nt is None:
                from .ops.creation import zeros_like
                with no_grad_ctx():
                    nt = zeros_like(x)
            if xt is None or (_in_reverse(xt) and xt.grad_fn is None and _mode.grad):
                set_tangent(x, level, nt)  # a leaf that requires grad is not written to
            elif nt is not xt:
                xt.copy_(nt)
    _keep_marker(x)


def after_overwrite(x: Tensor) -> None:
    """``x`` was overwritten with values that depend on no input (a random fill): its
    tangents become zero, in place."""
    for level in visible_levels():
        xt = tangent_of(x, level)
        if xt is not None:
            with hidden_from(level):
                xt.zero_()


def _new_tangent_storage(x: Tensor, level: int) -> Tensor | None:
    """For a view without a tangent: a view of its base's tangent (made zero if the base
    has none), as torch; None for a tensor that is not a view."""
    base, replay = x._base, x._view_fn
    if base is None or replay is None:
        return None
    bt = tangent_of(base, level)
    if bt is None:
        from .ops.creation import zeros_like
        with no_grad_ctx():
            bt = zeros_like(base)
        set_tangent(base, level, bt)
    vt = replay(bt)
    set_tangent(x, level, vt)
    return vt


def alias_tangents(src: Tensor, dst: Tensor) -> None:
    """``dst``, a new Tensor object standing for ``src`` (in-place bookkeeping), gets
    src's tangents at the active levels."""
    fw = src.__dict__.get("_fw")
    if fw:
        levels = _mode.fw_levels
        for level, t in list(fw.items()):
            if level in levels:
                set_tangent(dst, level, t)


def detach_reverse(t: Any) -> Any:
    """``t`` outside the reverse graph, keeping its tangents (``detach()`` drops both)."""
    if not isinstance(t, Tensor) or not _in_reverse(t):
        return t
    a = t._alias()
    alias_tangents(t, a)
    return a


def reverse_leaf(t: Tensor) -> Tensor:
    """A new leaf that requires grad, with ``t``'s values and tangents: what a reverse-mode
    transform differentiates with respect to."""
    a = t._alias()
    a.requires_grad = True
    alias_tangents(t, a)
    return a
