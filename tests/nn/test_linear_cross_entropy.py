"""F.linear_cross_entropy against torch: 2-D and K-dimensional weights, bias, options,
gradients, and the probability-target rule."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("weight_shape,target_shape", [((5, 6), (4,)), ((5, 3, 6), (4, 3))])
@pytest.mark.parametrize("chunked", [False, True])
def test_equals_torch_with_gradients(device, weight_shape, target_shape, chunked):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((4, 6)), rng.standard_normal(weight_shape)
    b, t = rng.standard_normal(weight_shape[:-1]), rng.integers(0, 5, target_shape)
    dt = ot.float64 if ot.device(device).supports_dtype(ot.float64) else ot.float32
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    topts = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2) if chunked else None
    want = torch.nn.functional.linear_cross_entropy(
        tx, tw, torch.tensor(t), linear_bias=torch.tensor(b), label_smoothing=0.1,
        options=topts)
    want.backward()
    ox = ot.tensor(x, dtype=dt, device=device, requires_grad=True)
    ow = ot.tensor(w, dtype=dt, device=device, requires_grad=True)
    oopts = ot.nn.LinearCrossEntropyOptions(batch_chunk_size=2) if chunked else None
    got = ot.nn.functional.linear_cross_entropy(
        ox, ow, ot.tensor(t, device=device), linear_bias=ot.tensor(b, dtype=dt, device=device),
        label_smoothing=0.1, options=oopts)
    got.backward()
    tol = 1e-10 if dt is ot.float64 else 1e-4
    np.testing.assert_allclose(got.item(), want.item(), rtol=tol)
    np.testing.assert_allclose(ox.grad.cpu().numpy(), tx.grad.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(ow.grad.cpu().numpy(), tw.grad.numpy(), rtol=tol, atol=tol)


def test_refuses_what_torch_refuses():
    x, w = ot.ones(2, 3), ot.ones(4, 3)
    with pytest.raises(ValueError, match="ignore_index cannot be specified"):
        ot.nn.functional.linear_cross_entropy(x, w, ot.ones(2, 4) / 4, ignore_index=1)
    with pytest.raises(ValueError, match="batched"):
        ot.nn.functional.linear_cross_entropy(ot.ones(3), ot.ones(4, 2, 3), ot.zeros(2))
    with pytest.raises(ValueError, match="acc_policy"):
        ot.nn.LinearCrossEntropyOptions(acc_policy="fast")
