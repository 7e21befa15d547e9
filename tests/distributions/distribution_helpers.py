"""Building the same distribution in omnitensor and torch from a case in ``cases.py``,
and comparing results: float64 on cpu (tight), float32 on the accelerator devices (the
dtype programs use there), torch always in float64 as the reference."""
import numpy as np

import omnitensor as ot
import omnitensor.distributions as D

from distribution_cases import CASES

torch = __import__("torch")
TD = torch.distributions

#: torch 2.13's GeneralizedPareto compares its float64 concentration with a float32 zero
#: (torch.isclose raises): its reference runs in float32
TORCH_FLOAT32_ONLY = {"GeneralizedPareto"}


def dtype_for(device):
    return ot.float64 if device == "cpu" else ot.float32


def tol(device):
    """(rtol, atol) for comparing with torch's float64 values."""
    return (1e-9, 1e-11) if device == "cpu" else (2e-4, 2e-5)


def _ot(v, device, dtype):
    if isinstance(v, (list, np.ndarray)):
        return ot.tensor(np.asarray(v, dtype=np.float64), device=device).to(dtype)
    return v


def _torch(v, dtype=None):
    if isinstance(v, (list, np.ndarray)):
        return torch.tensor(np.asarray(v, dtype=np.float64), dtype=dtype or torch.float64)
    return v


def build(name, device, requires_grad=False, dtype=None, case=None):
    """(ours, torch's, our tensor args, torch's tensor args) for the named case."""
    args, kwargs, _ = case or CASES[name]
    dtype = dtype or dtype_for(device)
    tdt = torch.float32 if name in TORCH_FLOAT32_ONLY else torch.float64
    oargs = [_ot(a, device, dtype) for a in args]
    okw = {k: _ot(v, device, dtype) for k, v in kwargs.items()}
    targs = [_torch(a, tdt) for a in args]
    tkw = {k: _torch(v, tdt) for k, v in kwargs.items()}
    if requires_grad:
        for t in oargs + list(okw.values()):
            if isinstance(t, ot.Tensor) and t.dtype.is_floating_point:
                t.requires_grad_()
        for t in targs + list(tkw.values()):
            if isinstance(t, torch.Tensor) and t.dtype.is_floating_point:
                t.requires_grad_()
    ours = getattr(D, name)(*oargs, **okw)
    theirs = getattr(TD, name)(*targs, **tkw)
    return ours, theirs, oargs + list(okw.values()), targs + list(tkw.values())


def value_of(name, device, dtype=None):
    """(our value tensor, torch's) of the case."""
    val = np.asarray(CASES[name][2], dtype=np.float64)
    ours = ot.tensor(val, device=device).to(dtype or dtype_for(device))
    theirs = torch.tensor(val, dtype=torch.float32 if name in TORCH_FLOAT32_ONLY
                          else torch.float64)
    if name == "Categorical":
        return ours.long(), theirs.long()
    return ours, theirs


def close(ours, theirs, device, rtol=None, atol=None, what=""):
    r, a = tol(device)
    got = ours.detach().cpu().numpy().astype(np.float64)
    want = theirs.detach().double().numpy() if hasattr(theirs, "detach") else \
        np.asarray(theirs, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs {want.shape}"
    np.testing.assert_allclose(got, want, rtol=rtol or r, atol=atol or a, equal_nan=True,
                               err_msg=what)
