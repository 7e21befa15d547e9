"""``DistributedDataParallel``: data-parallel training over a process group (torch's DDP).

Construction checks that every rank holds the same parameters (names, shapes, dtypes; a
clear error otherwise), then broadcasts parameters and buffers from rank 0.

Gradients: parameters that require grad are grouped into buckets of about
``bucket_cap_mb`` (the first one 1 MB, so communication starts early), in *reverse*
registration order (backward produces the last layers' gradients first), one bucket per
(device, dtype). A post-accumulate-grad hook on each parameter copies its gradient into
its bucket's flat buffer; when a bucket is complete it is all-reduced asynchronously
(AVG), strictly in bucket order on every rank, so the collectives match. When the last
bucket has been launched (in the hook of the last parameter to receive its gradient)
all buckets are waited for and the averaged gradients are copied back into ``.grad``, so
``.grad`` is final when ``backward()`` returns and ``optimizer.step()`` needs no change.

``find_unused_parameters=True``: after each forward the autograd graph is walked from the
outputs; parameters it does not reach count as ready at once (contributing their current
``.grad``, zeros when None), and so do, at the end of the backward pass (the engine's
``queue_callback``), parameters it reached that got no gradient. A parameter that no rank
used keeps its ``.grad`` untouched (an extra small all-reduce of the used flags per
iteration). Without it, a
parameter that gets no gradient leaves the reduction unfinished and the next forward
raises, as in torch.

``no_sync()``: gradients accumulate locally inside the block; the first backward after it
all-reduces the accumulated gradients.

``register_comm_hook(state, hook)`` (torch's communication hooks, ``comm_hooks.py``): a
complete bucket is handed to ``hook(state, GradBucket)`` instead of being all-reduced; the
Future it returns is waited for in ``_finish`` and its tensor replaces the bucket's flat
gradient.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Sequence

import numpy as np

from ..core.graph import AccumulateGrad, is_grad_enabled, no_grad_ctx
from ..autograd.engine import queue_callback
from ..core.tensor import Tensor
from ..nn.module import Module
from . import collectives as C
from .comm_hooks import (BuiltinCommHookType, GradBucket, HookType, check_comm_hook,
                         hook_result)
from .group import ProcessGroup, resolve_group
from .objects import all_gather_object
from .types import ReduceOp, Work

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1 << 20


class _Bucket:
    """Parameters whose gradients are all-reduced together through one flat buffer."""

    def __init__(self, index: int, params: list[Tensor]) -> None:
        from ..core.ops.creation import zeros
        self.index = index
        self.params = params
        self.offsets: list[int] = []
        n = 0
        for p in params:
            self.offsets.append(n)
            n += p.numel()
        self.flat = zeros((n,), dtype=params[0].dtype, device=params[0].device)
        self.pending = len(params)
        self.work: Work | None = None
        self.future: Any = None       # what a communication hook returned

    def view(self, i: int) -> Tensor:
        """The flat buffer's slice holding parameter i, shaped like it."""
        p = self.params[i]
        off = self.offsets[i]
        return self.flat[off:off + p.numel()].reshape(p.shape)


