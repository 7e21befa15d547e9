"""Reductions: axes, keepdims, dtypes, torch vs Array API conventions, edge cases."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor.testing import assert_close

A = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)


@pytest.fixture
def x(device):
    return ot.tensor(A, device=device)


@pytest.mark.parametrize("axes", [None, 0, 1, -1, (0, 2), (1, 2), (0, 1, 2), ()])
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "any", "all"])
def test_axes_and_keepdims(x, name, axes):
    np_fn = {"max": np.max, "min": np.min}.get(name) or getattr(np, name)
    for keep in (False, True):
        got = getattr(ot, name)(x, axis=axes, keepdims=keep)
        ref = np.asarray(np_fn(A, axis=axes, keepdims=keep))
        if name in ("any", "all"):
            ref = np.asarray(np_fn(A != 0, axis=axes, keepdims=keep))
        assert_close(got, ref.astype(got.dtype.np), rtol=1e-5, atol=1e-5)


def test_torch_spellings(x):
    assert_close(x.sum(dim=1, keepdim=True), A.sum(1, keepdims=True))
    assert_close(x.sum((0, 2)), A.sum((0, 2)))
    assert_close(x.mean(-1), A.mean(-1))
    v, i = x.max(1)
    assert_close(v, A.max(1))
    assert_close(i, A.argmax(1))
    r = ot.min(x, 2, keepdim=True)
    assert r.values.shape == (2, 3, 1) and r.indices.dtype is ot.int64
    assert_close(ot.max(x, axis=1), A.max(1))  # Array API: a tensor
    assert_close(ot.max(x, ot.zeros_like(x)), np.maximum(A, 0))  # torch binary form


def test_integer_and_bool_sums(device):
    i8 = ot.tensor([100, 100, 100], dtype=ot.int8, device=device)
    assert i8.sum().dtype is ot.int64 and i8.sum().item() == 300
    u8 = ot.tensor([200, 200], dtype=ot.uint8, device=device)
    assert u8.sum().dtype is ot.uint64 and u8.sum().item() == 400
    b = ot.tensor([True, True, False], device=device)
    assert b.sum().item() == 2 and b.sum().dtype is ot.int64
    assert ot.mean(ot.arange(4, device=device)).dtype is ot.float32
    assert ot.sum(i8, dtype=ot.int8).item() == 44


def test_std_var_conventions(x):
    assert_close(ot.var(x), np.float32(A.var()), rtol=1e-5)            # standard: correction 0
    assert_close(x.var(), np.float32(A.var(ddof=1)), rtol=1e-5)         # torch method: 1
    assert_close(ot.std(x, 1), A.std(1, ddof=1), rtol=1e-5)             # torch positional dim
    assert_close(ot.std(x, axis=1), A.std(1), rtol=1e-5)                # standard axis=
    assert_close(ot.var(x, axis=(0, 1), correction=2), A.var((0, 1), ddof=2), rtol=1e-5)
    assert_close(x.std(unbiased=False), np.float32(A.std()), rtol=1e-5)


def test_arg_reductions_and_nan(device):
    t = ot.tensor([[1.0, 5.0, 5.0], [float("nan"), 0.0, 2.0]], device=device)
    assert t.argmax(1).tolist() == [1, 0]
    assert ot.argmin(t, axis=1).tolist() == [0, 0]
    assert ot.argmax(t).item() == 3
    assert ot.argmax(t, axis=1, keepdims=True).shape == (2, 1)
    assert np.isnan(ot.max(t).item())
    assert ot.amax(t, axis=0).tolist()[1:] == [5.0, 5.0]


def test_empty_reductions(device):
    e = ot.zeros(0, 3, device=device)
    assert e.sum().item() == 0 and e.prod().item() == 1
    assert e.sum(0).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="empty"):
        e.max()
    assert np.isnan(ot.mean(e).item())


def test_logsumexp_cumulative_norms(x):
    ref = np.log(np.exp(A.astype(np.float64)).sum(1))
    assert_close(ot.logsumexp(x, 1), ref.astype(np.float32))
    big = ot.tensor([1000.0, 1000.0], device=x.device)
    assert abs(ot.logsumexp(big, 0).item() - (1000 + np.log(2))) < 1e-3
    assert_close(x.cumsum(2), A.cumsum(2), rtol=1e-5, atol=1e-6)
    assert_close(ot.cumulative_sum(x, axis=1, include_initial=True),
                 np.concatenate([np.zeros((2, 1, 4), np.float32), A.cumsum(1)], 1), atol=1e-6)
    assert_close(x.cumprod(0), A.cumprod(0), rtol=1e-5)
    assert ot.cumsum(ot.ones(3, dtype=ot.int32, device=x.device), 0).dtype is ot.int64
    assert_close(x.norm(), np.float32(np.linalg.norm(A)), rtol=1e-5)
    assert_close(ot.linalg.vector_norm(x, ord=1, axis=(1, 2)), np.abs(A).sum((1, 2)), rtol=1e-5)
    assert_close(ot.linalg.vector_norm(x, ord=float("inf")), np.float32(np.abs(A).max()))
    assert_close(ot.linalg.matrix_norm(x), np.linalg.norm(A, axis=(1, 2)), rtol=1e-5)


@pytest.mark.parametrize("p", [-1, -0.5, 0.5, 1.5, 3])
def test_p_norm_subgradients_at_zero_are_torchs(device, p):
    """Any other p: torch's subgradients where x (p < 1) or the norm (p > 1) is zero, not
    the chain rule's 0 * inf = nan."""
    torch = pytest.importorskip("torch")
    dt = np.float64 if device == "cpu" else np.float32
    for X in (np.zeros((2, 3), dt), np.array([[0.0, 1.0, -2.0], [0.0, 0.0, 0.0]], dt)):
        t = torch.tensor(X, requires_grad=True)
        o = ot.tensor(X, device=device, requires_grad=True)
        torch.linalg.vector_norm(t, p, dim=-1).sum().backward()
        ot.linalg.vector_norm(o, p, dim=-1).sum().backward()
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
