"""torch's ``debugging_hooks``: :func:`noop_hook`, a communication hook that does not
communicate (for measuring how much of a step the all-reduce costs)."""
from __future__ import annotations

from typing import Any

from ....futures import Future
from ...comm_hooks import GradBucket

__all__ = ["noop_hook"]


def noop_hook(_: Any, bucket: GradBucket) -> Future:
    """A completed Future of the bucket's own buffer: every rank keeps its local
    gradients (not a way to train: the ranks drift apart)."""
    fut: Future = Future()
    fut.set_result(bucket.buffer())
    return fut
