"""Every torch.fft transform against torch, values and gradients (real and complex inputs,
n=/s= crops and pads, every norm, int and tuple dims), on every device."""
import numpy as np
import pytest
import torch

import omnitensor as ot

RNG = np.random.default_rng(5)

# name, input kind, extra arguments (torch's positional/keyword forms)
CASES = [
    ("fft", "c", {}), ("fft", "r", {"n": 6}), ("fft", "c", {"n": 12, "dim": 0}),
    ("ifft", "c", {"norm": "ortho"}), ("ifft", "c", {"n": 5, "norm": "forward"}),
    ("rfft", "r", {}), ("rfft", "r", {"n": 7, "norm": "ortho"}), ("rfft", "r", {"dim": 0}),
    ("irfft", "c", {}), ("irfft", "c", {"n": 9}), ("irfft", "c", {"n": 6, "norm": "forward"}),
    ("hfft", "c", {}), ("hfft", "c", {"n": 7, "norm": "ortho"}),
    ("ihfft", "r", {}), ("ihfft", "r", {"n": 6, "norm": "forward"}),
    ("fftn", "c", {}), ("fftn", "r", {"s": (4, 6)}), ("fftn", "c", {"dim": 1}),
    ("ifftn", "c", {"norm": "ortho", "dim": (0, 1)}),
    ("fft2", "c", {}), ("ifft2", "c", {"s": (3, 5)}),
    ("rfftn", "r", {}), ("rfftn", "r", {"s": (4, 6)}), ("rfft2", "r", {"norm": "ortho"}),
    ("irfftn", "c", {}), ("irfftn", "c", {"s": (5, 7)}), ("irfft2", "c", {"norm": "forward"}),
    ("hfftn", "c", {}), ("hfft2", "c", {"s": (4, 6)}), ("ihfftn", "r", {}),
    ("ihfft2", "r", {"norm": "ortho"}),
]


def _input(kind, device):
    real = np.float64 if device == "cpu" else np.float32
    a = RNG.standard_normal((5, 8)).astype(real)
    if kind == "c":
        a = (a + 1j * RNG.standard_normal((5, 8))).astype(
            np.complex128 if device == "cpu" else np.complex64)
    return a


@pytest.mark.parametrize("name,kind,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_transform_and_gradient(device, name, kind, kw):
    a = _input(kind, device)
    tol = 1e-9 if device == "cpu" else 2e-4
    t = torch.tensor(a, requires_grad=True)
    o = ot.tensor(a, device=device, requires_grad=True)
    tr, orr = getattr(torch.fft, name)(t, **kw), getattr(ot.fft, name)(o, **kw)
    got = orr.detach().cpu().numpy()
    want = tr.detach().resolve_conj().numpy()
    assert got.shape == want.shape and got.dtype.kind == want.dtype.kind
    np.testing.assert_allclose(got, want, rtol=tol * 10, atol=tol * 10 * (abs(want).max() + 1))
    w = RNG.standard_normal(want.shape) + (1j * RNG.standard_normal(want.shape)
                                           if want.dtype.kind == "c" else 0)
    (tr * torch.tensor(w, dtype=tr.dtype)).real.sum().backward()
    (orr * ot.tensor(w, dtype=orr.dtype, device=device)).real.sum().backward()
    gw, gg = t.grad.resolve_conj().numpy(), o.grad.cpu().numpy()
    np.testing.assert_allclose(gg, gw, rtol=tol * 10, atol=tol * 10 * (abs(gw).max() + 1))


def test_positional_torch_forms(device):
    a = _input("r", device)
    o, t = ot.tensor(a, device=device), torch.tensor(a)
    np.testing.assert_allclose(ot.fft.fft(o, 6, 0, "ortho").cpu().numpy(),
                               torch.fft.fft(t, 6, 0, "ortho").numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ot.fft.fftfreq(8, 0.5, device=device).cpu().numpy(),
                               torch.fft.fftfreq(8, 0.5).numpy(), rtol=1e-6)
    np.testing.assert_allclose(ot.fft.fftshift(o, 0).cpu().numpy(),
                               torch.fft.fftshift(t, 0).numpy())
    with pytest.raises(ValueError, match="norm must be one of"):
        ot.fft.fft(o, norm="unitary")
