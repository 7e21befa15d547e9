"""The backward engine: walks recorded nodes in reverse, iteratively.

Nodes run in decreasing creation order (a heap on ``seq``, as Chainer's rank order), each
once all of its consumers have delivered their gradients, so a 10,000-op chain needs no
recursion. Gradients are checked against the input they flow into (shape: a broadcast
gradient is summed back; dtype: cast back), accumulated out of place, and handed to leaf
``.grad``. After a backward without ``retain_graph`` every executed node drops its saved
tensors.
"""
from __future__ import annotations

import heapq
import threading
import weakref
from typing import Any, Callable, Iterable, Sequence

from .autocast_state import state as _autocast
from .grad_mode import _mode, set_grad_enabled_raw as _set_grad
from .graph import AccumulateGrad, Node, edge_of
from .ops.creation import full_like, zeros, zeros_like
from .ops.shape import sum_to
from .shape_util import broadcast_shapes
from .tensor import Tensor, _make

__all__ = ["backward", "grad", "queue_callback", "tensor_backward"]

#: per thread, one entry per running backward pass (a hook may start a nested one)
_running = threading.local()


class _Pass:
    """A running backward pass: its final callbacks, and whether it accumulates into
    every leaf's ``.grad`` (``backward()`` without ``inputs=``) or only computes chosen
    gradients (``autograd.grad``, ``backward(inputs=...)``)."""

    __slots__ = ("callbacks", "accumulates_all")

    def __init__(self, accumulates_all: bool) -> None:
        self.callbacks: list = []
        self.accumulates_all = accumulates_all


def current_pass_accumulates_all() -> bool | None:
    """For code running inside a backward pass (hooks, ``Function.backward``): True when
    the pass writes every reached leaf's ``.grad``, False for ``autograd.grad`` or
    ``backward(inputs=...)``, None outside a backward pass."""
    stack = getattr(_running, "stack", None)
    return stack[-1].accumulates_all if stack else None


def queue_callback(callback: Callable[[], Any]) -> None:
    """Run ``callback()`` once the backward pass now running has finished (torch's
    ``Variable._execution_engine.queue_callback``): after every node and leaf
    accumulation of this pass, before ``backward()``/``autograd.grad`` returns, in the
    order queued; a callback may queue more. Callable only during a backward pass (from a
    hook or a ``Function.backward``); a pass that raises runs none of its callbacks."""
    stack = getattr(_running, "stack", None)
    if not stack:
        raise RuntimeError("queue_callback: final callbacks can only be installed during "
                           "the backward pass (from a hook or an autograd.Function's "
                           "backward)")
    if not callable(callback):
        raise TypeError(f"queue_callback: expected a callable, got {type(callback).__name__}")
    stack[-1].callbacks.append(callback)


def _run_callbacks(callbacks: list) -> None:
    i = 0
    while i < len(callbacks):  # callbacks may queue more
        callbacks[i]()
        i += 1


