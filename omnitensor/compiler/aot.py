"""Compiled forwards whose backward runs outside the call (``compile(model)(x).backward()``).

A capture is below autograd, so a replayed forward has no autograd graph by itself. When a
traced call returns tensors that require grad and ran no backward of its own, the capture
also runs, still under the recorder, the backward of those outputs with respect to every
graph input that requires grad (``core.engine.grad`` with placeholder output gradients,
``retain_graph=True``, so the eager result's own graph stays usable). The nodes recorded
after that point are the backward graph: its inputs are the forward values it reads and the
output gradients, its outputs the input gradients (torch's AOTAutograd split, at the level
of backend primitives).

A replay runs the forward plan, which also returns the values the backward reads, and
attaches one autograd node (``CompiledFunctionBackward``) to the outputs; the engine calls
it with the output gradients, and it replays the backward plan. Gradients reach parameters
and upstream tensors through the engine as usual (``.grad`` accumulation, hooks on leaves).
The backward is not differentiable again (``create_graph=True`` through a compiled forward
gives first-order gradients only).
"""
from __future__ import annotations

from typing import Any

from ..core.engine import grad as _engine_grad
from ..core.graph import record
from ..core.tensor import Tensor, _make
from . import replay
from .capture import Recorder
from .ir import Graph, Input, Value

__all__ = ["Split", "capture_backward", "split"]


class Split:
    """The backward half of a captured forward."""

    def __init__(self) -> None:
        self.k = 0                                  # nodes [0, k) are the forward
        self.diff_inputs: list[tuple[Any, Value]] = []   # (input tensor, its Value)
        self.grad_values: list[Value] = []          # placeholders of the output grads
        self.grad_meta: list[tuple[Any, Any, Any]] = []   # (shape, device, dtype)
        self.results: list[Value | None] = []       # the gradient of each diff input
        self.saved: list[Value] = []                # forward values the backward reads
        self.plan: replay.Plan | None = None


def capture_backward(rec: Recorder, outs: list[Tensor]) -> Split:
    """Run, under ``rec``, the backward of ``outs`` (tensors requiring grad) with respect
    to the graph's inputs that require grad; return the split point and its Values."""
    sp = Split()
    seen: set[int] = set()
    for inp, owner in zip(rec.inputs, rec.input_tensors):
        if owner is not None and owner.requires_grad and id(owner) not in seen:
            seen.add(id(owner))
            sp.diff_inputs.append((owner, inp.value))
    sp.k = len(rec.nodes)
    if not sp.diff_inputs:
        return sp
    gouts = []
    rec._inner += 1        # the placeholders are inputs of the backward, not nodes
    try:
        for o in outs:
            real = getattr(o._device.backend, "_real", o._device.backend)
            arr = real.full(o._data.shape, 1, o._dtype.np, o._device.index)
            gouts.append(_make(arr, o._device, o._dtype))
    finally:
        rec._inner -= 1
    for g in gouts:
        sp.grad_values.append(rec._fresh(g._data))
        sp.grad_meta.append((g._data.shape, g._device, g._dtype))
    grads = _engine_grad(outs, [t for t, _v in sp.diff_inputs], grad_outputs=gouts,
                         retain_graph=True, allow_unused=True)
    sp.results = [None if g is None else rec.value_of(g._data) for g in grads]
    return sp


def split(graph: Graph, sp: Split, generators: dict[int, Any],
          passes: Any = None) -> Graph:
    """Cut ``graph`` at ``sp.k``: return the forward graph (its outputs extended by the
    values the backward reads) and plan the backward into ``sp.plan`` (``passes`` as for
    :func:`~omnitensor.compiler.replay.build_plan`)."""
    fwd_nodes, bwd_nodes = graph.nodes[:sp.k], graph.nodes[sp.k:]
    produced = {o.id for n in bwd_nodes for o in n.outputs}
    grads = {v.id for v in sp.grad_values}
    saved: dict[int, Value] = {}

    def walk(a: Any) -> None:
        if isinstance(a, Value):
            if a.id not in produced and a.id not in grads:
                saved.setdefault(a.id, a)
        elif isinstance(a, (tuple, list)):
            for x in a:
                walk(x)
        elif isinstance(a, dict):
            for x in a.values():
                walk(x)
    for n in bwd_nodes:
        walk(n.args)
        walk(n.kwargs)
    for r in sp.results:
        if r is not None:
            walk(r)
    sp.saved = list(saved.values())
    bwd = Graph(graph.device,
                [Input(v, "saved", f"saved[{i}]") for i, v in enumerate(sp.saved)] +
                [Input(v, "grad", f"grad_outputs[{i}]") for i, v in enumerate(sp.grad_values)],
                bwd_nodes, [r for r in sp.results if r is not None], [], graph.regions, {})
    gens = {i - sp.k: g for i, g in generators.items() if i >= sp.k}
    try:
        sp.plan = replay.build_plan(bwd, generators=gens, passes=passes)
    except Exception:  # a planner pass failed: the unfused backward
        if passes == ():
            raise
        sp.plan = replay.build_plan(bwd, generators=gens, passes=())
    return Graph(graph.device, graph.inputs, fwd_nodes, list(graph.outputs) + sp.saved,
                 graph.state_writes, graph.regions, graph.constants, graph.breaks,
                 graph.break_regions)


def attach(sp: Split, outs: list[Tensor], saved_arrays: list, tensors: list[Tensor]) -> None:
    """Give the replayed outputs ``outs`` one autograd node whose backward replays the
    backward plan; ``tensors`` are the current tensors of ``sp.diff_inputs``."""
    plan = sp.plan
    assert plan is not None
    meta = sp.grad_meta
    results = sp.results

    def backward(node: Any, *grads: Any) -> tuple:
        garrs = []
        for g, (shape, dev, dt) in zip(grads, meta):
            if g is None:
                real = dev.backend
                garrs.append(real.full(shape, 0, dt.np, dev.index))
            else:
                garrs.append(g._data)
        res = iter(plan(saved_arrays + garrs))
        out: list = []
        for r, t in zip(results, tensors):
            out.append(None if r is None else _make(next(res), t._device, t._dtype))
        return tuple(out)
    record("CompiledFunctionBackward", backward, outs[0] if len(outs) == 1 else tuple(outs),
           tensors)
