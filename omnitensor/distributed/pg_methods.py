"""torch's lower-level collective API: ``ProcessGroup`` methods taking lists of tensors
and an options object (``pg.allreduce([t], AllreduceOptions())``), and those option
types. Each method calls the matching collective of ``collectives.py`` on the group with
``async_op=True`` and returns its :class:`Work` (torch's methods always return one).
Ranks in the options (``rootRank``) are ranks *in the group*, as torch's.
"""
from __future__ import annotations

import dataclasses
import datetime
from typing import Any, Sequence

from .types import ReduceOp

__all__ = ["AllreduceOptions", "AllreduceCoalescedOptions", "BroadcastOptions",
           "ReduceOptions", "GatherOptions", "ScatterOptions", "ReduceScatterOptions",
           "AllToAllOptions", "BarrierOptions", "ProcessGroupMethods"]

#: torch's "no timeout given" (-1 ms): the group's own timeout applies
_UNSET_TIMEOUT = datetime.timedelta(milliseconds=-1)


def _timeout_field() -> Any:
    return dataclasses.field(default=_UNSET_TIMEOUT)


@dataclasses.dataclass
class AllreduceOptions:
    """Options of ``ProcessGroup.allreduce``."""
    reduceOp: ReduceOp = ReduceOp.SUM  # torch's attribute names
    timeout: datetime.timedelta = _timeout_field()
    asyncOp: bool = True


@dataclasses.dataclass
class AllreduceCoalescedOptions(AllreduceOptions):
    """Options of ``ProcessGroup.allreduce_coalesced``."""


@dataclasses.dataclass
class ReduceScatterOptions(AllreduceOptions):
    """Options of ``ProcessGroup.reduce_scatter``."""


@dataclasses.dataclass
class BroadcastOptions:
    """Options of ``ProcessGroup.broadcast`` (``rootRank`` in the group)."""
    rootRank: int = 0
    rootTensor: int = 0
    timeout: datetime.timedelta = _timeout_field()
    asyncOp: bool = True


@dataclasses.dataclass
class ReduceOptions(BroadcastOptions):
    """Options of ``ProcessGroup.reduce``."""
    reduceOp: ReduceOp = ReduceOp.SUM


@dataclasses.dataclass
class GatherOptions:
    """Options of ``ProcessGroup.gather``."""
    rootRank: int = 0
    timeout: datetime.timedelta = _timeout_field()
    asyncOp: bool = True


@dataclasses.dataclass
class ScatterOptions(GatherOptions):
    """Options of ``ProcessGroup.scatter``."""


@dataclasses.dataclass
class AllToAllOptions:
    """Options of ``ProcessGroup.alltoall_base``."""
    timeout: datetime.timedelta = _timeout_field()
    asyncOp: bool = True


@dataclasses.dataclass
class BarrierOptions:
    """Options of ``ProcessGroup.barrier``."""
    device_ids: list = dataclasses.field(default_factory=list)
    timeout: datetime.timedelta = _timeout_field()
    device: Any = None
    asyncOp: bool = True


def _one(tensors: Any, what: str) -> Any:
    ts = [tensors] if not isinstance(tensors, (list, tuple)) else list(tensors)
    if len(ts) != 1:
        raise ValueError(f"ProcessGroup.{what}: one tensor per process (omnitensor binds "
                         f"one device per rank), got {len(ts)}")
    return ts[0]


class ProcessGroupMethods:
    """The list-and-options collective methods of torch's ``ProcessGroup``."""

    def rank(self) -> int:
        raise NotImplementedError

    def allreduce(self, tensors: Any, opts: Any = None) -> Any:
        from .collectives import all_reduce
        op = opts if isinstance(opts, ReduceOp) else (opts or AllreduceOptions()).reduceOp
        return all_reduce(_one(tensors, "allreduce"), op, self, async_op=True)

    def allreduce_coalesced(self, tensors: Sequence[Any], opts: Any = None) -> Any:
        from .coalesced import all_reduce_coalesced
        op = (opts or AllreduceCoalescedOptions()).reduceOp
        return all_reduce_coalesced(list(tensors), op, self, async_op=True)

    def broadcast(self, tensors: Any, opts: Any = None) -> Any:
        from .collectives import broadcast
        o = opts or BroadcastOptions()
        return broadcast(_one(tensors, "broadcast"), group=self, async_op=True,
                         group_src=o.rootRank)

    def reduce(self, tensors: Any, opts: Any = None) -> Any:
        from .collectives import reduce
        o = opts or ReduceOptions()
        return reduce(_one(tensors, "reduce"), None, o.reduceOp, self, async_op=True,
                      group_dst=o.rootRank)

    def allgather(self, output_tensors: Sequence[Sequence[Any]], input_tensors: Any,
                  opts: Any = None) -> Any:
        from .collectives import all_gather
        return all_gather(list(_one(output_tensors, "allgather")),
                          _one(input_tensors, "allgather"), self, async_op=True)

    def gather(self, output_tensors: Sequence[Sequence[Any]], input_tensors: Any,
               opts: Any = None) -> Any:
        from .collectives import gather
        o = opts or GatherOptions()
        outs = list(_one(output_tensors, "gather")) if self.rank() == o.rootRank else None
        return gather(_one(input_tensors, "gather"), outs, group=self, async_op=True,
                      group_dst=o.rootRank)

    def scatter(self, output_tensors: Any, input_tensors: Sequence[Sequence[Any]],
                opts: Any = None) -> Any:
        from .collectives import scatter
        o = opts or ScatterOptions()
        ins = list(_one(input_tensors, "scatter")) if self.rank() == o.rootRank else None
        return scatter(_one(output_tensors, "scatter"), ins, group=self, async_op=True,
                       group_src=o.rootRank)

    def reduce_scatter(self, output_tensors: Any, input_tensors: Sequence[Sequence[Any]],
                       opts: Any = None) -> Any:
        from .collectives import reduce_scatter
        o = opts or ReduceScatterOptions()
        return reduce_scatter(_one(output_tensors, "reduce_scatter"),
                              list(_one(input_tensors, "reduce_scatter")), o.reduceOp,
                              self, async_op=True)

    def alltoall_base(self, output: Any, input: Any,  # noqa: A002 - torch's name
                      output_split_sizes: list[int], input_split_sizes: list[int],
                      opts: Any = None) -> Any:
        from .collectives import all_to_all_single
        return all_to_all_single(output, input, output_split_sizes or None,
                                 input_split_sizes or None, self, async_op=True)

    def barrier(self, opts: Any = None) -> Any:
        from .collectives import barrier
        return barrier(self, async_op=True)
