"""``torch.distributed.nn.functional``: out-of-place collectives with gradients.

Each forward runs the collective of :mod:`omnitensor.distributed` on copies of its inputs,
and each backward is the collective that distributes the gradient back, as torch defines
them: all_reduce <-> all_reduce (SUM), all_gather <-> reduce_scatter of the gradients,
broadcast <-> reduce to the source, scatter <-> gather, all_to_all <-> all_to_all.
"""
from __future__ import annotations

from typing import Any, Sequence

from ...autograd import Function
from ...core.tensor import Tensor
from .. import collectives as C
from ..group import get_rank, get_world_size
from ..types import ReduceOp

__all__ = ["all_gather", "all_reduce", "all_to_all", "all_to_all_single", "broadcast",
           "gather", "reduce", "reduce_scatter", "scatter"]


def _size(group: Any) -> int:
    return get_world_size(group)


class _AllReduce(Function):
    @staticmethod
    def forward(ctx: Any, op: Any, group: Any, tensor: Tensor) -> Tensor:
        ctx.group, ctx.op = group, op
        out = tensor.clone()
        C.all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        if ctx.op not in (ReduceOp.SUM, ReduceOp.AVG):
            raise RuntimeError(f"all_reduce: the gradient is defined for SUM and AVG only, "
                               f"not {ctx.op}")
        g = grad.contiguous().clone()
        C.all_reduce(g, op=ctx.op, group=ctx.group)
        return None, None, g


def all_reduce(tensor: Tensor, op: Any = ReduceOp.SUM, group: Any = None) -> Tensor:
    """A new tensor: ``tensor`` reduced over every rank (differentiable)."""
    return _AllReduce.apply(op, group, tensor)


