"""torch's ``default_hooks``: communication hooks for
``DistributedDataParallel.register_comm_hook(process_group, hook)``.

``state`` is the process group (None: the default group). Every hook divides by the group's
size before a SUM all-reduce, so DDP with any of them averages gradients as DDP without a
hook does; the compressing ones send float16/bfloat16 (half the bytes) and write the
result back into the bucket's own dtype.
"""
from __future__ import annotations

from typing import Any, Callable

from ....core import dtypes
from ....core.tensor import Tensor
from ....futures import Future
from ...collectives import all_reduce
from ...comm_hooks import GradBucket
from ...group import resolve_group

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook",
           "fp16_compress_wrapper", "bf16_compress_wrapper"]


def _allreduce_fut(process_group: Any, tensor: Tensor) -> Future:
    """Average ``tensor`` in place over the group; a Future of it."""
    group = resolve_group(process_group)
    tensor.div_(group.size())
    work = all_reduce(tensor, group=group, async_op=True)
    assert work is not None
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group: Any, bucket: GradBucket) -> Future:
    """Average the bucket over the group (what DDP does without a hook)."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype: Any, process_group: Any, bucket: GradBucket) -> Future:
    group = resolve_group(process_group)
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())
    work = all_reduce(compressed, group=group, async_op=True)
    assert work is not None

    def decompress(fut: Future) -> Tensor:
        buffer.copy_(fut.value()[0])  # in place: no second full-size buffer
        return buffer

    return work.get_future().then(decompress)


def fp16_compress_hook(process_group: Any, bucket: GradBucket) -> Future:
    """Average the bucket in float16: cast, divide by the group's size, all-reduce, cast
    back into the bucket's buffer."""
    return _compress_hook(dtypes.float16, process_group, bucket)


def bf16_compress_hook(process_group: Any, bucket: GradBucket) -> Future:
    """:func:`fp16_compress_hook` in bfloat16 (more range, less precision)."""
    return _compress_hook(dtypes.bfloat16, process_group, bucket)


def _compress_wrapper(dtype: Any, hook: Callable[[Any, GradBucket], Future]
                      ) -> Callable[[Any, GradBucket], Future]:
    def wrapped(hook_state: Any, bucket: GradBucket) -> Future:
        bucket.set_buffer(bucket.buffer().to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(f: Future) -> Tensor:
            out = bucket.buffer()
            out.copy_(f.value())
            return out  # DDP casts it into the bucket's dtype

        return fut.then(decompress)

    return wrapped


def fp16_compress_wrapper(hook: Callable[[Any, GradBucket], Future]
                          ) -> Callable[[Any, GradBucket], Future]:
    """``hook`` run on a float16 copy of the bucket (e.g. around PowerSGD);
    ``fp16_compress_wrapper(allreduce_hook)`` does what :func:`fp16_compress_hook` does."""
    return _compress_wrapper(dtypes.float16, hook)


def bf16_compress_wrapper(hook: Callable[[Any, GradBucket], Future]
                          ) -> Callable[[Any, GradBucket], Future]:
    """:func:`fp16_compress_wrapper` in bfloat16."""
    return _compress_wrapper(dtypes.bfloat16, hook)
