"""Tensor collectives with torch.distributed's signatures and in-place semantics.

Each function validates its tensors, maps torch's rules (a bool ``SUM`` is a logical OR,
``PRODUCT`` an AND; ``AVG`` needs a floating or complex dtype, as NCCL and torch), turns
list forms into one flat operand (one transport call instead of one per rank), and hands
the work to the group's transport for the tensors' device type. ``async_op=True`` returns
a :class:`Work`; otherwise the call returns once the result is in the tensors.

``src``/``dst`` are *global* ranks, as in torch; ``group_src``/``group_dst`` give ranks in
the group instead. A process outside ``group`` returns None without doing anything.

Metadata check: with ``init_process_group(check_collectives=True)`` (or
``OMNITENSOR_DIST_DEBUG=DETAIL``) every collective first compares a fingerprint of (op,
shapes, dtypes, root) across the group: one extra 16-byte all-reduce per call (tens of
microseconds), so it is off by default; a mismatch raises CollectiveMismatchError on every
rank with each rank's arguments. Without it, a mismatch shows as an MPI error (truncation),
a wrong result, or a timeout.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..core.graph import no_grad_ctx
from ..core.tensor import Tensor
from .group import ProcessGroup, _world, resolve_group
from .types import ChainedWork, ReduceOp, Work

__all__ = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
           "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter", "all_to_all",
           "all_to_all_single", "send", "recv", "isend", "irecv", "barrier",
           "get_process_group_ranks", "get_global_rank", "get_group_rank"]

_BOOL_OPS = {ReduceOp.SUM: ReduceOp.MAX, ReduceOp.PRODUCT: ReduceOp.MIN,
             ReduceOp.MAX: ReduceOp.MAX, ReduceOp.MIN: ReduceOp.MIN}


# ----------------------------------------------------------------------- helpers
def _group(group: Any) -> ProcessGroup:
    g = _world.default if group is None else group
    if g is None or not isinstance(g, ProcessGroup):
        return resolve_group(group)  # raises the right error
    return g


def _tensor(t: Any, what: str, name: str = "tensor") -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: {name} must be an omnitensor.Tensor, got "
                        f"{type(t).__name__}")
    return t


def _same(ts: Sequence[Any], ref: Tensor, what: str, name: str, n: int | None,
          same_shape: bool = True) -> list[Tensor]:
    ts = list(ts)
    if n is not None and len(ts) != n:
        raise ValueError(f"{what}: {name} must hold one tensor per rank of the group "
                         f"({n}), got {len(ts)}")
    for i, t in enumerate(ts):
        _tensor(t, what, f"{name}[{i}]")
        if t._device is not ref._device or t._dtype is not ref._dtype:
            raise ValueError(f"{what}: {name}[{i}] is {t._dtype.name} on {t._device}, but "
                             f"the input is {ref._dtype.name} on {ref._device}; all tensors "
                             f"of a collective share one dtype and device")
        if same_shape and t.shape != ref.shape:
            raise ValueError(f"{what}: {name}[{i}] has shape {tuple(t.shape)}, the input "
                             f"{tuple(ref.shape)}; they must match")
    return ts


def _op(op: Any, t: Tensor, what: str) -> ReduceOp:
    kind = t._dtype.kind
    if op is ReduceOp.SUM and kind != "b":  # the common case, checked first
        return op
    if not isinstance(op, ReduceOp):
        try:
            op = ReduceOp[str(op).upper()] if isinstance(op, str) else ReduceOp(op)
        except (KeyError, ValueError):
            raise ValueError(f"{what}: unknown reduce op {op!r}; use dist.ReduceOp.SUM, "
                             f"PRODUCT, MIN, MAX or AVG") from None
    if kind == "b":
        if op is ReduceOp.AVG:
            raise TypeError(f"{what}: ReduceOp.AVG is not defined for bool tensors")
        return _BOOL_OPS[op]
    if op is ReduceOp.AVG and kind in "iu":
        raise TypeError(f"{what}: ReduceOp.AVG needs a floating-point or complex tensor, got "
                        f"{t._dtype.name} (as torch/NCCL); all_reduce with SUM and divide")
    if kind == "c" and op in (ReduceOp.MIN, ReduceOp.MAX):
        raise TypeError(f"{what}: {op!r} is not defined for complex tensors")
    return op


def _check(g: ProcessGroup, what: str, *parts: Any) -> None:
    if g.check_collectives and g.size() > 1:
        from .mpi_backend import check_signature
        check_signature(g, what, what + repr(parts))


def _sig(t: Tensor | None) -> str:
    return "None" if t is None else f"{t._dtype.name}{list(t.shape)}"


def _done(work: Work, async_op: bool) -> Work | None:
    if async_op:
        return work
    work.wait()
    return None


def _root(g: ProcessGroup, glob: Any, local: Any, what: str, name: str) -> int:
    if local is not None:
        if glob is not None:
            raise ValueError(f"{what}: pass either {name} or group_{name}, not both")
        r = int(local)
        if not 0 <= r < g.size():
            raise ValueError(f"{what}: group_{name}={r} is outside {g.describe()}")
        return r
    return g.group_rank(0 if glob is None else glob, f"{what}: {name}")


def _flat(t: Tensor) -> Tensor:
    with no_grad_ctx():
        return t.detach().reshape(-1)


def _cat(ts: Sequence[Tensor]) -> Tensor:
    from ..core.ops.join import cat
    with no_grad_ctx():
        return cat([_flat(t) for t in ts])


def _empty_flat(n: int, ref: Tensor) -> Tensor:
    from ..core.ops.creation import empty
    return empty((n,), dtype=ref._dtype, device=ref._device)


def _unpack(flat: Tensor, outs: Sequence[Tensor]) -> None:
    """Copy consecutive chunks of ``flat`` into ``outs`` (in place, no autograd)."""
    with no_grad_ctx():
        pos = 0
        for o in outs:
            n = o.numel()
            o.copy_(flat[pos:pos + n].reshape(o.shape))
            pos += n


def _transport(g: ProcessGroup, t: Tensor) -> Any:
    return g.transport(t._device.type)


# ------------------------------------------------------------------- reductions
def all_reduce(tensor: Tensor, op: Any = ReduceOp.SUM, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` across the group; every rank gets the result in place."""
    g = _group(group)
    if not g.is_member:
        return None
    _tensor(tensor, "all_reduce")
    rop = _op(op, tensor, "all_reduce")
    if g.check_collectives:
        _check(g, "all_reduce", _sig(tensor), rop.name)
    return _done(g.transport(tensor._device.type).allreduce(tensor, rop), async_op)


