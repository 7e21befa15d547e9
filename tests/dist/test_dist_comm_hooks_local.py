"""Communication-hook pieces without MPI: ``Work.get_future()`` (completed by whoever
waits on it or on a Future chained to it) and ``GradBucket``'s methods."""
from __future__ import annotations

import numpy as np
import pytest
import torch.distributed as tdist

import omnitensor as ot
import omnitensor.distributed as dist
from omnitensor.distributed.types import Work


class _LazyWork(Work):
    """A Work that finishes only when waited on (as an MPI request does)."""

    def __init__(self, outputs: list, fail: bool = False) -> None:
        super().__init__(outputs)
        self.blocked = 0
        self.fail = fail

    def _test(self) -> bool:
        return False

    def _block(self, timeout: float | None) -> None:
        self.blocked += 1
        if self.fail:
            raise dist.DistributedTimeoutError("all_reduce timed out")


def test_get_future_chain_drives_the_work():
    t = ot.tensor([1.0, 2.0])
    work = _LazyWork([t])
    fut = work.get_future()
    assert not fut.done() and work.get_future() is fut
    halved = fut.then(lambda f: f.value()[0] / 2)
    np.testing.assert_allclose(halved.wait().numpy(), [0.5, 1.0])
    assert work.blocked == 1 and fut.done() and fut.value()[0] is t
    done = _LazyWork([t])
    done.wait()
    assert done.get_future().done()  # a finished Work's Future is complete at once


def test_get_future_of_a_failed_work_raises():
    work = _LazyWork([ot.zeros(1)], fail=True)
    chained = work.get_future().then(lambda f: f.value()[0])
    with pytest.raises(RuntimeError, match="timed out"):  # torch wraps the callback's error
        chained.wait()
    with pytest.raises(dist.DistributedTimeoutError):
        work.get_future().wait()


def test_grad_bucket_methods():
    """Views of the buffer in offset order; set_buffer changes what buffer() and
    gradients() see (torch's GradBucket has no Python constructor: the hooks run under
    torch's DDP in workers/comm_hooks.py compare the buckets DDP hands out)."""
    shapes = [(2, 3), (4,)]
    params = [ot.zeros(s) for s in shapes]
    bucket = dist.GradBucket(1, 2, ot.arange(10.0), [0, 6], params)
    assert bucket.index() == 1 and bucket.is_last()
    grads = bucket.gradients()
    np.testing.assert_array_equal(grads[0].numpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(grads[1].numpy(), np.arange(6.0, 10.0))
    assert [p is q for p, q in zip(bucket.parameters(), params)] == [True, True]
    bucket.set_buffer(ot.ones(10))
    assert float(bucket.buffer().sum()) == 10 and float(bucket.gradients()[1].sum()) == 4
    assert not dist.GradBucket(0, 2, ot.zeros(1), [0], [ot.zeros(1)]).is_last()
    assert [m.name for m in dist.BuiltinCommHookType] == \
        list(tdist.BuiltinCommHookType.__members__)
