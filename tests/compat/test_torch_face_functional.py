"""torch's top-level spellings of nn.functional ops (torch.conv2d, torch.layer_norm...) on
the torch face equal real torch's, called positionally as torch's signatures allow; the
FX and fake-tensor queries libraries import say "not tracing"."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.torch_face as face

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 4, 8, 8)).astype(np.float32)
W = RNG.standard_normal((6, 4, 3, 3)).astype(np.float32)

CASES = {
    "conv2d": lambda m, x, w: m.conv2d(x, w, None, 1, 1),
    "conv1d": lambda m, x, w: m.conv1d(x[:, :, 0], w[:, :, 0], None, 2),
    "conv_transpose2d": lambda m, x, w: m.conv_transpose2d(x, w.transpose(0, 1)[:4], None, 2),
    "max_pool2d": lambda m, x, w: m.max_pool2d(x, 2),
    "max_pool1d_with_indices": lambda m, x, w: m.max_pool1d_with_indices(x[0], 2)[1],
    "avg_pool1d": lambda m, x, w: m.avg_pool1d(x[0], 2),
    "adaptive_avg_pool1d": lambda m, x, w: m.adaptive_avg_pool1d(x[0], 3),
    "layer_norm": lambda m, x, w: m.layer_norm(x, [8]),
    "group_norm": lambda m, x, w: m.group_norm(x, 2),
    "pixel_shuffle": lambda m, x, w: m.pixel_shuffle(x, 2),
    "channel_shuffle": lambda m, x, w: m.channel_shuffle(x, 2),
    "threshold": lambda m, x, w: m.threshold(x, 0.1, 2.0),
    "selu": lambda m, x, w: m.selu(x),
    "celu": lambda m, x, w: m.celu(x, 0.5),
    "hardshrink": lambda m, x, w: m.hardshrink(x, 0.3),
    "dropout": lambda m, x, w: m.dropout(x, 0.5, False),
    "cosine_similarity": lambda m, x, w: m.cosine_similarity(x, x * 2 + 1, 1),
    "pairwise_distance": lambda m, x, w: m.pairwise_distance(x[0, 0], x[1, 0]),
    "pdist": lambda m, x, w: m.pdist(x[0, 0]),
    "prelu": lambda m, x, w: m.prelu(x, x[0, :, 0, 0] * 0 + 0.25),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_top_level_functional_equals_torch(name, device):
    fn = CASES[name]
    expected = fn(torch, torch.from_numpy(X), torch.from_numpy(W)).numpy()
    got = fn(face, ot.tensor(X, device=device), ot.tensor(W, device=device)).cpu().numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_tracing_queries_say_not_tracing():
    from omnitensor import fx
    from omnitensor._subclasses.fake_tensor import FakeTensorMode, is_fake
    from omnitensor.fx.experimental.proxy_tensor import get_proxy_mode
    x = ot.zeros(2)
    assert not is_fake(x) and get_proxy_mode() is None and not fx.is_fx_tracing()
    assert not isinstance(x, fx.Proxy)

    def leaf(t):
        return t
    assert fx.wrap(leaf) is leaf
    with pytest.raises(NotImplementedError, match="omnitensor.compile"):
        fx.symbolic_trace(leaf)
    with pytest.raises(RuntimeError, match="fake tensors"):
        with FakeTensorMode():
            pass
