"""Optimizers against NumPy implementations of torch's update rules (and against torch
when installed), on every device; both update paths (backend fast path and Tensor ops)."""
import math

import numpy as np
import pytest

import omnitensor as ot
from omnitensor import nn, optim


def _dt(device):
    return ot.float64 if ot.device(device).supports_dtype(ot.float64) else ot.float32


def _tol(device):
    return dict(rtol=1e-9, atol=1e-12) if _dt(device) is ot.float64 else \
        dict(rtol=1e-4, atol=1e-6)


W0 = np.random.default_rng(0).standard_normal((3, 2))
GRADS = [np.random.default_rng(s).standard_normal((3, 2)) for s in range(1, 6)]


# ------------------------------------------------------------ NumPy references (torch docs)
def np_sgd(w, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
           maximize=False):
    w, buf = w.copy(), None
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * w
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        w = w - lr * g
    return w


def np_adam(w, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
            maximize=False, decoupled=False):
    w = w.copy()
    m, v, vmax = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if decoupled:
            w = w * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * w
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        vmax = np.maximum(vmax, v)
        vh = (vmax if amsgrad else v) / (1 - betas[1] ** t)
        w = w - lr * (m / (1 - betas[0] ** t)) / (np.sqrt(vh) + eps)
    return w


def np_rmsprop(w, grads, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
               centered=False):
    w = w.copy()
    sq, ga, buf = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        g = g + weight_decay * w
        sq = alpha * sq + (1 - alpha) * g * g
        avg = sq
        if centered:
            ga = alpha * ga + (1 - alpha) * g
            avg = sq - ga * ga
        avg = np.sqrt(avg) + eps
        if momentum:
            buf = momentum * buf + g / avg
            w = w - lr * buf
        else:
            w = w - lr * g / avg
    return w


def np_adagrad(w, grads, lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0,
               eps=1e-10):
    w = w.copy()
    s = np.full_like(w, initial_accumulator_value)
    for t, g in enumerate(grads, 1):
        g = g + weight_decay * w
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        w = w - clr * g / (np.sqrt(s) + eps)
    return w


CASES = [
    ("SGD", dict(lr=0.1), np_sgd),
    ("SGD", dict(lr=0.1, momentum=0.9), np_sgd),
    ("SGD", dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.1, maximize=True), np_sgd),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01), np_sgd),
    ("Adam", dict(lr=0.01), np_adam),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True), np_adam),
    ("Adam", dict(lr=0.01, maximize=True), np_adam),
    ("AdamW", dict(lr=0.01, weight_decay=0.5), lambda *a, **k: np_adam(*a, decoupled=True, **k)),
    ("AdamW", dict(lr=0.01, amsgrad=True), lambda *a, **k: np_adam(*a, decoupled=True,
                                                                   weight_decay=0.01, **k)),
    ("RMSprop", dict(lr=0.01), np_rmsprop),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1), np_rmsprop),
    ("Adagrad", dict(lr=0.1), np_adagrad),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.5),
     np_adagrad),
]


# SGD and Adam(W) have two update paths (backend primitives, Tensor ops): test both
RUNS = [(i, None) for i in range(len(CASES))] + \
    [(i, False) for i, c in enumerate(CASES) if c[0] in ("SGD", "Adam", "AdamW")]


@pytest.mark.parametrize("i,foreach", RUNS, ids=[f"{CASES[i][0]}-{i}-" +
                                                 ("tensor_ops" if f is False else "fast")
                                                 for i, f in RUNS])
def test_update_matches_numpy(device, i, foreach):
    name, kw, ref = CASES[i]
    p = nn.Parameter(ot.tensor(W0, dtype=_dt(device), device=device))
    extra = {} if name in ("RMSprop", "Adagrad") else {"foreach": foreach}
    opt = getattr(optim, name)([p], **kw, **extra)
    for g in GRADS:
        p.grad = ot.tensor(g, dtype=_dt(device), device=device)
        opt.step()
    np.testing.assert_allclose(p.detach().cpu().numpy(), ref(W0, GRADS, **kw), **_tol(device))
    for st in opt.state[p].values():             # state lives on the parameter's device
        if isinstance(st, ot.Tensor):
            assert st.device == p.device and st.dtype is p.dtype


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    kw = {"SGD": dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-2),
          "Adam": dict(lr=1e-2, amsgrad=True, weight_decay=1e-2),
          "AdamW": dict(lr=1e-2), "RMSprop": dict(lr=1e-2, centered=True, momentum=0.5),
          "Adagrad": dict(lr=0.1, lr_decay=0.01)}[name]
    pt, po = torch.tensor(W0, requires_grad=True), nn.Parameter(ot.tensor(W0))
    ot_opt, t_opt = getattr(optim, name)([po], **kw), getattr(torch.optim, name)([pt], **kw)
    for g in GRADS:
        pt.grad, po.grad = torch.tensor(g), ot.tensor(g)
        t_opt.step()
        ot_opt.step()
    np.testing.assert_allclose(po.detach().numpy(), pt.detach().numpy(), rtol=1e-12,
                               atol=1e-14)