def reduce(tensor: Tensor, dst: int | None = None, op: Any = ReduceOp.SUM, group: Any = None,
           async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """Reduce ``tensor`` across the group into rank ``dst``'s tensor (others unchanged)."""
    g = _group(group)
    if not g.is_member:
        return None
    _tensor(tensor, "reduce")
    rop = _op(op, tensor, "reduce")
    root = _root(g, dst, group_dst, "reduce", "dst")
    _check(g, "reduce", _sig(tensor), rop.name, root)
    return _done(_transport(g, tensor).reduce(tensor, root, rop), async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: Any = ReduceOp.SUM,  # noqa: A002 - torch's name
                          group: Any = None, async_op: bool = False) -> Work | None:
    """Reduce ``input`` (group size x output's elements, rank order) across the group;
    rank i gets chunk i of the result in ``output``."""
    g = _group(group)
    if not g.is_member:
        return None
    _tensor(output, "reduce_scatter_tensor", "output")
    _tensor(input, "reduce_scatter_tensor", "input")
    _same([output], input, "reduce_scatter_tensor", "output", None, same_shape=False)
    if input.numel() != g.size() * output.numel():
        raise ValueError(f"reduce_scatter_tensor: input has {input.numel()} elements; it "
                         f"must have group size ({g.size()}) x output's {output.numel()}")
    rop = _op(op, input, "reduce_scatter_tensor")
    _check(g, "reduce_scatter", _sig(output), rop.name)
    return _done(_transport(g, input).reduce_scatter(output, _flat(input), rop), async_op)


def reduce_scatter(output: Tensor, input_list: Sequence[Tensor], op: Any = ReduceOp.SUM,
                   group: Any = None, async_op: bool = False) -> Work | None:
    """Reduce ``input_list[i]`` across the group into rank i's ``output``."""
    g = _group(group)
    if not g.is_member:
        return None
    _tensor(output, "reduce_scatter", "output")
    ins = _same(input_list, output, "reduce_scatter", "input_list", g.size())
    rop = _op(op, output, "reduce_scatter")
    _check(g, "reduce_scatter", _sig(output), rop.name)
    return _done(_transport(g, output).reduce_scatter(output, _cat(ins), rop), async_op)


# ---------------------------------------------------------------- data movement
def broadcast(tensor: Tensor, src: int | None = None, group: Any = None,
              async_op: bool = False, group_src: int | None = None) -> Work | None:
    """Copy rank ``src``'s ``tensor`` into every rank's ``tensor``."""
    g = _group(group)
    if not g.is_member:
        return None
    _tensor(tensor, "broadcast")
    root = _root(g, src, group_src, "broadcast", "src")
    _check(g, "broadcast", _sig(tensor), root)
    return _done(_transport(g, tensor).broadcast(tensor, root), async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: Any = None,
                           async_op: bool = False) -> Work | None:
    """Every rank's ``input_tensor``, in rank order, into ``output_tensor`` (shape
    ``(size * n, ...)`` or ``(size, n, ...)``)."""
    g = _group(group)
    if not g.is_member:
        return None
    _tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    _tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
    _same([output_tensor], input_tensor, "all_gather_into_tensor", "output_tensor", None,
          same_shape=False)
    if output_tensor.numel() != g.size() * input_tensor.numel():
        raise ValueError(f"all_gather_into_tensor: output has {output_tensor.numel()} "
                         f"elements; it must have group size ({g.size()}) x input's "
                         f"{input_tensor.numel()}")
    _check(g, "all_gather", _sig(input_tensor))
    return _done(_transport(g, input_tensor).allgather(output_tensor, input_tensor),
                 async_op)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Every rank's ``tensor`` into ``tensor_list`` (one entry per rank, in order)."""
    g = _group(group)
    if not g.is_member:
        return None
    _tensor(tensor, "all_gather")
    outs = _same(tensor_list, tensor, "all_gather", "tensor_list", g.size())
    _check(g, "all_gather", _sig(tensor))
    flat = _empty_flat(g.size() * tensor.numel(), tensor)
    inner = _transport(g, tensor).allgather(flat, tensor)
    return _done(ChainedWork([inner], outs, lambda: _unpack(flat, outs)), async_op)


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int | None = None,
           group: Any = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (None elsewhere)."""
    g = _group(group)
    if not g.is_member:
        return None
    _tensor(tensor, "gather")
    root = _root(g, dst, group_dst, "gather", "dst")
    _check(g, "gather", _sig(tensor), root)
    tr = _transport(g, tensor)
    if g.rank() != root:
        if gather_list:
            raise ValueError("gather: gather_list must be None or empty on non-dst ranks")
        return _done(tr.gather(None, tensor, root), async_op)
    if gather_list is None:
        raise ValueError("gather: rank dst must pass gather_list")
    outs = _same(gather_list, tensor, "gather", "gather_list", g.size())
    flat = _empty_flat(g.size() * tensor.numel(), tensor)
    inner = tr.gather(flat, tensor, root)
    return _done(ChainedWork([inner], outs, lambda: _unpack(flat, outs)), async_op)


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None,
            group: Any = None, async_op: bool = False,
            group_src: int | None = None) -> Work | None:
    """``scatter_list[i]`` of rank ``src`` into rank i's ``tensor``."""
    g = _group(group)
    if not g.is_member:
        return None
    _tensor(tensor, "scatter")
    root = _root(g, src, group_src, "scatter", "src")
    _check(g, "scatter", _sig(tensor), root)
    if g.rank() == root:
        if scatter_list is None:
            raise ValueError("scatter: rank src must pass scatter_list")
        flat: Tensor | None = _cat(_same(scatter_list, tensor, "scatter", "scatter_list",
                                         g.size()))
    else:
        if scatter_list:
            raise ValueError("scatter: scatter_list must be None or empty on non-src ranks")
        flat = None
    return _done(_transport(g, tensor).scatter(tensor, flat, root), async_op)


def all_to_all(output_tensor_list: list[Tensor], input_tensor_list: list[Tensor],
               group: Any = None, async_op: bool = False) -> Work | None:
    """``input_tensor_list[j]`` of rank i lands in ``output_tensor_list[i]`` of rank j
    (sizes may differ per pair; the sender's and receiver's sizes must agree)."""
    g = _group(group)
    if not g.is_member:
        return None
    n = g.size()
    if not input_tensor_list:
        raise ValueError("all_to_all: input_tensor_list is empty")
    ref = _tensor(input_tensor_list[0], "all_to_all", "input_tensor_list[0]")
    ins = _same(input_tensor_list, ref, "all_to_all", "input_tensor_list", n, False)
    outs = _same(output_tensor_list, ref, "all_to_all", "output_tensor_list", n, False)
    _check(g, "all_to_all", ref._dtype.name)
    recv = [o.numel() for o in outs]
    flat = _empty_flat(sum(recv), ref)
    inner = _transport(g, ref).alltoall(flat, _cat(ins), [t.numel() for t in ins], recv)
    return _done(ChainedWork([inner], outs, lambda: _unpack(flat, outs)), async_op)


def all_to_all_single(output: Tensor, input: Tensor,  # noqa: A002 - torch's name
                      output_split_sizes: Sequence[int] | None = None,
                      input_split_sizes: Sequence[int] | None = None, group: Any = None,
                      async_op: bool = False) -> Work | None:
    """``all_to_all`` on slices of dim 0: rank i sends ``input``'s j-th split to rank j,
    which stores it as the i-th split of ``output`` (equal splits when sizes are None)."""
    g = _group(group)
    if not g.is_member:
        return None
    n = g.size()
    _tensor(input, "all_to_all_single", "input")
    _tensor(output, "all_to_all_single", "output")
    _same([output], input, "all_to_all_single", "output", None, same_shape=False)
    row_in = input.numel() // max(input.shape[0], 1) if input.ndim else 1
    row_out = output.numel() // max(output.shape[0], 1) if output.ndim else 1

    def counts(sizes: Sequence[int] | None, t: Tensor, row: int, name: str) -> list[int]:
        if sizes is None:
            if t.ndim == 0 or t.shape[0] % n:
                raise ValueError(f"all_to_all_single: {name}'s dim 0 "
                                 f"({t.shape[0] if t.ndim else 'scalar'}) is not divisible "
                                 f"by the group size {n}; pass {name}_split_sizes")
            return [t.shape[0] // n * row] * n
        sizes = [int(s) for s in sizes]
        if len(sizes) != n or sum(sizes) != t.shape[0]:
            raise ValueError(f"all_to_all_single: {name}_split_sizes={sizes} must have {n} "
                             f"entries summing to dim 0 ({t.shape[0]})")
        return [s * row for s in sizes]
    sc = counts(input_split_sizes, input, row_in, "input")
    rc = counts(output_split_sizes, output, row_out, "output")
    _check(g, "all_to_all_single", input._dtype.name)
    return _done(_transport(g, input).alltoall(output, _flat(input), sc, rc), async_op)


# ----------------------------------------------------------------- point to point
def isend(tensor: Tensor, dst: int | None = None, group: Any = None, tag: int = 0,
          group_dst: int | None = None) -> Work | None:
    """Start sending ``tensor`` to global rank ``dst``; returns a Work."""
    g = _group(group)
    if not g.is_member:
        return None
    _tensor(tensor, "isend")
    peer = _root(g, dst, group_dst, "isend", "dst")
    return _transport(g, tensor).send(tensor, peer, int(tag))


def irecv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0,
          group_src: int | None = None) -> Work | None:
    """Start receiving into ``tensor`` from global rank ``src`` (any rank when None);
    ``work.value`` is then the sender's group rank."""
    g = _group(group)
    if not g.is_member:
        return None
    _tensor(tensor, "irecv")
    peer = None if src is None and group_src is None else _root(g, src, group_src, "irecv",
                                                                "src")
    return _transport(g, tensor).recv(tensor, peer, int(tag))


def send(tensor: Tensor, dst: int | None = None, group: Any = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send ``tensor`` to global rank ``dst`` (returns once the buffer may be reused)."""
    w = isend(tensor, dst, group, tag, group_dst)
    if w is not None:
        w.wait()


def recv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into ``tensor``; returns the sender's global rank (-1 if not a member)."""
    g = _group(group)
    w = irecv(tensor, src, group, tag, group_src)
    if w is None:
        return -1
    w.wait()
    return g.global_rank(w.value)


def barrier(group: Any = None, async_op: bool = False,
            device_ids: Any = None, timeout: Any = None) -> Work | None:
    """Wait until every rank of the group reached the barrier (``timeout``, seconds or a
    timedelta, replaces the group's deadline)."""
    g = _group(group)
    if not g.is_member:
        return None
    work = g.transport("cpu").barrier()
    if async_op:
        return work
    work.wait(timeout)
    return None


# -------------------------------------------------------------------- rank maps
def get_process_group_ranks(group: Any = None) -> list[int]:
    return list(resolve_group(group).ranks)


def get_global_rank(group: Any, group_rank: int) -> int:
    return resolve_group(group).global_rank(group_rank)


def get_group_rank(group: Any, global_rank: int) -> int:
    return resolve_group(group).group_rank(global_rank)
