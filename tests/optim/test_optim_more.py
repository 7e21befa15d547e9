"""Adafactor, Muon and Adam(decoupled_weight_decay=True) against torch step by step (the
same model, data and initial parameters; parameters compared after every step), on
every device; and their argument checks with torch's messages."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor import nn, optim

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((16, 6)).astype(np.float32)
Y = RNG.standard_normal((16, 3)).astype(np.float32)


def _models(device, bias=True):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 5, bias=bias), torch.nn.Tanh(),
                             torch.nn.Linear(5, 3, bias=bias))
    om = nn.Sequential(nn.Linear(6, 5, bias=bias), nn.Tanh(), nn.Linear(5, 3, bias=bias))
    om.load_state_dict({k: ot.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, om.to(device)


def _run(device, make_t, make_o, steps=6, bias=True, rtol=2e-5, atol=2e-6):
    tm, om = _models(device, bias)
    topt, oopt = make_t(tm.parameters()), make_o(om.parameters())
    tx, ty = torch.tensor(X), torch.tensor(Y)
    ox, oy = ot.tensor(X, device=device), ot.tensor(Y, device=device)
    for step in range(steps):
        for m, opt, x, y in ((tm, topt, tx, ty), (om, oopt, ox, oy)):
            opt.zero_grad()
            ((m(x) - y) ** 2).mean().backward()
            opt.step()
        for (name, tp), op in zip(tm.named_parameters(), om.parameters()):
            np.testing.assert_allclose(op.detach().cpu().numpy(), tp.detach().numpy(),
                                       rtol=rtol, atol=atol, err_msg=f"{name} step {step}")
    return topt, oopt


@pytest.mark.parametrize("kw", [dict(), dict(lr=0.05, beta2_decay=-0.5, eps=(1e-20, 1e-2),
                                              d=2.0, weight_decay=0.1, maximize=True)])
def test_adafactor_follows_torch(device, kw) -> None:
    topt, oopt = _run(device, lambda p: torch.optim.Adafactor(p, **kw),
                      lambda p: optim.Adafactor(p, **kw))
    tstate = topt.state_dict()["state"]
    ostate = oopt.state_dict()["state"]
    assert sorted(ostate[0]) == sorted(tstate[0]) and sorted(ostate[1]) == sorted(tstate[1])
    assert tuple(ostate[0]["row_var"].shape) == tuple(tstate[0]["row_var"].shape)


@pytest.mark.parametrize("kw", [dict(), dict(lr=0.02, weight_decay=0.01, momentum=0.9,
                                              nesterov=False, ns_steps=3,
                                              adjust_lr_fn="match_rms_adamw")])
def test_muon_follows_torch(device, kw) -> None:
    # the Newton-Schulz iteration runs in bfloat16 (as torch's): bfloat16 tolerances
    _run(device, lambda p: torch.optim.Muon(p, **kw), lambda p: optim.Muon(p, **kw),
         steps=4, bias=False, rtol=2e-2, atol=2e-3)


def test_adam_decoupled_weight_decay(device) -> None:
    kw = dict(lr=0.01, weight_decay=0.2, decoupled_weight_decay=True)
    topt, oopt = _run(device, lambda p: torch.optim.Adam(p, **kw),
                      lambda p: optim.Adam(p, **kw))
    assert oopt.param_groups[0]["decoupled_weight_decay"] is True
    # the same as AdamW, whose groups say so too (torch's state-dict layout)
    _run(device, lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.2),
         lambda p: optim.Adam(p, **kw))
    p = nn.Parameter(ot.ones(2))
    assert optim.AdamW([p]).param_groups[0]["decoupled_weight_decay"] is True
    assert optim.Adam([p]).param_groups[0]["decoupled_weight_decay"] is False


def test_argument_checks_match_torch() -> None:
    p, tp = nn.Parameter(ot.ones(2, 2)), torch.nn.Parameter(torch.ones(2, 2))
    bad = [("Adafactor", dict(lr=-1.0)), ("Adafactor", dict(beta2_decay=0.5)),
           ("Adafactor", dict(eps=(-1.0, 1e-3))), ("Adafactor", dict(eps=(None, -1.0))),
           ("Adafactor", dict(d=0.5)), ("Adafactor", dict(weight_decay=-1.0)),
           ("Muon", dict(lr=-1.0)), ("Muon", dict(momentum=-1.0)),
           ("Muon", dict(weight_decay=-1.0)), ("Muon", dict(adjust_lr_fn="x"))]
    for name, kw in bad:
        with pytest.raises(ValueError) as theirs:
            getattr(torch.optim, name)([tp], **kw)
        with pytest.raises(ValueError, match=str(theirs.value).replace("(", ".").replace(
                ")", ".")):
            getattr(optim, name)([p], **kw)
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        optim.Muon([nn.Parameter(ot.ones(3))])
    from omnitensor.optim.muon import zeropower_via_newtonschulz
    with pytest.raises(ValueError, match="less than 100"):
        zeropower_via_newtonschulz(ot.ones(2, 2), (1, 1, 1), 100, 1e-7)


def test_swap_in_params_and_state(device) -> None:
    """A step inside the context updates the swap-in tensors as torch's does, and leaves
    the optimizer's own parameters and state as they were."""
    results = []
    for lib, mk in ((torch, lambda a: torch.tensor(a, requires_grad=True)),
                    (ot, lambda a: ot.tensor(a, device=device, requires_grad=True))):
        mod = lib.nn if lib is torch else nn
        opt_mod = torch.optim if lib is torch else optim
        w = mod.Parameter(mk(np.array([1.0, 2.0], np.float32)))
        opt = opt_mod.Adam([w], lr=0.1)
        (w * w).sum().backward()
        opt.step()                                  # the live state exists
        live = opt.state_dict()
        other = mk(np.array([5.0, -3.0], np.float32))
        other.grad = mk(np.array([1.0, 1.0], np.float32)).detach()
        osd = {"state": {0: {k: (v.clone() if hasattr(v, "clone") else v)
                             for k, v in live["state"][0].items()}},
               "param_groups": [dict(live["param_groups"][0], lr=0.5)]}
        with opt_mod.swap_in_optimizer_params_and_state(opt, {"w": other}, osd):
            assert opt.param_groups[0]["params"][0] is other
            opt.step()
        assert opt.param_groups[0]["params"][0] is w and opt.param_groups[0]["lr"] == 0.1
        results.append((np.asarray(other.detach().cpu().numpy() if lib is ot
                                   else other.detach().numpy()),
                        float(osd["state"][0]["exp_avg"].sum()),
                        np.asarray(w.detach().cpu().numpy() if lib is ot
                                   else w.detach().numpy())))
    (t_other, t_m, t_w), (o_other, o_m, o_w) = results
    np.testing.assert_allclose(o_other, t_other, rtol=1e-6)
    np.testing.assert_allclose(o_w, t_w, rtol=1e-6)
    assert o_m == pytest.approx(t_m, rel=1e-6)