def test_param_groups_and_skipping_none_grads(device):
    a = nn.Parameter(ot.ones(2, device=device))
    b = nn.Parameter(ot.ones(2, device=device))
    c = nn.Parameter(ot.ones(2, device=device))
    opt = optim.SGD([{"params": [a]}, {"params": [b, c], "lr": 0.5}], lr=0.1)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5
    a.grad = ot.ones(2, device=device)
    b.grad = ot.ones(2, device=device)
    opt.step()
    assert a.tolist() == pytest.approx([0.9, 0.9]) and b.tolist() == pytest.approx([0.5, 0.5])
    assert c.tolist() == [1.0, 1.0]                    # no grad: untouched
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    d = nn.Parameter(ot.ones(1, device=device))
    opt.add_param_group({"params": d, "momentum": 0.9})
    assert opt.param_groups[2]["lr"] == 0.1 and opt.param_groups[2]["momentum"] == 0.9
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([a * 2], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {nn.Parameter(ot.ones(1))}})
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adam([a], lr=-1)


def test_zero_grad(device):
    m = nn.Linear(2, 2).to(device)
    opt = optim.SGD(m.parameters(), lr=0.1)
    m(ot.ones(1, 2, device=device)).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and float(p.grad.abs().sum()) == 0 for p in m.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in m.parameters())


def test_step_with_closure_and_version_counter(device):
    p = nn.Parameter(ot.tensor([1.0, 2.0], device=device))
    opt = optim.SGD([p], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    loss = opt.step(closure)
    assert float(loss) == 5.0 and p.tolist() == [0.0, 0.0]
    # an in-place update between forward and backward is detected, as in torch
    y = (p * p).sum()
    p.grad = ot.ones(2, device=device)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_state_dict_roundtrip_continues_identically(device):
    def make():
        ot.manual_seed(0)
        m = nn.Linear(3, 2).to(device)
        return m, optim.Adam(m.parameters(), lr=0.01, amsgrad=True)
    x = ot.randn(4, 3, device=device)
    m1, o1 = make()
    for _ in range(3):
        o1.zero_grad()
        m1(x).pow(2).sum().backward()
        o1.step()
    sd = o1.state_dict()
    assert sorted(sd["state"]) == [0, 1] and sd["param_groups"][0]["params"] == [0, 1]
    assert sd["state"][0]["step"] == 3
    m2, o2 = make()
    m2.load_state_dict(m1.state_dict())
    o2.load_state_dict(sd)
    for m, o in ((m1, o1), (m2, o2)):
        o.zero_grad()
        m(x).pow(2).sum().backward()
        o.step()
    for a, b in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_array_equal(a.detach().cpu().numpy(), b.detach().cpu().numpy())
    with pytest.raises(ValueError, match="parameter group"):
        optim.Adam([nn.Parameter(ot.ones(1))]).load_state_dict(
            {"state": {}, "param_groups": sd["param_groups"] * 2})


def test_load_state_dict_moves_state_to_parameter_device(device):
    p_cpu = nn.Parameter(ot.ones(2))
    o = optim.SGD([p_cpu], lr=0.1, momentum=0.9)
    p_cpu.grad = ot.ones(2)
    o.step()
    p_dev = nn.Parameter(ot.ones(2, device=device))
    o2 = optim.SGD([p_dev], lr=0.1, momentum=0.9)
    o2.load_state_dict(o.state_dict())
    buf = o2.state[p_dev]["momentum_buffer"]
    assert buf.device == p_dev.device and buf.tolist() == [1.0, 1.0]


def test_repr():
    r = repr(optim.SGD([nn.Parameter(ot.ones(1))], lr=0.1, momentum=0.9))
    assert r.startswith("SGD (\nParameter Group 0\n") and "    momentum: 0.9" in r
    assert math.isclose(optim.Adam([nn.Parameter(ot.ones(1))]).defaults["lr"], 1e-3)
