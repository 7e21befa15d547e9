"""The fusion pass of replay's planner: fused groups become one :class:`Launch` each.

``fusion_pass(graph, steps, device) -> steps`` (the shape ``replay.register_planner``
takes). Each group found by :mod:`.planner` becomes a launch of the device backend's
``fused_kernels`` hook (``backends/base.py``: numba on ``cpu``, OpenCL C on ``opencl``, the
same OpenCL C through dpctl on ``sycl``, CUDA C through NVRTC on ``cuda``; each renders with
``omnitensor.kernels.fused``), put where its last member was; its other members go, and so do the view nodes whose only readers were
fused (their strides are folded into the kernel's loads). A kept view node that reads a
fused value moves just after the launch that produces it.

:func:`gemm_epilogue_pass` is the same pass with GEMM groups (:mod:`.gemm`) on devices whose
backend says its matmul is the generated GEMM (``Backend.generated_gemm``); elsewhere it is
:func:`fusion_pass` exactly. It is the one registered with replay's planner.

``OMNITENSOR_FUSION=0`` or ``omnitensor.compiler.config.fuse = False`` turns the passes off (every node replays as its primitive). The
pass is conservative: if the rewritten step list would read a value before it exists,
or the device has no fused-kernel launcher, it returns the steps unchanged.
"""
from __future__ import annotations

import os
from typing import Any, Callable

from ..ir import DTypeName, Node, Value
from ..replay import Launch
from . import planner as _planner
from ...kernels.fused_spec import coalesce

VIEWS = _planner.VIEW_OPS


def launcher_for(backend: Any) -> Callable[..., Any] | None:
    """The fused-kernel launcher class of ``backend`` (its ``fused_kernels`` hook), or None
    where it has none or lacks the JIT it needs (numba, the ``compile`` extra)."""
    make = backend.hook("fused_kernels")
    return None if make is None else make()


def _values(a: Any) -> list[Value]:
    if isinstance(a, Value):
        return [a]
    if isinstance(a, (tuple, list)):
        out: list[Value] = []
        for x in a:
            out += _values(x)
        return out
    return []


def _reads(node: Node) -> list[Value]:
    return _values(list(node.args)) + _values(list(node.kwargs.values()))


def fusion_pass(graph: Any, steps: list, device: Any) -> list:
    """Replace fusible groups of ``steps`` (all Nodes) by launches on ``device``; matmul
    stays a library call."""
    return _fuse(graph, steps, device, False)


def gemm_epilogue_pass(graph: Any, steps: list, device: Any) -> list:
    """:func:`fusion_pass`, and where ``device``'s matmul is omnitensor's generated GEMM,
    each matmul with the elementwise ops on its product as one GEMM launch."""
    return _fuse(graph, steps, device, bool(getattr(device.backend, "generated_gemm", False)))


def _fuse(graph: Any, steps: list, device: Any, gemm: bool) -> list:
    if os.environ.get("OMNITENSOR_FUSION", "1").strip() == "0":
        return steps
    from ..api import config
    if config.fuse is False:  # compiler.config.fuse = False: every plan replays unfused
        return steps
    if not steps or not all(isinstance(s, Node) for s in steps):
        return steps
    make = launcher_for(device.backend)
    if make is None:
        return steps

    class _G:  # the planner reads nodes, inputs, outputs and state_writes
        nodes = steps
        inputs = graph.inputs
        outputs = graph.outputs
        state_writes = graph.state_writes
    groups, members, needed = _planner.plan(_G, gemm)
    if not groups:
        return steps
    by_last = {p.members[-1]: p for p in groups}
    handles: dict[int, Any] = {}
    build_all = getattr(make, "build_all", None)
    if build_all is not None:  # C dialects: one program for the whole plan
        hs = build_all([coalesce(p.spec) for p in groups], device)
        handles = {id(p): h for p, h in zip(groups, hs)}
    produced_by_view = {n.outputs[0].id: n for n in steps if n.op in VIEWS and n.outputs}
    available = {i.value.id for i in graph.inputs}
    out: list = []
    deferred: list[Node] = []

    def flush() -> None:
        moved = True
        while moved:
            moved = False
            for n in list(deferred):
                if all(v.id in available for v in _reads(n)):
                    deferred.remove(n)
                    out.append(n)
                    available.update(v.id for v in n.outputs)
                    moved = True

    for i, node in enumerate(steps):
        if i in by_last:
            p = by_last[i]
            if not p.outputs:
                continue  # nothing reads what the group computes (dead in the capture too)
            launch = _launch(p, steps, produced_by_view, make, device, handles.get(id(p)))
            if not all(v.id in available for v in launch.inputs):
                return steps
            out.append(launch)
            available.update(v.id for v in launch.outputs)
            flush()
            continue
        if i in members:
            continue
        if node.op in VIEWS and not node.kwargs.get("out"):
            if not any(v.id in needed for v in node.outputs):
                continue
            if not all(v.id in available for v in _reads(node)):
                deferred.append(node)
                continue
        elif not all(v.id in available for v in _reads(node)):
            return steps
        out.append(node)
        available.update(v.id for v in node.outputs)
        flush()
    if deferred:
        return steps
    return out


