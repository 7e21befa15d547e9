"""aten's ``slice_inverse`` (torch.slice_inverse / Tensor.slice_inverse) against torch: the
slice viewed back with its source's geometry, aliasing the slice's storage, its gradient
the slice of the result's, and torch's refusal when the storage is too small."""
import numpy as np
import pytest
import torch

import omnitensor as ot
import omnitensor.torch_face as face


def _both(device, make):
    return make(ot, device), make(torch, "cpu")


@pytest.mark.parametrize("case", [
    ("plain", lambda x, d: x.arange(24.0, device=d).reshape(4, 6), (1, 1, 5, 2)),
    ("offset", lambda x, d: x.arange(100.0, device=d)[10:34].view(4, 6), (0, 1, 3, 1)),
    ("transposed", lambda x, d: x.arange(24.0, device=d).reshape(6, 4).t(), (1, 2, None, 1)),
    ("negative", lambda x, d: x.arange(30.0, device=d).reshape(5, 6), (0, -3, None, 1)),
], ids=lambda c: c[0])
def test_slice_inverse_equals_torch(device, case):
    _name, make, (dim, start, end, step) = case
    base, tbase = _both(device, make)
    sl = base.narrow(0, 0, base.shape[0])  # a view, so the slice below shares storage
    key = [slice(None)] * base.ndim
    key[dim] = slice(start, end, step)
    s, ts = sl[tuple(key)], tbase[tuple(key)]
    ours = face.slice_inverse(s, base, dim, start, end, step)
    theirs = torch.slice_inverse(ts, tbase, dim, start, end, step)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride() and ours.storage_offset() == theirs.storage_offset()
    np.testing.assert_array_equal(ours.cpu().numpy(), theirs.numpy())
    method = s.slice_inverse(base, dim=dim, start=start, end=end, step=step)
    np.testing.assert_array_equal(method.cpu().numpy(), theirs.numpy())
    ours[(0,) * ours.ndim] = -7.0  # a view: writes reach the storage
    theirs[(0,) * theirs.ndim] = -7.0
    np.testing.assert_array_equal(base.cpu().numpy(), tbase.numpy())


def test_slice_inverse_gradient_is_the_slice(device):
    w = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    grads = []
    for lib, dev in ((ot, device), (torch, "cpu")):
        x = lib.tensor(w, device=dev, requires_grad=True)
        y = x * 1.0  # a non-leaf whose storage the slice shares
        s = y[1:3]
        r = lib.slice_inverse(s, y.detach(), 0, 1, 3) if lib is torch else \
            face.slice_inverse(s, y.detach(), 0, 1, 3)
        (r * lib.arange(24.0, device=dev).reshape(4, 6)).sum().backward()
        grads.append(x.grad.cpu().numpy() if lib is ot else x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_slice_inverse_refuses_a_too_small_storage(device):
    base, tbase = _both(device, lambda x, d: x.arange(24.0, device=d).reshape(4, 6))
    with pytest.raises(RuntimeError):
        torch.slice_inverse(tbase[:, 1:5:2].clone(), tbase, 1, 1, 5, 2)
    with pytest.raises(RuntimeError):
        face.slice_inverse(base[:, 1:5:2].clone(), base, 1, 1, 5, 2)