def _as_tuple(x: Any) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _root_grads(outputs: tuple, grad_outputs: tuple, what: str) -> list:
    roots = []
    if grad_outputs and len(grad_outputs) != len(outputs):
        raise RuntimeError(f"{what}: got {len(grad_outputs)} gradients for {len(outputs)} "
                           f"outputs")
    for i, t in enumerate(outputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}: outputs must be Tensors, got {type(t).__name__}")
        g = grad_outputs[i] if grad_outputs else None
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               f"have a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs; "
                                   "pass gradient= (a tensor of the output's shape)")
            dev = t._device
            g = _make(dev.backend.full(t.shape, 1, t._dtype.np, dev.index), dev, t._dtype)
        elif not isinstance(g, Tensor):
            g = full_like(t, g)
        elif g.shape != t.shape:
            raise RuntimeError(f"{what}: mismatch in shape: grad_output[{i}] has a shape of "
                               f"{tuple(g.shape)} and output[{i}] has a shape of "
                               f"{tuple(t.shape)}")
        elif g._device is not t._device:
            if not (g.ndim == 0 and g._device.type == "cpu"):  # a cpu scalar moves (torch)
                raise RuntimeError(f"{what}: invalid gradient at index {i} - expected device "
                                   f"{t.device} but got {g.device}: create grad_output[{i}] "
                                   f"on its output's device (.to('{t.device}'))")
            g = g.to(t._device)
        roots.append((edge_of(t), g))
    return roots


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (of ``inputs``
    only, when given)."""
    outs = _as_tuple(tensors)
    roots = _root_grads(outs, _as_tuple(grad_tensors), "backward")
    if retain_graph is None:
        retain_graph = create_graph
    targets = None
    if inputs is not None:
        ins = _as_tuple(inputs)
        if not ins:
            raise RuntimeError("backward: inputs argument cannot be empty")
        targets = [edge_of(t) for t in ins]
        if any(e is None for e in targets):
            raise RuntimeError("backward: one of the inputs does not require grad")
    _execute(roots, retain_graph, create_graph, targets, accumulate=True)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool | None = None,
         materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs`` (nothing is accumulated
    into ``.grad``). ``create_graph=True`` makes them differentiable (higher order)."""
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if not ins:
        raise RuntimeError("grad requires at least one input")
    roots = _root_grads(outs, _as_tuple(grad_outputs), "grad")
    if retain_graph is None:
        retain_graph = create_graph
    targets: list[Any] = []
    for i, t in enumerate(ins):
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not require "
                               f"grad")
        targets.append(edge_of(t))
    captured = _execute(roots, retain_graph, create_graph, targets, accumulate=False)
    result = []
    for i, (e, t) in enumerate(zip(targets, ins)):
        g = captured.get((e[0], e[1]))
        if g is None:
            if materialize_grads:
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"One of the differentiated Tensors (input {i}) appears to "
                                   f"not have been used in the graph. Set allow_unused=True if "
                                   f"this is the desired behavior.")
        result.append(g)
    return tuple(result)


def tensor_backward(self: Tensor, gradient: Tensor | None = None,
                    retain_graph: bool | None = None, create_graph: bool = False,
                    inputs: Any = None) -> None:
    """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (torch semantics); bound as
    ``Tensor.backward`` by ``core/methods.py``."""
    backward((self,), None if gradient is None else (gradient,), retain_graph, create_graph,
             inputs=inputs)


# ------------------------------------------------------------------------ internals
def _graph(root_nodes: Iterable[Node], min_seq: int = -1) -> list[Node]:
    """Every node reachable from the roots in post-order (inputs before consumers): one
    iterative DFS; nodes hash by identity, so they key the sets directly. Nodes older than
    ``min_seq`` are not entered: a node's inputs are always older than it, so none of them
    leads to a target recorded at or after ``min_seq`` (a forward-AD tangent's small
    formula graph is walked without walking the program's whole graph behind it)."""
    order: list[Node] = []
    seen: set[Node] = set()
    stack: list[tuple[Node, int]] = []
    for r in root_nodes:
        if r in seen:
            continue
        seen.add(r)
        stack.append((r, 0))
        while stack:
            node, i = stack[-1]
            nexts = node.next_functions
            if i < len(nexts):
                stack[-1] = (node, i + 1)
                e = nexts[i]
                if e is not None and e[0] not in seen and e[0].seq >= min_seq:
                    seen.add(e[0])
                    stack.append((e[0], 0))
            else:
                stack.pop()
                order.append(node)
    return order


def _fix_gradient(g: Tensor, meta: tuple | None, node: Node, i: int) -> Tensor:
    if meta is None:
        return g
    shape, dtype, device = meta
    if g.device is not device:
        raise RuntimeError(f"Function {node.name()} returned a gradient on {g.device} for an "
                           f"input on {device}")
    if g.shape != shape:
        try:
            ok = broadcast_shapes(g.shape, shape) == g.shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index "
                               f"{i} - got {list(g.shape)} but expected shape compatible with "
                               f"{list(shape)}")
        g = sum_to(g, shape)
    if g.dtype is not dtype:
        if dtype.kind == "f" and g.dtype.kind == "c":
            g = g.real
        g = g.to(dtype)
    return g


def _run_hooks(hooks: list, g: Tensor) -> Tensor:
    for h in list(hooks):
        r = h(g)
        if r is not None:
            g = r
    return g


