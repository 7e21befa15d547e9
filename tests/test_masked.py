"""omnitensor.masked (torch.masked) against real torch: values with a broadcast mask and a
fully masked-out row, gradients, dtype rules and bad input, on every device."""
import numpy as np
import pytest

import omnitensor as ot
import omnitensor.masked as M

torch = pytest.importorskip("torch")

X = np.random.default_rng(3).normal(size=(3, 4)).astype(np.float32)
MASK = np.array([[True], [False], [True]]) & np.array([True, False, True, True])


@pytest.mark.parametrize("op,kw", [("sum", {"dim": 1}), ("mean", {"dim": 1}),
                                   ("amax", {"dim": 1}), ("var", {"dim": 1}),
                                   ("logsumexp", {"dim": 1}), ("softmax", {"dim": 1}),
                                   ("cumsum", {"dim": 1}), ("norm", {"ord": 2.0, "dim": 1})])
def test_values_and_grad_match_torch(device, op, kw):
    x = ot.tensor(X, device=device, requires_grad=True)
    got = getattr(M, op)(x, mask=ot.tensor(MASK, device=device), **kw)
    tx = torch.tensor(X, requires_grad=True)
    want = getattr(torch.masked, op)(tx, mask=torch.tensor(MASK), **kw)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    fin = torch.isfinite(want).detach()
    (want * fin).sum().backward()
    (got * ot.tensor(fin.numpy(), device=device)).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_dtype_rules_and_errors(device):
    i = ot.tensor(np.arange(6, dtype=np.int32).reshape(2, 3), device=device)
    assert M.sum(i).dtype == ot.int64
    with pytest.raises(ValueError, match="floating point"):
        M.mean(i)
    x = ot.tensor(X, device=device)
    with pytest.raises(IndexError, match="dimensionality"):
        M.sum(x, mask=ot.ones((1, 3, 4), dtype=ot.bool, device=device))
    with pytest.raises(RuntimeError, match="multiple times"):
        M.sum(x, (1, 1))
    with pytest.raises(NotImplementedError):
        M.masked_tensor(x, x > 0)
