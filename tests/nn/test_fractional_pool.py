"""F.fractional_max_pool2d/3d against torch on every device: with the same random samples
the windows, values, indices and input gradients match torch's; torch's argument errors
are raised with torch's type and message; without samples the windows are drawn."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.nn.functional as F

from nn_helpers import fdtype

torch = pytest.importorskip("torch")
TF = torch.nn.functional

CASES = [  # (spatial rank, input shape, kernel, output_size, output_ratio)
    (2, (2, 3, 9, 9), 3, (4, 3), None),
    (2, (3, 11, 10), (2, 3), None, (0.5, 0.7)),
    (3, (2, 2, 7, 6, 8), (2, 3, 2), (3, 2, 4), None),
    (3, (2, 5, 6, 7), 2, 3, None),
]


@pytest.mark.parametrize("nd,shape,k,out,ratio", CASES)
def test_fractional_max_pool_like_torch(device, nd, shape, k, out, ratio):
    dt = fdtype(device)
    tdt = torch.float64 if dt is ot.float64 else torch.float32
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    n = 1 if len(shape) == nd + 1 else shape[0]
    u = rng.random((n, shape[-nd - 1], nd))
    tfn = TF.fractional_max_pool2d if nd == 2 else TF.fractional_max_pool3d
    ofn = F.fractional_max_pool2d if nd == 2 else F.fractional_max_pool3d
    tx = torch.tensor(x, dtype=tdt, requires_grad=True)
    ty, ti = tfn(tx, k, output_size=out, output_ratio=ratio, return_indices=True,
                 _random_samples=torch.tensor(u, dtype=tdt))
    ox = ot.tensor(x, dtype=dt, device=device, requires_grad=True)
    oy, oi = ofn(ox, k, output_size=out, output_ratio=ratio, return_indices=True,
                 _random_samples=ot.tensor(u, dtype=dt, device=device))
    np.testing.assert_array_equal(oi.cpu().numpy(), ti.numpy())
    np.testing.assert_allclose(oy.detach().cpu().numpy(), ty.detach().numpy(), rtol=1e-6)
    g = rng.standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g, dtype=tdt))
    oy.backward(ot.tensor(g, dtype=dt, device=device))
    np.testing.assert_allclose(ox.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-6)


def test_drawn_windows_are_fractional_max_pools(device):
    """Without samples each output is the maximum of a kernel-sized window whose start the
    indices give, and the starts of an axis rise from 0 to n - k."""
    x = ot.randn(2, 3, 10, 10, device=device)
    y, idx = F.fractional_max_pool2d(x, 2, output_size=4, return_indices=True)
    assert tuple(y.shape) == (2, 3, 4, 4) and idx.dtype is ot.int64
    flat = x.reshape(2, 3, -1).gather(2, idx.reshape(2, 3, -1)).reshape(2, 3, 4, 4)
    np.testing.assert_array_equal(flat.cpu().numpy(), y.cpu().numpy())
    assert y.max().item() <= x.max().item()


ERRORS = [
    (lambda m, x: m.fractional_max_pool2d(x, 2), ValueError,
     "fractional_max_pool2d requires specifying either an output_size or an output_ratio"),
    (lambda m, x: m.fractional_max_pool2d(x, (2, 2, 2), output_size=2), RuntimeError,
     "fractional_max_pool2d: kernel_size must either be a single Int or tuple of Ints"),
    (lambda m, x: m.fractional_max_pool2d(x, 2, output_size=(6, 2)), RuntimeError,
     "fractional_max_pool2d(): pool height 2 too large relative to input height 6"),
    (lambda m, x: m.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5, 0.5)), ValueError,
     "fractional_max_pool2d requires output_ratio to either be a single Int or tuple of "
     "Ints."),
    (lambda m, x: m.fractional_max_pool2d(x.unsqueeze(0), 2, output_size=2), RuntimeError,
     "fractional_max_pool2d(): Expected 3D or 4D tensor, but got: [1, 1, 2, 6, 6]"),
    (lambda m, x: m.fractional_max_pool3d(x.unsqueeze(0), 2, output_size=(1, 2, 6)),
     RuntimeError, "fractional_max_pool3d_out(): pool time 2 too large relative to input "
     "time 2"),  # 1 + 2 - 1 == 2: torch's 3-D kernel refuses what its 2-D one allows
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_like_torch(device, i):
    call, typ, msg = ERRORS[i]
    x = np.zeros((1, 2, 6, 6))
    with pytest.raises(typ) as te:
        call(TF, torch.tensor(x))
    assert str(te.value) == msg
    with pytest.raises(typ) as oe:
        call(F, ot.tensor(x, dtype=fdtype(device), device=device))
    assert str(oe.value) == msg


def test_sample_errors_like_torch():
    x = np.zeros((1, 2, 6, 6))
    for u, msg in (((1, 2), "Expect _random_samples to have 3 dimensions, got 2"),
                   ((1, 3, 2), "Expect _random_samples.size(1) equals to input channel "
                               "size."),
                   ((1, 2, 3), "Expect _random_samples.size(2) equals to 2; got 3.")):
        for m, mod in ((TF, torch), (F, ot)):
            with pytest.raises(RuntimeError, match=None) as e:
                m.fractional_max_pool2d(mod.tensor(x), 2, output_size=2,
                                        _random_samples=mod.zeros(*u, dtype=mod.float64))
            assert str(e.value) == msg