def _accumulate_leaf(node: AccumulateGrad, g: Tensor, owned: bool, create_graph: bool) -> None:
    t = node.variable
    if t is None:  # the leaf no longer exists: nobody can observe its gradient
        return
    if t._hooks:
        g = _run_hooks(t._hooks, g)
        owned = False
    if t.grad is None:
        if create_graph:
            t.grad = g
        elif owned and g._base is None:
            t.grad = g.detach()
        else:
            # .grad must be a writable tensor of its own (optimizers and DDP update it in
            # place): copy views and gradients that another consumer may hold
            t.grad = g._detached_copy()
    else:
        t.grad = t.grad + g if create_graph else (t.grad + g.detach()).detach()
    if t._post_hooks:
        for h in list(t._post_hooks):
            h(t)


def _check_anomaly(node: Node, grads: Sequence[Any]) -> None:
    for i, g in enumerate(grads):
        if isinstance(g, Tensor) and g.dtype.kind in "fc" and bool(g.isnan().any().item()):
            trace = node.__dict__.get("_trace", "")
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               f"output." + (f"\nForward call that created it:\n{trace}"
                                            if trace else ""))


def _execute(roots: list, retain_graph: bool, create_graph: bool, targets: list | None,
             accumulate: bool) -> dict:
    """Run one backward pass from ``roots`` (``(edge, gradient)`` pairs); return the
    gradients captured for ``targets`` (edges), by ``(node, output number)``."""
    walk = _Walk(roots, retain_graph, create_graph, targets, accumulate)
    stack = getattr(_running, "stack", None)
    if stack is None:
        stack = _running.stack = []
    this_pass = _Pass(accumulate and targets is None)
    stack.append(this_pass)
    # backward formulas record the reverse graph only for create_graph (forward-AD
    # tangents of the gradients are computed either way: core/forward_ad.py)
    _set_grad(create_graph)
    # backward ops run in the dtypes autocast chose in forward (torch), never re-autocast
    prev_autocast, _autocast.active = _autocast.active, False
    done = False
    try:
        walk.run()
        done = True
    finally:
        _set_grad(walk.prev_mode)
        _autocast.active = prev_autocast
        if not done:
            stack.pop()
    try:  # still this pass's list: a callback may queue another
        _run_callbacks(this_pass.callbacks)
    finally:
        stack.pop()
    return walk.captured