def _launch(p: _planner.Planned, steps: list, views: dict[int, Node], make: Any,
            device: Any, handle: Any = None) -> Launch:
    inputs = tuple(_value_of(vid, steps, p) for vid in p.arg_vids)
    n_in = len(inputs)
    fresh = [(tuple(v.shape), str(v.dtype), v.id not in p.escaping) for v in p.fresh]
    out_args = [arg for _v, arg in p.outputs]
    inplace_args = sorted({arg for _v, arg in p.outputs if arg < n_in})
    outputs = tuple(v for v, _arg in p.outputs)
    writes = tuple((v, inputs[arg]) for v, arg in p.outputs if arg < n_in)
    fallback = _fallback(p, steps, views, inputs, outputs, device)
    spec = coalesce(p.spec)
    fn = make(spec, n_in, fresh, out_args, inplace_args, fallback, device) if handle is None \
        else make(spec, n_in, fresh, out_args, inplace_args, fallback, device, handle)
    reshaped = [(k, tuple(v.shape)) for k, (v, arg) in enumerate(p.outputs)
                if arg >= n_in and tuple(v.shape) != tuple(p.fresh[arg - n_in].shape)]
    if reshaped:  # values in one memory, seen with another shape (a GEMM's (B, T, N) result)
        fn = _reshaping(fn, reshaped, device, len(outputs))
    name = "fused_gemm" if spec.gemm is not None else "fused"
    return Launch(fn, inputs, outputs, name=f"{name}[{len(p.members)}]", writes=writes)


def _reshaping(fn: Any, reshaped: list[tuple[int, tuple]], device: Any, n_out: int
               ) -> Callable[..., Any]:
    """``fn`` with outputs ``k`` of ``reshaped`` returned as views of their array in
    ``shape``."""
    reshape = device.backend.reshape

    def run(*arrays: Any) -> Any:
        res = fn(*arrays)
        outs = [res] if n_out == 1 else list(res)
        for k, shape in reshaped:
            outs[k] = reshape(outs[k], shape)
        return outs[0] if n_out == 1 else tuple(outs)
    return run


def _value_of(vid: int, steps: list, p: _planner.Planned) -> Value:
    for n in steps:
        for v in n.outputs:
            if v.id == vid:
                return v
        for v in _reads(n):
            if v.id == vid:
                return v
    raise KeyError(vid)


def _fallback(p: _planner.Planned, steps: list, views: dict[int, Node],
              inputs: tuple[Value, ...], outputs: tuple[Value, ...], device: Any
              ) -> Callable[..., Any]:
    """Run the group's original nodes one primitive at a time (for layouts the kernel
    does not take: an in-place buffer that is not contiguous)."""
    nodes = [steps[i] for i in p.members]
    have = {v.id for v in inputs}
    pre: list[Node] = []

    def need(v: Value) -> None:
        if v.id in have:
            return
        n = views.get(v.id)
        if n is None:
            return
        for r in _reads(n):
            need(r)
        have.add(v.id)
        pre.append(n)

    for n in nodes:
        for r in _reads(n):
            need(r)
        have.update(v.id for v in n.outputs)
    order = pre + nodes
    order.sort(key=lambda n: next(i for i, s in enumerate(steps) if s is n))

    # the backend now, as the plan's other steps bind theirs: at replay time a segmented
    # call has swapped in its deferring proxy, which would take these primitives for the
    # program's own (and run the segment's in-place writes a second time)
    be = device.backend

    def run(*arrays: Any) -> Any:
        from ...core.dtypes import as_dtype
        env = {v.id: a for v, a in zip(inputs, arrays)}

        def res(a: Any) -> Any:
            if isinstance(a, Value):
                return env[a.id]
            if isinstance(a, DTypeName):
                return as_dtype(str(a)).np
            if isinstance(a, tuple):
                return tuple(res(x) for x in a)
            if isinstance(a, list):
                return [res(x) for x in a]
            return a
        for n in order:
            fn = be.hook(n.op[5:]) if n.op.startswith("hook:") else getattr(be, n.op)
            r = fn(*[res(a) for a in n.args], **{k: res(v) for k, v in n.kwargs.items()})
            if n.inplace_of is not None:
                r = env[n.inplace_of.id]
            if len(n.outputs) == 1:
                env[n.outputs[0].id] = r
        outs = [env[v.id] for v in outputs]
        return outs[0] if len(outs) == 1 else tuple(outs)
    return run
