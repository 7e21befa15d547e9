"""Gradients of the linalg ops whose derivative is a convention, equal to torch's on a leaf
that is not passed through a symmetrizing wrapper (torch's OpInfos symmetrize the input, so
they cannot see these): eigh's gradient is the Hermitian one on both triangles, whatever
triangle UPLO reads; pinv's is torch's closed form for a general matrix, hermitian=True
included, finite at rank-deficient inputs."""
import numpy as np
import pytest
import torch

import omnitensor as ot

RNG = np.random.default_rng(7)
_B = RNG.standard_normal((4, 4))
SPD = _B @ _B.T + 4 * np.eye(4)
W = RNG.standard_normal((4, 4))

CASES = {
    "eigvalsh": (SPD, lambda m, a, w: (m.linalg.eigvalsh(a) ** 2).sum()),
    "eigvalsh_upper": (SPD, lambda m, a, w: (m.linalg.eigvalsh(a, UPLO="U") ** 3).sum()),
    "eigh_vectors": (SPD, lambda m, a, w: (m.linalg.eigh(a).eigenvectors.abs() * w).sum()),
    "pinv_hermitian": (SPD, lambda m, a, w: (m.linalg.pinv(a, hermitian=True) * w).sum()),
    "pinv_wide": (RNG.standard_normal((3, 4)),
                  lambda m, a, w: (m.linalg.pinv(a) * w[:, :3]).sum()),
    "pinv_tall": (RNG.standard_normal((4, 3)),
                  lambda m, a, w: (m.linalg.pinv(a) * w[:3]).sum()),
    "pinv_rank_one": (np.outer(RNG.standard_normal(4), RNG.standard_normal(4)),
                      lambda m, a, w: (m.linalg.pinv(a) * w).sum()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_equals_torch(name, device):
    a, loss = CASES[name]
    ta = torch.tensor(a, requires_grad=True)
    loss(torch, ta, torch.tensor(W)).backward()
    dt = ot.float64 if ot.device(device).supports_dtype(ot.float64) else ot.float32
    oa = ot.tensor(a, dtype=dt, device=device, requires_grad=True)
    loss(ot, oa, ot.tensor(W, dtype=dt, device=device)).backward()
    tol = 1e-9 if dt is ot.float64 else 2e-3
    np.testing.assert_allclose(oa.grad.cpu().numpy(), ta.grad.numpy(), rtol=tol, atol=tol)
