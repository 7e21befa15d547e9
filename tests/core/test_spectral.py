"""torch.stft/istft and the window functions (torch.*_window, torch.signal.windows)
against torch, values and gradients, on every device."""
import numpy as np
import pytest
import torch

import omnitensor as ot
from omnitensor.signal import windows as W

RNG = np.random.default_rng(11)

STFT_CASES = [
    {"n_fft": 16, "hop_length": 4},
    {"n_fft": 16, "win_length": 10, "center": False},
    {"n_fft": 16, "normalized": True, "pad_mode": "constant"},
    {"n_fft": 32, "hop_length": 8, "onesided": False},
    {"n_fft": 20, "pad_mode": "replicate"},
]


@pytest.mark.parametrize("kw", STFT_CASES, ids=[str(i) for i in range(len(STFT_CASES))])
def test_stft_values_gradients_and_istft_round_trip(device, kw):
    dt = np.float64 if device == "cpu" else np.float32
    tol = 1e-8 if device == "cpu" else 2e-4
    x = RNG.standard_normal((2, 100)).astype(dt)
    win = np.hanning(kw.get("win_length", kw["n_fft"])).astype(dt)
    tx, ox = torch.tensor(x, requires_grad=True), ot.tensor(x, device=device,
                                                            requires_grad=True)
    t = torch.stft(tx, window=torch.tensor(win), return_complex=True, **kw)
    o = ot.stft(ox, window=ot.tensor(win, device=device), return_complex=True, **kw)
    np.testing.assert_allclose(o.detach().cpu().numpy(), t.detach().numpy(), atol=tol * 10)
    w = RNG.standard_normal(tuple(t.shape))
    (t.abs() * torch.tensor(w)).sum().backward()
    (o.abs() * ot.tensor(w, device=device)).sum().backward()
    np.testing.assert_allclose(ox.grad.cpu().numpy(), tx.grad.numpy(), atol=tol * 100)
    if kw.get("center", True) and kw.get("onesided", True):
        inv_kw = {k: v for k, v in kw.items() if k != "pad_mode"}
        ti = torch.istft(t.detach(), window=torch.tensor(win), length=100, **inv_kw)
        oi = ot.istft(o.detach(), window=ot.tensor(win, device=device), length=100, **inv_kw)
        np.testing.assert_allclose(oi.cpu().numpy(), ti.numpy(), atol=tol * 10)
        np.testing.assert_allclose(oi.cpu().numpy(), x, atol=tol * 10)


def test_stft_argument_rules(device):
    x = ot.ones(50, device=device)
    with pytest.raises(RuntimeError, match="return_complex"):
        ot.stft(x, 16)
    with pytest.raises(ValueError, match="win_length"):
        ot.stft(x, 16, win_length=20, return_complex=True)
    with pytest.raises(RuntimeError, match="NOLA"):
        ot.istft(ot.stft(x, 16, hop_length=4, return_complex=True), 16, hop_length=4,
                 window=ot.zeros(16, device=device))


@pytest.mark.parametrize("name", ["bartlett", "blackman", "cosine", "exponential", "gaussian",
                                  "hamming", "hann", "kaiser", "nuttall"])
def test_signal_windows(device, name):
    for M in (0, 1, 7, 8):
        for sym in (True, False):
            want = getattr(torch.signal.windows, name)(M, sym=sym).numpy()
            got = getattr(W, name)(M, sym=sym, device=device).cpu().numpy()
            np.testing.assert_allclose(got, want, atol=1e-6)


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window", "kaiser_window"])
def test_torch_window_functions(device, name):
    for M in (1, 8, 9):
        for periodic in (True, False):
            want = getattr(torch, name)(M, periodic).numpy()
            got = getattr(ot, name)(M, periodic, device=device).cpu().numpy()
            np.testing.assert_allclose(got, want, atol=1e-6)