class _Walk:
    """The nodes of one backward pass, run in order, with their gradient buffers.

    Scheduling: a node's consumers are always recorded after it, so they have a larger
    ``seq``. Running nodes in decreasing ``seq`` (a heap) therefore runs each node after
    every consumer has delivered its gradient; no dependency count is needed (Chainer's
    rank order). AccumulateGrad nodes are created before their first consumer, so the
    same holds for them. Only ``autograd.grad``/``inputs=`` walk the graph first, to
    prune what does not lead to the requested inputs."""

    def __init__(self, roots: list, retain_graph: bool, create_graph: bool,
                 targets: list | None, accumulate: bool) -> None:
        self.retain_graph, self.create_graph = retain_graph, create_graph
        self.accumulate = accumulate
        self.prev_mode = _mode.grad
        self.anomaly = _mode.anomaly and _mode.anomaly_check_nan
        self.target_keys: set | None = None
        self.needed: set[Node] | None = None  # None: every reachable node runs
        if targets is not None:
            self._prune(roots, targets)
        self.buffers: dict[Node, list] = {}
        # gradient objects handed to more than one consumer, by id; each entry holds a weak
        # reference so that a freed gradient's id, reused by a new tensor, is not mistaken
        # for it (a spurious copy in eager, a different primitive sequence for compile's
        # segments)
        self.shared: dict[int, Any] = {}
        self.heap: list = []
        self.captured: dict = {}
        for e, g in roots:
            node, nr = e
            if self.needed is not None and node not in self.needed:
                continue
            buf = self.buffers.get(node)
            if buf is None:
                buf = self.buffers[node] = [None] * max(node.num_outputs, nr + 1)
                heapq.heappush(self.heap, (-node.seq, node))
            buf[nr] = g if buf[nr] is None else buf[nr] + g
            self.shared[id(g)] = weakref.ref(g)

    def _prune(self, roots: list, targets: list) -> None:
        """Keep only the nodes on a path from the roots to a target."""
        order = _graph([e[0] for e, _ in roots], min(e[0].seq for e in targets))
        self.target_keys = {(e[0], e[1]) for e in targets}
        target_nodes = {e[0] for e in targets}
        needed: set[Node] = set()
        for node in order:  # post-order: inputs first
            if node in target_nodes or any(
                    e is not None and e[0] in needed for e in node.next_functions):
                needed.add(node)
        self.needed = needed

    def run(self) -> None:
        heap, buffers = self.heap, self.buffers
        needed = self.needed
        while heap:
            _, node = heapq.heappop(heap)
            grads = buffers.pop(node)
            if grads.count(None) == len(grads):
                continue
            pre = node._pre_hooks
            if pre:  # tensor hooks and retain_grad on this node's outputs
                grads = self._pre_hooks(pre, grads)
            if self.target_keys is not None:
                self._capture(node, grads)
            if node.__class__ is AccumulateGrad:
                self._sink(node, grads)
            elif needed is None or any(
                    e is not None and e[0] in needed for e in node.next_functions):
                self._run_node(node, grads)  # (else a target with nothing further to do)

    def _pre_hooks(self, pre: dict, grads: list) -> list:
        _set_grad(self.prev_mode)
        for nr, hooks in pre.items():
            if 0 <= nr < len(grads) and grads[nr] is not None:
                grads[nr] = _run_hooks(hooks, grads[nr])
        for h in pre.get(-1, ()):
            r = h(tuple(grads))
            if r is not None:
                grads = list(r)
        _set_grad(self.create_graph)
        return grads

    def _capture(self, node: Node, grads: list) -> None:
        """Keep the gradients of the requested ``autograd.grad`` inputs."""
        assert self.target_keys is not None
        for nr, g in enumerate(grads):
            key = (node, nr)
            if key in self.target_keys and g is not None:
                var = node.variable if isinstance(node, AccumulateGrad) else None
                if var is not None and var._hooks:
                    g = _run_hooks(var._hooks, g)
                self.captured[key] = g

    def _sink(self, node: AccumulateGrad, grads: list) -> None:
        """A leaf: accumulate into ``.grad`` when this pass writes it."""
        g0 = grads[0]
        if not self.accumulate or g0 is None or (
                self.target_keys is not None and (node, 0) not in self.target_keys):
            return
        _set_grad(self.prev_mode)
        ref = self.shared.get(id(g0))
        _accumulate_leaf(node, g0, ref is None or ref() is not g0, self.create_graph)
        _set_grad(self.create_graph)

    def _run_node(self, node: Node, grads: list) -> None:
        if None in grads and node.materialize_grads:
            meta = node._output_meta or (None,) * len(grads)
            grads = [g if g is not None or m is None else
                     zeros(m[0], dtype=m[1], device=m[2]) for g, m in zip(grads, meta)]
        results = node.backward_fn(node, *grads)
        if results.__class__ is not tuple:
            results = tuple(results) if isinstance(results, list) else (results,)
        if len(results) < len(node.next_functions):
            raise RuntimeError(f"function {node.name()} returned an incorrect number of "
                               f"gradients (expected {len(node.next_functions)}, got "
                               f"{len(results)})")
        if self.anomaly:
            _check_anomaly(node, results)
        if node._hooks:
            for h in node._hooks:
                h(results, tuple(grads))
        if not self.retain_graph:
            node.release()
        self._deliver(node, results)

    def _deliver(self, node: Node, results: Sequence[Any]) -> None:
        """Hand a node's input gradients to the nodes that produced its inputs."""
        ids: list[int] = []  # a gradient object handed to two inputs must not be aliased
        meta = node.input_meta
        nres = len(results)
        needed, buffers, shared = self.needed, self.buffers, self.shared
        for i, e in enumerate(node.next_functions):
            if e is None or i >= nres:
                continue
            g = results[i]
            if g is None:
                continue
            nxt, nr = e
            if needed is not None and nxt not in needed:
                continue
            if not isinstance(g, Tensor):
                raise TypeError(f"function {node.name()} returned a {type(g).__name__} as "
                                f"gradient {i}; expected a Tensor or None")
            m = meta[i]
            if m is not None and (g._data.shape != m[0] or g._dtype is not m[1]
                                  or g._device is not m[2]):
                g = _fix_gradient(g, m, node, i)
            gid = id(g)
            if gid in ids:
                shared[gid] = weakref.ref(g)
            ids.append(gid)
            buf = buffers.get(nxt)
            if buf is None:
                buf = buffers[nxt] = [None] * nxt.num_outputs
                buf[nr] = g
                heapq.heappush(self.heap, (-nxt.seq, nxt))
            else:
                old = buf[nr]
                buf[nr] = g if old is None else old + g
