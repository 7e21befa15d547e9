"""torch.jit.fork / torch.jit.wait and torch.fork / torch.wait in eager mode, against torch:
fork runs the function at once and returns a completed Future of its result."""
import numpy as np
import pytest
import torch

import omnitensor as ot
import omnitensor.torch_face as tf


def _np(t):
    return t.cpu().numpy() if isinstance(t, ot.Tensor) else t.detach().numpy()


@pytest.mark.parametrize("pair", ["jit", "top"])
def test_fork_wait_matches_torch(device, pair):
    fork, wait = (ot.jit.fork, ot.jit.wait) if pair == "jit" else (tf.fork, tf.wait)
    tfork, twait = (torch.jit.fork, torch.jit.wait) if pair == "jit" else (torch.fork,
                                                                            torch.wait)

    def f(a, b, scale=1.0):
        return (a @ b) * scale

    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(3.0).reshape(3, 1)
    tfut = tfork(f, torch.tensor(a), torch.tensor(b), scale=2.0)
    fut = fork(f, ot.tensor(a, device=device), ot.tensor(b, device=device), scale=2.0)
    assert isinstance(fut, ot.futures.Future) and fut.done() == tfut.done() is True
    np.testing.assert_allclose(_np(wait(fut)), _np(twait(tfut)))
    np.testing.assert_allclose(_np(fut.value()), _np(tfut.value()))


def test_fork_runs_at_once_and_raises_there():
    calls = []
    fut = ot.jit.fork(calls.append, 1)
    tcalls = []
    tfut = torch.jit.fork(tcalls.append, 1)
    assert calls == tcalls == [1] and ot.jit.wait(fut) is torch.jit.wait(tfut) is None

    def boom():
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        torch.jit.fork(boom)
    with pytest.raises(ValueError, match="boom"):
        ot.jit.fork(boom)


def test_forks_chain_with_then(device):
    futs = [ot.jit.fork(lambda i=i: ot.full((2,), float(i), device=device)) for i in range(3)]
    total = ot.futures.wait_all(futs)
    assert [t.tolist() for t in total] == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]
    doubled = futs[2].then(lambda f: f.value() * 2)
    assert ot.jit.wait(doubled).tolist() == [4.0, 4.0]
    with pytest.raises(TypeError):
        ot.jit.wait(3)
