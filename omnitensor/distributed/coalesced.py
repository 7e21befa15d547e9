"""torch.distributed's coalesced and ``*_single`` collectives and ``monitored_barrier``,
built on the collectives of ``collectives.py`` (one transport call per coalesced list:
the tensors travel as one flat operand).
"""
from __future__ import annotations

from typing import Any, Sequence

from ..core.tensor import Tensor
from .collectives import (_cat, _check, _done, _empty_flat, _group, _op,
                          _same, _sig, _tensor, _transport, _unpack, all_gather_into_tensor,
                          irecv, isend, reduce_scatter_tensor)
from .types import ChainedWork, DistributedTimeoutError, ReduceOp, Work

__all__ = ["all_reduce_coalesced", "all_gather_coalesced", "all_gather_single",
           "reduce_scatter_single", "monitored_barrier"]


def _list(tensors: Any, what: str, name: str) -> list[Tensor]:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)) or \
            not tensors:
        raise TypeError(f"{what}: {name} must be a non-empty list of tensors")
    return _same(tensors, _tensor(tensors[0], what, name), what, name, None,
                 same_shape=False)


def all_reduce_coalesced(tensors: Sequence[Tensor], op: Any = ReduceOp.SUM,
                         group: Any = None, async_op: bool = False) -> Work | None:
    """All-reduce every tensor of ``tensors`` (one dtype and device, any shapes) in
    place, in one transport call."""
    g = _group(group)
    if not g.is_member:
        return None
    ts = _list(tensors, "all_reduce_coalesced", "tensors")
    rop = _op(op, ts[0], "all_reduce_coalesced")
    _check(g, "all_reduce_coalesced", *(_sig(t) for t in ts), rop.name)
    flat = _cat(ts)
    inner = _transport(g, ts[0]).allreduce(flat, rop)
    return _done(ChainedWork([inner], ts, lambda: _unpack(flat, ts)), async_op)


def all_gather_coalesced(output_tensor_lists: list[list[Tensor]],
                         input_tensor_list: list[Tensor], group: Any = None,
                         async_op: bool = False) -> Work | None:
    """``output_tensor_lists[i][j]`` = rank i's ``input_tensor_list[j]``, for every rank
    i, in one transport call."""
    g = _group(group)
    if not g.is_member:
        return None
    ins = _list(input_tensor_list, "all_gather_coalesced", "input_tensor_list")
    if len(output_tensor_lists) != g.size():
        raise ValueError(f"all_gather_coalesced: output_tensor_lists must have group size "
                         f"({g.size()}) lists, got {len(output_tensor_lists)}")
    outs: list[Tensor] = []
    for row in output_tensor_lists:
        if len(row) != len(ins):
            raise ValueError(f"all_gather_coalesced: each output list must have "
                             f"{len(ins)} tensors (one per input), got {len(row)}")
        for o, i in zip(row, ins):
            _same([o], i, "all_gather_coalesced", "output_tensor_lists", None)
            outs.append(o)
    _check(g, "all_gather_coalesced", *(_sig(t) for t in ins))
    src = _cat(ins)
    flat = _empty_flat(g.size() * src.numel(), src)
    inner = _transport(g, src).allgather(flat, src)
    return _done(ChainedWork([inner], outs, lambda: _unpack(flat, outs)), async_op)


def all_gather_single(output_tensor: Tensor, input_tensor: Tensor, group: Any = None,
                      async_op: bool = False) -> Work | None:
    """Every rank's ``input_tensor`` into ``output_tensor`` (their concatenation or stack
    along dim 0): :func:`all_gather_into_tensor`."""
    return all_gather_into_tensor(output_tensor, input_tensor, group, async_op)


def reduce_scatter_single(output: Tensor, input: Tensor,  # noqa: A002 - torch's name
                          op: Any = ReduceOp.SUM, group: Any = None,
                          async_op: bool = False) -> Work | None:
    """Reduce ``input`` (the ranks' chunks, concatenated or stacked along dim 0) and give
    rank i chunk i: :func:`reduce_scatter_tensor`."""
    return reduce_scatter_tensor(output, input, op, group, async_op)


#: the tag of monitored_barrier's messages (above the tags programs use)
_BARRIER_TAG = 32002


def _wait(work: Work | None, seconds: float) -> None:
    if work is not None:  # None only outside the group, checked before
        work.wait(seconds)


def monitored_barrier(group: Any = None, timeout: Any = None,
                      wait_all_ranks: bool = False) -> None:
    """A barrier that names the ranks that did not reach it: every rank reports to rank
    0, which waits ``timeout`` (default: the group's) and raises naming the first missing
    rank (every one with ``wait_all_ranks``), or releases them all."""
    from ..core.ops.creation import zeros
    g = _group(group)
    if not g.is_member:
        return
    seconds = g.timeout if timeout is None else (
        timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout))
    token = zeros((1,), device="cpu")
    if g.rank() != 0:
        _wait(isend(token, group=g, group_dst=0, tag=_BARRIER_TAG), seconds)
        _wait(irecv(token, group=g, group_src=0, tag=_BARRIER_TAG), seconds)
        return
    import time
    deadline = time.monotonic() + seconds
    missing = []
    for r in range(1, g.size()):
        try:
            _wait(irecv(zeros((1,), device="cpu"), group=g, group_src=r, tag=_BARRIER_TAG),
                  max(deadline - time.monotonic(), 1e-3))
        except DistributedTimeoutError:
            missing.append(r)  # the receive was withdrawn: the group stays usable
            if not wait_all_ranks:
                break
    if missing:
        ms = int(seconds * 1000)
        who = (f"Rank {missing[0]}" if len(missing) == 1 else
               "Ranks " + ", ".join(str(r) for r in missing))
        raise DistributedTimeoutError(f"[Rank 0]: {who} failed to pass monitoredBarrier "
                                      f"in {ms} ms")
    for r in range(1, g.size()):
        _wait(isend(token, group=g, group_dst=r, tag=_BARRIER_TAG), seconds)
