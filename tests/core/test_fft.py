"""The fft extension against numpy.fft, and its gradients."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor.testing import assert_close

rng = np.random.default_rng(3)
X = rng.standard_normal((4, 6)).astype(np.float32)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft"])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_1d(device, name, norm):
    t = ot.tensor(X, device=device)
    ref = getattr(np.fft, name)(X, axis=-1, norm=norm)
    assert_close(getattr(ot.fft, name)(t, norm=norm), ref.astype(np.complex64), rtol=1e-4,
                 atol=1e-5)


def test_nd_inverse_and_helpers(device):
    c = (X + 1j * X[::-1]).astype(np.complex64)
    t = ot.tensor(c, device=device)
    assert_close(ot.fft.fftn(t), np.fft.fftn(c), rtol=1e-4, atol=1e-4)
    assert_close(ot.fft.ifftn(ot.fft.fftn(t)), c, rtol=1e-4, atol=1e-5)
    r = ot.tensor(X, device=device)
    assert_close(ot.fft.irfft(ot.fft.rfft(r), n=6), X, rtol=1e-4, atol=1e-5)
    assert_close(ot.fft.rfftn(r), np.fft.rfftn(X), rtol=1e-4, atol=1e-4)
    assert_close(ot.fft.fftfreq(5, d=0.5, device=device), np.fft.fftfreq(5, 0.5).astype(
        np.float32))
    assert_close(ot.fft.rfftfreq(6, device=device), np.fft.rfftfreq(6).astype(np.float32))
    assert_close(ot.fft.fftshift(r), np.fft.fftshift(X))
    assert_close(ot.fft.ifftshift(r, axes=(1,)), np.fft.ifftshift(X, axes=1))
    with pytest.raises(ValueError, match="norm"):
        ot.fft.fft(r, norm="bad")


def test_fft_gradcheck(device):
    dt = ot.float64 if ot.device(device).supports_dtype(ot.float64) else ot.float32
    x = ot.tensor(rng.standard_normal(5), dtype=dt, device=device, requires_grad=True)
    tol = dict(eps=1e-6, atol=1e-5) if dt is ot.float64 else dict(eps=1e-3, atol=2e-2, rtol=2e-2)
    assert ot.autograd.gradcheck(lambda v: ot.fft.fft(v, norm="ortho").abs(), (x,), **tol)
    assert ot.autograd.gradcheck(lambda v: ot.fft.ifftn(v).real, (x,), **tol)
