"""torch.linalg.ldl_factor(_ex)/ldl_solve against torch (LAPACK's sytrf/sytrs) on every
device: indefinite symmetric matrices make Bunch-Kaufman choose 1x1 and 2x2 blocks and
interchanges, so LD and pivots must match torch's exactly in layout; torch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot

torch = pytest.importorskip("torch")


def _dt(device):
    """float64 where the device has it, else float32."""
    return ot.float64 if ot.device(device).supports_dtype(ot.float64) else ot.float32


def _sym(rng, shape):
    a = rng.standard_normal(shape)
    return a + np.swapaxes(a, -1, -2)


@pytest.mark.parametrize("shape", [(6, 6), (3, 5, 5), (2, 1, 7, 7), (1, 1)])
def test_factor_and_solve_like_torch(device, shape):
    rng = np.random.default_rng(sum(shape))
    dt = _dt(device)
    tdt = torch.float64 if dt is ot.float64 else torch.float32
    a = _sym(rng, shape)
    b = rng.standard_normal(shape[:-1] + (3,))
    tld, tpiv, tinfo = torch.linalg.ldl_factor_ex(torch.tensor(a, dtype=tdt))
    old, opiv, oinfo = ot.linalg.ldl_factor_ex(ot.tensor(a, dtype=dt, device=device))
    np.testing.assert_array_equal(opiv.cpu().numpy(), tpiv.numpy())
    np.testing.assert_array_equal(oinfo.cpu().numpy(), tinfo.numpy())
    assert opiv.dtype is ot.int32 and oinfo.dtype is ot.int32
    tol = 1e-10 if dt is ot.float64 else 1e-4
    np.testing.assert_allclose(old.cpu().numpy(), tld.numpy(), rtol=tol, atol=tol)
    tx = torch.linalg.ldl_solve(tld, tpiv, torch.tensor(b, dtype=tdt))
    ox = ot.linalg.ldl_solve(old, opiv, ot.tensor(b, dtype=dt, device=device))
    np.testing.assert_allclose(ox.cpu().numpy(), tx.numpy(), rtol=tol * 10, atol=tol * 10)


def test_pivoting_happens():
    """The matrices above do exercise 2x2 blocks and interchanges (else the test is weak)."""
    a = _sym(np.random.default_rng(13), (3, 5, 5))  # the seed and shape of one case above
    piv = ot.linalg.ldl_factor(ot.tensor(a)).pivots.numpy()
    assert (piv < 0).any() and (np.abs(piv) != np.arange(1, 6)).any()


def test_singular_reports_info_and_raises():
    z = np.zeros((3, 3))
    tld, tpiv, tinfo = torch.linalg.ldl_factor_ex(torch.tensor(z))
    old, opiv, oinfo = ot.linalg.ldl_factor_ex(ot.tensor(z))
    assert int(oinfo) == int(tinfo) == 1
    np.testing.assert_array_equal(opiv.numpy(), tpiv.numpy())
    with pytest.raises(ot.linalg.LinAlgError):
        ot.linalg.ldl_factor(ot.tensor(z))


ERRORS = [
    (lambda m, a, p, b: m.linalg.ldl_factor(a[:2]),
     "torch.linalg.ldl_factor_ex: A must be batches of square matrices, but they are 2 by 3 "
     "matrices"),
    (lambda m, a, p, b: m.linalg.ldl_factor(a.long()),
     "torch.linalg.ldl_factor_ex: Expected a floating point or complex tensor as input. "
     "Got Long"),
    (lambda m, a, p, b: m.linalg.ldl_solve(a, p[:2], b),
     "torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but "
     "got pivots with shape [2] instead"),
    (lambda m, a, p, b: m.linalg.ldl_solve(a, p.float(), b),
     "torch.linalg.ldl_solve: Expected pivots to be integers. Got Float"),
    (lambda m, a, p, b: m.linalg.ldl_solve(a, p, b.float()),
     "Expected b and A to have the same dtype, but found b of type Float and A of type "
     "Double instead."),
    (lambda m, a, p, b: m.linalg.ldl_solve(a, p, b[:2]),
     "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is 3 by 3 but each "
     "b matrix is 2 by 2"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_like_torch(i):
    call, msg = ERRORS[i]
    a = _sym(np.random.default_rng(1), (3, 3))
    b = np.ones((3, 2))
    for m in (torch, ot):
        ta = m.tensor(a, dtype=m.float64)
        with pytest.raises(RuntimeError if m is torch else Exception) as e:
            call(m, ta, m.linalg.ldl_factor(ta).pivots, m.tensor(b, dtype=m.float64))
        assert str(e.value) == msg
