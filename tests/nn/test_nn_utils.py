"""nn.utils: gradient clipping and parameter/vector conversion."""
import math

import numpy as np
import pytest
from nn_helpers import N, T, fdtype, rng, tol

import omnitensor as ot
from omnitensor import nn
from omnitensor.nn.utils import (clip_grad_norm_, clip_grad_value_, parameters_to_vector,
                                 vector_to_parameters)


def _params_with_grads(device):
    r = rng()
    ps = []
    for shape in ((3, 2), (4,)):
        p = nn.Parameter(T(r.standard_normal(shape), device))
        p.grad = T(r.standard_normal(shape) * 3, device)
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf])
def test_clip_grad_norm(device, norm_type):
    ps = _params_with_grads(device)
    grads = [N(p.grad) for p in ps]
    flat = np.concatenate([g.ravel() for g in grads])
    total = np.linalg.norm(flat, norm_type)
    got = clip_grad_norm_(ps, max_norm=1.5, norm_type=norm_type)
    np.testing.assert_allclose(N(got), total, **tol(device))
    scale = min(1.0, 1.5 / (total + 1e-6))
    for p, g in zip(ps, grads):
        np.testing.assert_allclose(N(p.grad), g * scale, **tol(device))
    clip_grad_norm_(ps, max_norm=1e9)                        # no-op above the norm
    for p, g in zip(ps, grads):
        np.testing.assert_allclose(N(p.grad), g * scale, **tol(device))


def test_clip_grad_nonfinite_and_value(device):
    ps = _params_with_grads(device)
    ps[0].grad = ps[0].grad * float("inf")
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    ps = _params_with_grads(device)
    clip_grad_value_(ps, 0.5)
    assert all(N(p.grad).max() <= 0.5 and N(p.grad).min() >= -0.5 for p in ps)
    assert float(clip_grad_norm_([nn.Parameter(ot.ones(2, device=device))], 1.0)) == 0.0


def test_parameters_vector_roundtrip(device):
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1)).to(device, fdtype(device))
    v = parameters_to_vector(m.parameters())
    assert v.shape == (11,)
    np.testing.assert_allclose(N(v), np.concatenate([N(p).ravel() for p in m.parameters()]))
    new = T(np.arange(11.0), device)
    vector_to_parameters(new, m.parameters())
    np.testing.assert_allclose(N(m[0].weight), np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(N(m[1].bias), [10.0])
    assert isinstance(m[0].weight, nn.Parameter) and m[0].weight.requires_grad
    with pytest.raises(ValueError):
        vector_to_parameters(T(np.arange(3.0), device), m.parameters())
    # differentiable, as in torch
    (parameters_to_vector(m.parameters()) ** 2).sum().backward()
    np.testing.assert_allclose(N(m[0].weight.grad), 2 * np.arange(6.0).reshape(2, 3))
