"""DDP communication hooks (torch's ``register_comm_hook`` contract): :class:`GradBucket`,
the hook's argument, and :class:`BuiltinCommHookType`.

A hook is ``hook(state, bucket) -> Future[Tensor]``. DDP calls it once per bucket per
iteration, in bucket order, when the bucket's gradients are all in its flat buffer
(``bucket.buffer()``, the *local* gradients, not yet divided by the world size: the hook
does the division, as torch's ``allreduce_hook`` does). The Future's value replaces the
bucket's flat gradient; DDP copies it (cast to the bucket's dtype) into each parameter's
``.grad``. DDP waits on the Futures at the end of the backward pass, so a Future may be
completed lazily (``Work.get_future()`` drives its collective when waited on).
"""
from __future__ import annotations

import enum
import inspect
from typing import Any, Callable

from ..core.tensor import Tensor
from ..futures import Future

__all__ = ["GradBucket", "BuiltinCommHookType", "check_comm_hook", "hook_result"]


class BuiltinCommHookType(enum.Enum):
    """torch's ``torch.distributed.BuiltinCommHookType``: the hooks
    ``DistributedDataParallel._register_builtin_comm_hook`` names."""

    ALLREDUCE = 1
    FP16_COMPRESS = 2


class GradBucket:
    """One bucket of gradients, as a communication hook sees it (torch's
    ``torch.distributed.GradBucket``): a flat buffer holding the gradients of
    :meth:`parameters` back to back."""

    def __init__(self, index: int, bucket_count: int, buffer: Tensor,
                 offsets: list[int], parameters: list[Tensor]) -> None:
        self._index = index
        self._count = bucket_count
        self._buffer = buffer
        self._offsets = list(offsets)
        self._params = list(parameters)

    def index(self) -> int:
        """The bucket's index; bucket 0 holds the last parameters (they get gradients
        first), and is the first one the hook gets in every iteration."""
        return self._index

    def buffer(self) -> Tensor:
        """The flattened 1-D gradient buffer (the current one: see :meth:`set_buffer`)."""
        return self._buffer

    def gradients(self) -> list[Tensor]:
        """Views of :meth:`buffer`, one per parameter, shaped like it."""
        return [self._buffer[off:off + p.numel()].reshape(p.shape)
                for off, p in zip(self._offsets, self._params)]

    def parameters(self) -> list[Tensor]:
        """The parameters whose gradients the bucket holds, in buffer order."""
        return list(self._params)

    def is_last(self) -> bool:
        """Whether this is the last bucket of the iteration (the first parameters)."""
        return self._index == self._count - 1

    def set_buffer(self, buffer: Tensor) -> None:
        """Make ``buffer`` what :meth:`buffer` and :meth:`gradients` return (torch: the
        bucket's own buffer is not written; the hook's result is what DDP uses)."""
        self._buffer = buffer

    def __repr__(self) -> str:
        return (f"GradBucket(index={self._index}, numel={self._buffer.numel()}, "
                f"parameters={len(self._params)})")


def check_comm_hook(hook: Any) -> None:
    """torch's checks of ``register_comm_hook``'s hook: callable; a ``bucket`` annotation
    names GradBucket and a return annotation is ``Future[Tensor]`` (where they are objects,
    not postponed strings)."""
    if not callable(hook):
        raise TypeError("Communication hook must be callable.")
    try:
        sig = inspect.signature(hook)
        params = sig.parameters
    except (TypeError, ValueError):  # builtins without a signature
        return
    empty = inspect.Parameter.empty
    ann = params["bucket"].annotation if "bucket" in params else empty
    # postponed annotations (strings) are not evaluated: torch would compare the string
    if ann is not empty and not isinstance(ann, str) and ann is not GradBucket:
        raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
    ret = sig.return_annotation
    if ret is not empty and not isinstance(ret, str) and ret != Future[Tensor]:
        raise ValueError("Communication hook: return annotation should be "
                         "torch.futures.Future[torch.Tensor].")


def hook_result(fut: Any, index: int) -> Tensor:
    """The tensor a hook's Future completed with (waited for here)."""
    if not isinstance(fut, Future):
        raise TypeError(f"DistributedDataParallel: the communication hook must return a "
                        f"torch.futures.Future, got {type(fut).__name__} for bucket {index}")
    value = fut.wait()
    if not isinstance(value, Tensor):
        raise TypeError(f"DistributedDataParallel: the communication hook's Future must hold "
                        f"a Tensor (the bucket's new flat gradient), got "
                        f"{type(value).__name__} for bucket {index}; a hook built on "
                        f"all_reduce(...).get_future() returns fut.then(lambda f: "
                        f"f.value()[0])")
    return value


HookType = Callable[[Any, GradBucket], Future]
