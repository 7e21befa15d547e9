"""Batched point-to-point (``P2POp``, ``batch_isend_irecv``) and the object forms of
send/recv (``send_object_list``, ``recv_object_list``), as torch.distributed's.

``batch_isend_irecv`` starts every operation before returning their works: MPI's
nonblocking sends and receives complete in any order, so a ring of sends and receives
posted together cannot deadlock (what torch's NCCL coalescing guarantees).
"""
from __future__ import annotations

from typing import Any, Callable

from .collectives import _group, _root, _tensor, irecv, isend
from .objects import decode, encode
from .types import Work

__all__ = ["P2POp", "batch_isend_irecv", "send_object_list", "recv_object_list"]


class P2POp:
    """One point-to-point operation for :func:`batch_isend_irecv`: ``op`` is
    ``isend`` or ``irecv``, ``peer`` a global rank (or ``group_peer`` a rank in
    ``group``)."""

    def __init__(self, op: Callable, tensor: Any, peer: int | None = None,
                 group: Any = None, tag: int = 0, group_peer: int | None = None) -> None:
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``torch.distributed.isend`` or ``torch.distributed.irecv``.")
        _tensor(tensor, "P2POp")
        self.op = op
        self.tensor = tensor
        self.group = _group(group)
        if peer is None and group_peer is None:
            raise ValueError("P2POp: pass peer (a global rank) or group_peer")
        self.group_peer = _root(self.group, peer, group_peer, "P2POp", "peer")
        self.peer = self.group.global_rank(self.group_peer)
        self.tag = tag

    def __repr__(self) -> str:
        me = self.group.rank()
        src, dst = (me, self.group_peer) if self.op is isend else (self.group_peer, me)
        return (f"P2POp({self.op.__name__} pg={self.group.name}, group_src={src}, "
                f"group_dst={dst},  {self.tensor.shape}, {self.tensor.dtype})")


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list[Work]:
    """Start every send and receive of ``p2p_op_list`` (all on one group) and return
    their works, to wait on."""
    if not isinstance(p2p_op_list, list) or not all(
            isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    if not p2p_op_list:
        raise ValueError("batch_isend_irecv: p2p_op_list must not be empty")
    group = p2p_op_list[0].group
    if any(p.group is not group for p in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    works = []
    for p in p2p_op_list:
        key = "group_dst" if p.op is isend else "group_src"
        work = p.op(p.tensor, group=group, tag=p.tag, **{key: p.group_peer})
        if work is not None:
            works.append(work)
    return works


def send_object_list(object_list: list, dst: int | None = None, group: Any = None,
                     device: Any = None, group_dst: int | None = None,
                     use_batch: bool = False) -> None:
    """Send the picklable objects of ``object_list`` to global rank ``dst`` (or
    ``group_dst``); the receiver's :func:`recv_object_list` fills its list."""
    from .mpi_backend import send_bytes
    g = _group(group)
    if not g.is_member:
        return
    peer = _root(g, dst, group_dst, "send_object_list", "dst")
    if peer == g.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the "
                         "same as the rank of the current process.")
    send_bytes(g, encode(list(object_list)), peer, "send_object_list")


def recv_object_list(object_list: list, src: int | None = None, group: Any = None,
                     device: Any = None, group_src: int | None = None,
                     use_batch: bool = False) -> int:
    """Fill ``object_list`` (as long as the sender's) with the objects sent by global
    rank ``src`` (any rank when None); returns the sender's global rank (-1 when this
    process is not in ``group``)."""
    from .mpi_backend import recv_bytes
    g = _group(group)
    if not g.is_member:
        return -1
    peer = None if src is None and group_src is None else _root(
        g, src, group_src, "recv_object_list", "src")
    data, sender = recv_bytes(g, peer, "recv_object_list")
    got = decode(data)
    if len(got) != len(object_list):
        raise ValueError(f"recv_object_list: object_list has {len(object_list)} entries "
                         f"but rank {g.global_rank(sender)} sent {len(got)}")
    object_list[:] = got
    return g.global_rank(sender)