class _Broadcast(Function):
    @staticmethod
    def forward(ctx: Any, src: int, group: Any, tensor: Tensor) -> Tensor:
        ctx.src, ctx.group = src, group
        out = tensor.clone()
        C.broadcast(out, src=src, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        g = grad.contiguous().clone()
        C.reduce(g, dst=ctx.src, op=ReduceOp.SUM, group=ctx.group)
        if get_rank(ctx.group) != ctx.src:
            g = g * 0
        return None, None, g


def broadcast(tensor: Tensor, src: int, group: Any = None) -> Tensor:
    """``src``'s tensor on every rank (differentiable: gradients sum at ``src``)."""
    return _Broadcast.apply(src, group, tensor)


class _Reduce(Function):
    @staticmethod
    def forward(ctx: Any, dst: int, op: Any, group: Any, tensor: Tensor) -> Tensor:
        ctx.dst, ctx.group = dst, group
        out = tensor.clone()
        C.reduce(out, dst=dst, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        g = grad.contiguous().clone()
        C.broadcast(g, src=ctx.dst, group=ctx.group)
        return None, None, None, g


def reduce(tensor: Tensor, dst: int, op: Any = ReduceOp.SUM, group: Any = None) -> Tensor:
    """``tensor`` reduced onto rank ``dst`` (differentiable)."""
    return _Reduce.apply(dst, op, group, tensor)


class _AllGather(Function):
    @staticmethod
    def forward(ctx: Any, group: Any, tensor: Tensor) -> tuple:
        ctx.group = group
        outs = [tensor.new_empty(tuple(tensor.shape)) for _ in range(_size(group))]
        C.all_gather(outs, tensor.contiguous(), group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> tuple:
        g = grads[0].new_empty(tuple(grads[0].shape))
        C.reduce_scatter(g, [x.contiguous() for x in grads], op=ReduceOp.SUM, group=ctx.group)
        return None, g


def all_gather(tensor: Tensor, group: Any = None) -> tuple:
    """Every rank's ``tensor``, as a tuple in rank order (differentiable)."""
    return _AllGather.apply(group, tensor)


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx: Any, op: Any, group: Any, output: Tensor, *inputs: Tensor) -> Tensor:
        ctx.group = group
        out = output.new_empty(tuple(output.shape))
        C.reduce_scatter(out, [x.contiguous() for x in inputs], op=op, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        gs = [grad.new_empty(tuple(grad.shape)) for _ in range(_size(ctx.group))]
        C.all_gather(gs, grad.contiguous(), group=ctx.group)
        return (None, None, None) + tuple(gs)


def reduce_scatter(output: Tensor, input_list: Sequence[Tensor], op: Any = ReduceOp.SUM,
                   group: Any = None) -> Tensor:
    """Rank ``r`` gets the reduction of every rank's ``input_list[r]`` (differentiable)."""
    return _ReduceScatter.apply(op, group, output, *input_list)


class _Gather(Function):
    @staticmethod
    def forward(ctx: Any, dst: int, group: Any, tensor: Tensor) -> tuple:
        ctx.dst, ctx.group = dst, group
        outs = [tensor.new_zeros(tuple(tensor.shape)) for _ in range(_size(group))]
        mine = get_rank(group) == dst
        C.gather(tensor.contiguous(), outs if mine else None, dst=dst, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> tuple:
        g = grads[0].new_empty(tuple(grads[0].shape))
        mine = get_rank(ctx.group) == ctx.dst
        C.scatter(g, [x.contiguous() for x in grads] if mine else None, src=ctx.dst,
                  group=ctx.group)
        return None, None, g


def gather(tensor: Tensor, dst: int = 0, group: Any = None) -> tuple:
    """Every rank's ``tensor`` on rank ``dst`` (zeros elsewhere), differentiable."""
    return _Gather.apply(dst, group, tensor)


class _Scatter(Function):
    @staticmethod
    def forward(ctx: Any, src: int, group: Any, *tensors: Tensor) -> Tensor:
        ctx.src, ctx.group = src, group
        out = tensors[0].new_empty(tuple(tensors[0].shape))
        mine = get_rank(group) == src
        C.scatter(out, [t.contiguous() for t in tensors] if mine else None, src=src,
                  group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        outs = [grad.new_zeros(tuple(grad.shape)) for _ in range(_size(ctx.group))]
        mine = get_rank(ctx.group) == ctx.src
        C.gather(grad.contiguous(), outs if mine else None, dst=ctx.src, group=ctx.group)
        return (None, None) + tuple(outs)


def scatter(tensors: Sequence[Tensor], src: int = 0, group: Any = None) -> Tensor:
    """Rank ``r`` gets ``tensors[r]`` of rank ``src`` (differentiable)."""
    return _Scatter.apply(src, group, *tensors)


class _AllToAll(Function):
    @staticmethod
    def forward(ctx: Any, group: Any, *inputs: Tensor) -> tuple:
        ctx.group = group
        outs = [t.new_empty(tuple(t.shape)) for t in inputs]
        C.all_to_all(outs, [t.contiguous() for t in inputs], group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> tuple:
        gs = [g.new_empty(tuple(g.shape)) for g in grads]
        C.all_to_all(gs, [g.contiguous() for g in grads], group=ctx.group)
        return (None,) + tuple(gs)


def all_to_all(output_tensor_list: Sequence[Tensor], input_tensor_list: Sequence[Tensor],
               group: Any = None) -> tuple:
    """Rank ``r`` sends ``input_tensor_list[s]`` to rank ``s`` (differentiable)."""
    return _AllToAll.apply(group, *input_tensor_list)


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx: Any, out_splits: Any, in_splits: Any, group: Any, output: Tensor,
                input: Tensor) -> Tensor:  # noqa: A002
        ctx.splits, ctx.group, ctx.in_shape = (out_splits, in_splits), group, tuple(input.shape)
        out = output.new_empty(tuple(output.shape))
        C.all_to_all_single(out, input.contiguous(), out_splits, in_splits, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        out_splits, in_splits = ctx.splits
        g = grad.new_empty(ctx.in_shape)
        C.all_to_all_single(g, grad.contiguous(), in_splits, out_splits, group=ctx.group)
        return None, None, None, None, g


def all_to_all_single(output: Tensor, input: Tensor,  # noqa: A002
                      output_split_sizes: Any = None, input_split_sizes: Any = None,
                      group: Any = None) -> Tensor:
    """``input`` split along dim 0 and exchanged between ranks (differentiable)."""
    return _AllToAllSingle.apply(output_split_sizes, input_split_sizes, group, output, input)