def _tensors(obj: Any) -> Iterator[Tensor]:
    """Tensors inside a (nested) output: tensor, list/tuple, dict."""
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _tensors(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _tensors(x)


def _single_device(module: Module, device_ids: Any, output_device: Any) -> Any:
    """The device ``device_ids`` names (torch: exactly one entry, the device the module
    lives on), or None. An int indexes the devices of the module's device type (of the
    default device type for a module without parameters), so ``device_ids=[local_rank]``
    means ``opencl:<local_rank>`` for an opencl module; every index names the one cpu, as
    ``cpu:N`` does in torch."""
    from ..core.device import Device, device as as_device, get_default_device
    if device_ids is None:
        return None
    ids = list(device_ids) if isinstance(device_ids, (list, tuple)) else None
    if not ids or len(ids) != 1:
        raise ValueError(f"DistributedDataParallel: device_ids must be None or a list of "
                         f"exactly one device (the module's), got {device_ids!r}")
    found = {p.device for p in module.parameters()} | {b.device for b in module.buffers()}
    if len(found) > 1:
        raise ValueError(f"DistributedDataParallel: device_ids={device_ids!r} needs a "
                         f"module on one device, but its parameters and buffers are on "
                         f"{sorted(str(d) for d in found)}; pass device_ids=None")
    here = next(iter(found)) if found else get_default_device()
    want = ids[0]
    if isinstance(want, int) and not isinstance(want, bool):
        if here.backend.spec is not None and here.backend.spec.host:
            want = here  # one cpu: every index names it (torch's cpu:N)
        else:
            count = here.backend.device_count()
            if not 0 <= want < count:
                raise ValueError(
                    f"DistributedDataParallel: device_ids=[{want}] names {here.type}:{want}, "
                    f"but this machine has {count} {here.type} device(s). Ranks that share "
                    f"devices pass device_ids=[local_rank % {count}] (and put the model "
                    f"there), or device_ids=None")
            want = as_device(f"{here.type}:{want}")
    elif not isinstance(want, Device):
        want = as_device(want)
    if found and want != here:
        raise ValueError(f"DistributedDataParallel: device_ids names {want}, but the module "
                         f"is on {here}; move it first (model.to({str(want)!r}))")
    if output_device is not None and _as_device(output_device, want) != want:
        raise ValueError(f"DistributedDataParallel: output_device={output_device!r} must be "
                         f"the device of device_ids ({want})")
    return want


def _as_device(spec: Any, like: Any) -> Any:
    """``spec`` (an int index of ``like``'s type, a device or a string) as a Device."""
    from ..core.device import device as as_device
    if isinstance(spec, int) and not isinstance(spec, bool):
        spec_host = like.backend.spec is not None and like.backend.spec.host
        return like if spec_host else as_device(f"{like.type}:{spec}")
    return as_device(spec)


def _to_device(obj: Any, dev: Any) -> Any:
    """Tensors inside a (nested) input moved to ``dev`` (torch's DDP ``_to_kwargs``)."""
    if isinstance(obj, Tensor):
        return obj if obj.device == dev else obj.to(dev)
    if isinstance(obj, tuple):
        return tuple(_to_device(x, dev) for x in obj)
    if isinstance(obj, list):
        return [_to_device(x, dev) for x in obj]
    if isinstance(obj, dict):
        return {k: _to_device(v, dev) for k, v in obj.items()}
    return obj


def _reachable_leaves(outputs: Any) -> set[int]:
    """ids of the leaf tensors the outputs' autograd graph reaches."""
    found: set[int] = set()
    stack = []
    for t in _tensors(outputs):
        if t.grad_fn is not None:
            stack.append(t.grad_fn)
        elif t.requires_grad:
            found.add(id(t))
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            found.add(id(node.variable))
            continue
        for e in node.next_functions:
            if e is not None:
                stack.append(e[0])
    return found


class DistributedDataParallel(Module):
    """Wrap ``module`` for data-parallel training: every rank runs it on its own batch;
    gradients are averaged across ``process_group`` during ``backward()``.

    ``device_ids``/``output_device``/``dim`` are accepted for torch compatibility (one
    device per process: the module's)."""

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0, broadcast_buffers: bool = True, process_group: Any = None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, init_sync: bool = True) -> None:
        super().__init__()
        self.module = module
        #: the device of ``device_ids`` (inputs are moved there in forward, as torch's
        #: DDP does), None without device_ids
        self.device = _single_device(module, device_ids, output_device)
        self.device_ids = None if self.device is None else [self.device.index]
        self.output_device = None if self.device is None else self.device.index
        group = resolve_group(process_group)
        object.__setattr__(self, "process_group", group)
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * (1 << 20))
        self.bucket_bytes_cap = cap
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        self._params = [p for _, p in named]
        self._names = [n for n, _ in named]
        if group.is_member:
            self._verify_same_model(module, group)
        self._buckets = self._make_buckets(self._params, cap)
        self._where: dict[int, tuple[_Bucket, int]] = {}
        for b in self._buckets:
            for i, p in enumerate(b.params):
                self._where[id(p)] = (b, i)
        if init_sync and group.is_member and group.size() > 1:
            self._sync_module_states()
        self._handles = [p.register_post_accumulate_grad_hook(self._on_grad)
                         for p in self._params]
        self._comm_hook: tuple[Any, HookType] | None = None
        self._reset()

    # ------------------------------------------------------------------ setup
    def _verify_same_model(self, module: Module, group: ProcessGroup) -> None:
        """All ranks must wrap the same parameters: compare names, shapes and dtypes."""
        mine = [(n, list(p.shape), p.dtype.name, p.requires_grad)
                for n, p in module.named_parameters()]
        mine += [("buffer:" + n, list(b.shape), b.dtype.name, False)
                 for n, b in module.named_buffers()]
        everyone: list = [None] * group.size()
        all_gather_object(everyone, mine, group=group)
        ref = everyone[0]
        for r, theirs in enumerate(everyone):
            if theirs == ref:
                continue
            diff = next((f"rank 0 has {a[0]!r} {a[2]}{a[1]} (requires_grad={a[3]}), rank "
                         f"{group.global_rank(r)} has {b[0]!r} {b[2]}{b[1]} "
                         f"(requires_grad={b[3]})" for a, b in zip(ref, theirs) if a != b),
                        "the lists differ in length")
            raise RuntimeError(
                f"DistributedDataParallel: ranks wrap different models: rank 0 has "
                f"{len(ref)} parameters and buffers, rank {group.global_rank(r)} has "
                f"{len(theirs)}; first difference: {diff}. Every rank must build the same "
                f"model (same layers, shapes, dtypes and requires_grad).")

    @staticmethod
    def _make_buckets(params: Sequence[Tensor], cap: int) -> list[_Bucket]:
        """Reverse order, one open bucket per (device, dtype), first buckets 1 MB."""
        buckets: list[_Bucket] = []
        open_: dict[tuple, list[Tensor]] = {}
        sizes: dict[tuple, int] = {}
        limits: dict[tuple, int] = {}

        def close(key: tuple) -> None:
            buckets.append(_Bucket(len(buckets), open_.pop(key)))
            sizes[key] = 0
            limits[key] = cap
        for p in reversed(params):
            key = (p.device, p.dtype)
            open_.setdefault(key, []).append(p)
            sizes[key] = sizes.get(key, 0) + p.nbytes
            if sizes[key] >= limits.setdefault(key, min(cap, _FIRST_BUCKET_BYTES)):
                close(key)
        for key in list(open_):
            close(key)
        return buckets

    def _sync_module_states(self) -> None:
        """Rank 0's parameters and buffers on every rank (one broadcast per bucket)."""
        g = self.process_group
        root = g.global_rank(0)
        with no_grad_ctx():
            for b in self._buckets:
                for i, p in enumerate(b.params):
                    b.view(i).copy_(p.detach())
                C.broadcast(b.flat, src=root, group=g)
                for i, p in enumerate(b.params):
                    p.detach().copy_(b.view(i))
            others = [p for p in self.module.parameters() if not p.requires_grad]
            for t in others + [b for b in self.module.buffers()]:
                C.broadcast(t.detach(), src=root, group=g)

    # --------------------------------------------------------------- iteration
    def _reset(self) -> None:
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
            b.future = None
        self._ready: set[int] = set()
        self._next = 0                 # first bucket not launched yet
        self._unused: set[int] = set()
        self._armed = False
        self._started = False          # a gradient hook fired in this iteration
        self._finished = True

    def _prepare(self, outputs: Any) -> None:
        """Start an iteration after a forward whose backward will all-reduce."""
        if self._started and not self._finished:
            missing = [n for n, p in zip(self._names, self._params) if id(p) not in self._ready]
            raise RuntimeError(
                "DistributedDataParallel: expected to have finished reduction in the prior "
                "iteration before starting a new one; these parameters got no gradient: "
                f"{missing[:10]}{' ...' if len(missing) > 10 else ''}. Pass "
                "find_unused_parameters=True if some parameters are not used in every "
                "forward, and make sure the loss depends on all outputs.")
        self._reset()
        self._armed = True
        self._finished = False
        if self.find_unused_parameters and outputs is not None:
            reached = _reachable_leaves(outputs)
            self._unused = {id(p) for p in self._params if id(p) not in reached}
            for p in self._params:
                if id(p) in self._unused:
                    # torch's reducer: an unused parameter contributes what .grad holds
                    # (None: zeros; a no_sync accumulation: that), never a new gradient
                    self._mark_ready(p, p.grad)

    def _on_grad(self, p: Tensor) -> None:
        """Post-accumulate-grad hook of every parameter."""
        g = self.process_group
        if not self.require_backward_grad_sync or not g.is_member or g.size() == 1:
            return
        if not self._armed:
            # a backward without a forward through the wrapper (e.g. a second backward
            # with retain_graph): reduce what .grad holds now. Gradients averaged before
            # are equal on every rank, so averaging the sums stays correct.
            self._prepare(None)
        if id(p) in self._ready:
            raise RuntimeError(
                "DistributedDataParallel: a parameter received a gradient twice in one "
                "iteration (a parameter marked unused by find_unused_parameters got a "
                "gradient, or it is shared in a way the hook sees twice).")
        if not self._started:
            self._started = True
            # torch's reducer finalises from the engine's final callback too: it runs once
            # this backward pass is over, whatever reached (or did not reach) the leaves
            queue_callback(self._end_of_backward)
        self._mark_ready(p, p.grad)

    def _end_of_backward(self) -> None:
        """Final callback of a backward pass that produced gradients. With
        ``find_unused_parameters``, a parameter the graph reached but that got no gradient
        (a ``Function`` returning None for it, a zero-weight branch the engine pruned) is
        unused for this iteration: it contributes its current ``.grad`` like one the
        forward did not reach, and the reduction finishes. Without it the iteration stays
        open and the next forward raises, as torch's DDP does."""
        if self._finished or not self.find_unused_parameters:
            return
        for q in self._params:
            if id(q) not in self._ready:
                self._unused.add(id(q))
                self._mark_ready(q, q.grad)

    def _mark_ready(self, p: Tensor, grad: Tensor | None) -> None:
        b, i = self._where[id(p)]
        with no_grad_ctx():
            if grad is None:
                b.view(i).zero_()
            else:
                b.view(i).copy_(grad.detach())
        self._ready.add(id(p))
        b.pending -= 1
        if b.pending == 0:
            self._launch_ready()

    def _launch_ready(self) -> None:
        """Launch complete buckets in bucket order; finish after the last one."""
        g = self.process_group
        buckets = self._buckets
        while self._next < len(buckets) and buckets[self._next].pending == 0:
            b = buckets[self._next]
            if self._comm_hook is not None:
                state, hook = self._comm_hook
                with no_grad_ctx():  # as torch's reducer: the hook's ops record no graph
                    b.future = hook(state, GradBucket(b.index, len(buckets), b.flat,
                                                      b.offsets, b.params))
            else:
                b.work = C.all_reduce(b.flat, op=ReduceOp.AVG, group=g, async_op=True)
            self._next += 1
            for earlier in buckets[:self._next - 1]:  # drive MPI progress on older ones
                if earlier.work is not None:
                    earlier.work.is_completed()
        if self._next == len(buckets) and not self._finished:
            self._finish()

    def _finish(self) -> None:
        """Wait for every bucket and write the averaged gradients into ``.grad``."""
        globally_unused: set[int] = set()
        if self.find_unused_parameters and self._unused is not None:
            from ..core.ops.creation import tensor as make
            used = make(np.array([0 if id(p) in self._unused else 1 for p in self._params],
                                 np.uint8))
            C.all_reduce(used, op=ReduceOp.MAX, group=self.process_group)
            flags = used.numpy()
            globally_unused = {id(p) for p, f in zip(self._params, flags) if not f}
        with no_grad_ctx():
            for b in self._buckets:
                if b.work is not None:
                    b.work.wait()
                if b.future is not None:
                    result = hook_result(b.future, b.index)
                    if result.numel() != b.flat.numel():
                        raise RuntimeError(
                            f"DistributedDataParallel: the communication hook returned "
                            f"{result.numel()} elements for bucket {b.index}, which holds "
                            f"{b.flat.numel()}")
                    if result is not b.flat:
                        b.flat.copy_(result.reshape(b.flat.shape))
                for i, p in enumerate(b.params):
                    if id(p) in globally_unused:
                        continue
                    avg = b.view(i)
                    if p.grad is None:
                        p.grad = avg.clone()
                    else:
                        p.grad.copy_(avg)
        self._finished = True
        self._armed = False

    # ------------------------------------------------------------------ forward
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        g = self.process_group
        sync = (is_grad_enabled() and self.require_backward_grad_sync and g.is_member and
                g.size() > 1 and bool(self._params))
        if self.broadcast_buffers and g.is_member and g.size() > 1:
            with no_grad_ctx():
                for buf in self.module.buffers():
                    C.broadcast(buf.detach(), src=g.global_rank(0), group=g)
        if sync and self._started and not self._finished:
            self._prepare(None)  # raises: the previous backward did not finish
        if self.device is not None:
            inputs, kwargs = _to_device((inputs, kwargs), self.device)
        out = self.module(*inputs, **kwargs)
        if sync:
            self._prepare(out)
        return out

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Accumulate gradients locally (no communication) inside the block."""
        prev = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = prev

    def register_comm_hook(self, state: Any, hook: HookType) -> None:
        """torch's ``register_comm_hook``: from now on each complete bucket goes to
        ``hook(state, bucket)`` (a :class:`GradBucket`) instead of the built-in averaging
        all-reduce, and the tensor of the ``torch.futures.Future`` it returns becomes the
        bucket's gradient. Call it once, before training (torch's rule)."""
        check_comm_hook(hook)
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only "
                               "be called once.")
        self._comm_hook = (state, hook)

    def _register_builtin_comm_hook(self, comm_hook_type: BuiltinCommHookType) -> None:
        """torch's built-in hooks by name: ``ALLREDUCE`` (average) or ``FP16_COMPRESS``
        (average in float16), over this module's process group."""
        from .algorithms.ddp_comm_hooks import default_hooks as H
        hooks = {BuiltinCommHookType.ALLREDUCE: H.allreduce_hook,
                 BuiltinCommHookType.FP16_COMPRESS: H.fp16_compress_hook}
        if comm_hook_type not in hooks:
            raise TypeError(f"comm_hook_type must be a BuiltinCommHookType, got "
                            f"{comm_hook_type!r}")
        self.register_comm_hook(self.process_group, hooks[comm_hook_type])

    def remove_hooks(self) -> None:
        """Detach DDP from the parameters (their hooks are removed)."""
        for h in self._handles:
            h.remove()
        self._handles = []

    def extra_repr(self) -> str:
        return (f"buckets={len(self._buckets)}, bucket_cap_mb="
                f"{self.bucket_bytes_cap / (1 << 20):g}, find_unused_parameters="
                f"{self.find_unused_parameters}")
