"""Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop, LBFGS and the schedulers added with them,
compared with torch step by step: the same small model, the same data, the same initial
parameters; after every step the parameters (and learning rates) must agree to float32
tolerance. On every device (``device`` fixture)."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor import nn, optim

torch = pytest.importorskip("torch")

TOL = dict(rtol=2e-5, atol=2e-6)
RNG = np.random.default_rng(0)
X = RNG.standard_normal((16, 5)).astype(np.float32)
Y = RNG.standard_normal((16, 1)).astype(np.float32)


def _models(device):
    """A torch model and an omnitensor copy of it (same weights) on ``device``."""
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    om = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 1))
    om.load_state_dict({k: ot.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, om.to(device)


def _groups(model, lr2):
    """Two parameter groups: the first layer at the defaults, the last with ``lr=lr2``."""
    first, last = list(model[0].parameters()), list(model[2].parameters())
    return [{"params": first}, {"params": last, "lr": lr2}]


def _closures(tm, om, device):
    tx, ty = torch.tensor(X), torch.tensor(Y)
    ox, oy = ot.tensor(X, device=device), ot.tensor(Y, device=device)

    def t_loss():
        tm.zero_grad()
        loss = ((tm(tx) - ty) ** 2).mean()
        loss.backward()
        return loss

    def o_loss():
        om.zero_grad()
        loss = ((om(ox) - oy) ** 2).mean()
        loss.backward()
        return loss
    return t_loss, o_loss


def _assert_same(tm, om, **tol):
    for (name, tp), op in zip(tm.named_parameters(), om.parameters()):
        np.testing.assert_allclose(op.detach().cpu().numpy(), tp.detach().numpy(),
                                   err_msg=name, **(tol or TOL))


CASES = {
    "Adadelta": [dict(), dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1, maximize=True)],
    "Adamax": [dict(), dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1)],
    "NAdam": [dict(), dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01),
              dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)],
    "RAdam": [dict(), dict(lr=0.01, weight_decay=0.1),
              dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True)],
    "ASGD": [dict(), dict(lr=0.05, lambd=1e-3, alpha=0.5, t0=5, weight_decay=0.01)],
    "Rprop": [dict(), dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-4, 0.2), maximize=True)],
}
IDS = [(n, i) for n, cs in CASES.items() for i in range(len(cs))]


def _sign_maximize(kw):
    """With ``maximize`` the model would diverge from the data; negate the loss instead so
    both libraries descend (the flag is still the one exercised)."""
    return -1.0 if kw.get("maximize") else 1.0


@pytest.mark.parametrize("name,i", IDS, ids=[f"{n}-{i}" for n, i in IDS])
def test_matches_torch_step_by_step(device, name, i):
    kw = CASES[name][i]
    tm, om = _models(device)
    t_opt = getattr(torch.optim, name)(_groups(tm, 0.02), **kw)
    o_opt = getattr(optim, name)(_groups(om, 0.02), **kw)
    t_loss, o_loss = _closures(tm, om, device)
    sign = _sign_maximize(kw)
    for _ in range(25):
        for loss_fn in (t_loss, o_loss):
            loss = loss_fn()
        _ = loss
        if sign < 0:  # gradients of -loss
            for p in tm.parameters():
                p.grad.neg_()
            for p in om.parameters():
                p.grad = -p.grad
        t_opt.step()
        o_opt.step()
        _assert_same(tm, om)
    # state: torch's keys, on the parameter's device; group options identical
    t_sd, o_sd = t_opt.state_dict(), o_opt.state_dict()
    assert [sorted(g) for g in o_sd["param_groups"]] == [sorted(g) for g in t_sd["param_groups"]]
    for tg, og in zip(t_sd["param_groups"], o_sd["param_groups"]):
        assert tg == og
    assert sorted(o_sd["state"]) == sorted(t_sd["state"])
    for k, ts in t_sd["state"].items():
        os_ = o_sd["state"][k]
        assert sorted(os_) == sorted(ts)
        for key, tv in ts.items():
            ov = os_[key]
            if isinstance(ov, ot.Tensor):
                assert ov.device == ot.device(device)
                np.testing.assert_allclose(ov.cpu().numpy(), tv.numpy(), **TOL)
            else:
                np.testing.assert_allclose(float(ov), float(tv), rtol=1e-5)


@pytest.mark.parametrize("name", list(CASES))
def test_state_dict_round_trip(device, name):
    """Ten steps, save, load into a fresh optimizer (on a fresh model copy), ten more
    steps: the same parameters as twenty uninterrupted steps; a torch state dict loads
    too (its 0-d tensor scalars are read as numbers)."""
    kw = CASES[name][-1]
    _, om_a = _models(device)
    tm, om_b = _models(device)
    _, o_loss_a = _closures(tm, om_a, device)
    t_loss, o_loss_b = _closures(tm, om_b, device)
    opt_a = getattr(optim, name)(om_a.parameters(), **kw)
    opt_b = getattr(optim, name)(om_b.parameters(), **kw)
    t_opt = getattr(torch.optim, name)(tm.parameters(), **kw)
    for _ in range(10):
        o_loss_a(), opt_a.step()
        o_loss_b(), opt_b.step()
        t_loss(), t_opt.step()
    saved = opt_b.state_dict()
    opt_b2 = getattr(optim, name)(om_b.parameters(), **kw)
    opt_b2.load_state_dict(saved)
    # torch's own state dict, converted to omnitensor tensors, resumes the same way
    tsd = t_opt.state_dict()
    conv = {"param_groups": tsd["param_groups"],
            "state": {k: {n: ot.tensor(v.numpy()) if isinstance(v, torch.Tensor) else v
                          for n, v in s.items()} for k, s in tsd["state"].items()}}
    _, om_c = _models(device)
    with ot.no_grad():
        for pc, pt in zip(om_c.parameters(), tm.parameters()):
            pc.copy_(ot.tensor(pt.detach().numpy(), device=device))
    _, o_loss_c = _closures(tm, om_c, device)
    opt_c = getattr(optim, name)(om_c.parameters(), **kw)
    opt_c.load_state_dict(conv)
    for _ in range(10):
        o_loss_a(), opt_a.step()
        o_loss_b(), opt_b2.step()
        o_loss_c(), opt_c.step()
        t_loss(), t_opt.step()
    for pa, pb in zip(om_a.parameters(), om_b.parameters()):
        np.testing.assert_allclose(pb.detach().cpu().numpy(), pa.detach().cpu().numpy(),
                                   rtol=1e-6, atol=1e-7)
    _assert_same(tm, om_c)


def test_bad_options_raise():
    p = [nn.Parameter(ot.ones(2))]
    with pytest.raises(ValueError, match="learning rate"):
        optim.Adadelta(p, lr=-1)
    with pytest.raises(ValueError, match="rho"):
        optim.Adadelta(p, rho=1.5)
    with pytest.raises(ValueError, match="beta parameter at index 1"):
        optim.NAdam(p, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="momentum decay"):
        optim.NAdam(p, momentum_decay=-1)
    with pytest.raises(ValueError, match="eta values"):
        optim.Rprop(p, etas=(1.5, 1.2))
    with pytest.raises(ValueError, match="line_search_fn"):
        optim.LBFGS(p, line_search_fn="armijo")
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": p}, {"params": [nn.Parameter(ot.ones(1))]}])
    with pytest.raises(TypeError, match="closure"):
        optim.LBFGS(p).step()


# ------------------------------------------------------------------ LBFGS
def _rosenbrock(xy):
    x, y = xy[0], xy[1]
    return (1 - x) ** 2 + 100 * (y - x ** 2) ** 2


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_rosenbrock_matches_torch(device, line_search):
    """L-BFGS from (-1.5, 2) on the Rosenbrock function: each outer ``step`` (20 inner
    iterations) reaches torch's iterate; with strong Wolfe it converges to (1, 1)."""
    kw = dict(lr=1 if line_search else 0.05, history_size=10, max_iter=20,
              line_search_fn=line_search)
    dt = ot.float64 if ot.device(device).supports_dtype(ot.float64) else ot.float32
    tp = torch.tensor([-1.5, 2.0], dtype=torch.float64 if dt is ot.float64 else
                      torch.float32, requires_grad=True)
    op = nn.Parameter(ot.tensor([-1.5, 2.0], dtype=dt, device=device))
    t_opt, o_opt = torch.optim.LBFGS([tp], **kw), optim.LBFGS([op], **kw)

    def t_closure():
        t_opt.zero_grad()
        loss = _rosenbrock(tp)
        loss.backward()
        return loss

    def o_closure():
        o_opt.zero_grad()
        loss = _rosenbrock(op)
        loss.backward()
        return loss
    for _ in range(5):
        tl = t_opt.step(t_closure)
        ol = o_opt.step(o_closure)
        np.testing.assert_allclose(float(ol), tl.item(), rtol=1e-6, atol=1e-10)
        np.testing.assert_allclose(op.detach().cpu().numpy(), tp.detach().numpy(),
                                   rtol=1e-6, atol=1e-8)
    ts, os_ = t_opt.state[tp], o_opt.state[op]
    assert os_["func_evals"] == ts["func_evals"] and os_["n_iter"] == ts["n_iter"]
    assert sorted(o_opt.state_dict()["state"][0]) == sorted(t_opt.state_dict()["state"][0])
    if line_search:
        np.testing.assert_allclose(op.detach().cpu().numpy(), [1.0, 1.0], atol=1e-4)


def test_lbfgs_trains_a_model_like_torch(device):
    """time_sequence_prediction-style use: LBFGS(lr=0.8) on a small network, the closure
    returning the MSE loss; five outer steps track torch's losses."""
    tm, om = _models(device)
    kw = dict(lr=0.8, max_iter=10, history_size=5)
    t_opt, o_opt = torch.optim.LBFGS(tm.parameters(), **kw), \
        optim.LBFGS(om.parameters(), **kw)
    t_loss, o_loss = _closures(tm, om, device)
    for _ in range(5):
        tl, ol = t_opt.step(t_loss), o_opt.step(o_loss)
        np.testing.assert_allclose(float(ol), tl.item(), rtol=1e-3)
    _assert_same(tm, om, rtol=2e-3, atol=2e-4)


# ------------------------------------------------------------------ schedulers
def _sched_cases(lib):
    S = lib.optim.lr_scheduler
    return {
        "MultiplicativeLR": lambda o: S.MultiplicativeLR(o, lambda e: 0.95),
        "ConstantLR": lambda o: S.ConstantLR(o, factor=0.5, total_iters=4),
        "LinearLR": lambda o: S.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=8),
        "PolynomialLR": lambda o: S.PolynomialLR(o, total_iters=12, power=2.0),
        "CosineAnnealingWarmRestarts": lambda o: S.CosineAnnealingWarmRestarts(
            o, T_0=5, T_mult=2, eta_min=1e-3),
        "CyclicLR-triangular": lambda o: S.CyclicLR(o, 0.01, 0.1, step_size_up=4),
        "CyclicLR-triangular2": lambda o: S.CyclicLR(o, [0.01, 0.02], 0.1, step_size_up=3,
                                                     step_size_down=5, mode="triangular2"),
        "CyclicLR-exp_range": lambda o: S.CyclicLR(o, 0.01, [0.1, 0.2], step_size_up=4,
                                                   mode="exp_range", gamma=0.9,
                                                   base_momentum=0.7, max_momentum=0.95),
        "SequentialLR": lambda o: S.SequentialLR(
            o, [S.LinearLR(o, start_factor=0.1, total_iters=5), S.ExponentialLR(o, 0.9),
                S.StepLR(o, 3, 0.5)], milestones=[5, 12]),
        "ChainedScheduler": lambda o: S.ChainedScheduler(
            [S.ConstantLR(o, factor=0.3, total_iters=6), S.ExponentialLR(o, gamma=0.93)]),
        "Chained-in-Sequential": lambda o: S.SequentialLR(
            o, [S.ChainedScheduler([S.MultiplicativeLR(o, lambda e: 0.9),
                                    S.LinearLR(o, 0.5, 1.0, 4)]),
                S.CosineAnnealingLR(o, T_max=7)], milestones=[6]),
    }


SCHEDULERS = list(_sched_cases(torch))


def _sgd(lib, model):
    opt_mod = torch.optim if lib is torch else optim
    return opt_mod.SGD(_groups(model, 0.05), lr=0.1, momentum=0.9)


@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step\\(\\)` before")
@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_matches_torch(device, name):
    """30 epochs of SGD + scheduler: the same rates (and momenta) after every step, and
    the same parameters; a state dict taken at epoch 10 resumes identically."""
    tm, om = _models(device)
    t_opt, o_opt = _sgd(torch, tm), _sgd(ot, om)
    t_s, o_s = _sched_cases(torch)[name](t_opt), _sched_cases(ot)[name](o_opt)
    assert o_s.get_last_lr() == pytest.approx(t_s.get_last_lr(), rel=1e-12)
    t_loss, o_loss = _closures(tm, om, device)
    saved = None
    for epoch in range(30):
        t_loss(), o_loss()
        t_opt.step(), o_opt.step()
        t_s.step(), o_s.step()
        assert o_s.get_last_lr() == pytest.approx(t_s.get_last_lr(), rel=1e-12, abs=1e-15)
        for tg, og in zip(t_opt.param_groups, o_opt.param_groups):
            assert og["lr"] == pytest.approx(tg["lr"], rel=1e-12, abs=1e-15)
            assert og["momentum"] == pytest.approx(tg["momentum"], rel=1e-12)
        _assert_same(tm, om)
        if epoch == 9:
            saved = (o_s.state_dict(), o_opt.state_dict(),
                     [g["lr"] for g in o_opt.param_groups])
            ref = [o_s.get_last_lr()]
            cont = []
    # resume: a fresh optimizer + scheduler loaded from the epoch-10 state dicts
    _, om2 = _models(device)
    o_opt2 = _sgd(ot, om2)
    o_s2 = _sched_cases(ot)[name](o_opt2)
    o_opt2.load_state_dict(saved[1])
    o_s2.load_state_dict(saved[0])
    assert o_s2.get_last_lr() == ref[0]
    t_opt3 = _sgd(torch, _models(device)[0])
    t_s3 = _sched_cases(torch)[name](t_opt3)
    for _ in range(10):
        t_opt3.step(), t_s3.step()
    for _ in range(20):
        o_s2.step(), t_s3.step()
        cont.append(o_s2.get_last_lr())
        assert o_s2.get_last_lr() == pytest.approx(t_s3.get_last_lr(), rel=1e-12, abs=1e-15)
    assert [g["lr"] for g in o_opt2.param_groups] == pytest.approx(
        [g["lr"] for g in o_opt.param_groups], rel=1e-12)


@pytest.mark.parametrize("name", ["CosineAnnealingWarmRestarts", "LinearLR", "PolynomialLR",
                                  "ConstantLR"])
def test_scheduler_step_with_epoch_matches_torch(name):
    """``step(epoch)`` jumps (closed forms; fractional epochs for warm restarts)."""
    import warnings
    epochs = [1, 2, 7, 3.5, 14, 0, 22.25, 40] if name.startswith("Cosine") else \
        [1, 3, 7, 2, 10, 0, 5, 20]
    tm, om = _models("cpu")
    t_opt, o_opt = _sgd(torch, tm), _sgd(ot, om)
    t_s, o_s = _sched_cases(torch)[name](t_opt), _sched_cases(ot)[name](o_opt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for e in epochs:
            t_s.step(e)
            o_s.step(e)
            assert o_s.get_last_lr() == pytest.approx(t_s.get_last_lr(), rel=1e-12)


PLATEAU = [dict(), dict(mode="max", factor=0.5, patience=2, threshold=0.05),
           dict(mode="min", threshold_mode="abs", threshold=0.02, patience=1, cooldown=2,
                min_lr=[1e-3, 2e-3]),
           dict(mode="max", threshold_mode="abs", threshold=0.0, patience=0, factor=0.5,
                min_lr=0.01, eps=1e-3)]


@pytest.mark.parametrize("i", range(len(PLATEAU)))
def test_reduce_lr_on_plateau_matches_torch(device, i):
    """A noisy, plateauing metric (and a tensor metric on ``device``): the same rates as
    torch each epoch, across modes, threshold modes, cooldown, min_lr and eps; the state
    dict resumes."""
    kw = PLATEAU[i]
    rng = np.random.default_rng(i)
    metric = np.concatenate([np.linspace(1, 0.5, 8), 0.5 + 0.03 * rng.standard_normal(40)])
    if kw.get("mode") == "max":
        metric = -metric
    tm, om = _models(device)
    t_opt, o_opt = _sgd(torch, tm), _sgd(ot, om)
    t_s = torch.optim.lr_scheduler.ReduceLROnPlateau(t_opt, **kw)
    o_s = optim.lr_scheduler.ReduceLROnPlateau(o_opt, **kw)
    assert isinstance(o_s, optim.lr_scheduler.LRScheduler)
    changes = 0
    for e, m in enumerate(metric):
        t_s.step(float(m))
        o_s.step(ot.tensor(float(m), device=device) if e % 2 else float(m))
        assert o_s.get_last_lr() == pytest.approx(t_s.get_last_lr(), rel=1e-12)
        assert (o_s.num_bad_epochs, o_s.cooldown_counter, o_s.best) == \
            (t_s.num_bad_epochs, t_s.cooldown_counter, pytest.approx(t_s.best))
        changes += o_s.get_last_lr() != [0.1, 0.05] if e == len(metric) - 1 else 0
        if e == 20:
            sd = o_s.state_dict()
    assert changes, "the metric plateaus: the rate must have been reduced"
    _, om2 = _models(device)
    o_s2 = optim.lr_scheduler.ReduceLROnPlateau(_sgd(ot, om2), **kw)
    o_s2.load_state_dict(sd)
    assert o_s2.best == sd["best"] and o_s2.num_bad_epochs == sd["num_bad_epochs"]
    assert set(sd) == set(t_s.state_dict())


def test_scheduler_bad_arguments():
    S = optim.lr_scheduler
    opt = optim.SGD([nn.Parameter(ot.ones(2))], lr=0.1)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        S.ReduceLROnPlateau(opt, factor=1.5)
    with pytest.raises(ValueError, match="mode"):
        S.ReduceLROnPlateau(opt, mode="lowest")
    with pytest.raises(ValueError, match="threshold mode"):
        S.ReduceLROnPlateau(opt, threshold_mode="pct")
    with pytest.raises(ValueError, match="milestone"):
        S.SequentialLR(opt, [S.ConstantLR(opt), S.ConstantLR(opt)], milestones=[])
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        S.ChainedScheduler([S.ReduceLROnPlateau(opt)])
    other = optim.SGD([nn.Parameter(ot.ones(2))], lr=0.1)
    with pytest.raises(ValueError, match="same optimizer"):
        S.ChainedScheduler([S.ConstantLR(opt), S.ConstantLR(other)])
    with pytest.raises(ValueError, match="T_0"):
        S.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="mode is invalid"):
        S.CyclicLR(opt, 0.01, 0.1, mode="sine")
    with pytest.raises(ValueError, match="momentum"):
        S.CyclicLR(optim.Adagrad([nn.Parameter(ot.ones(2))]), 0.01, 0.1)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        S.LinearLR(opt, start_factor=0)


# ------------------------------------------------------------------ a script, as torch's
def test_mnist_style_script_matches_torch(device):
    """pytorch/examples mnist, shrunk: a conv net, Adadelta(lr=1) with StepLR(gamma=0.7),
    a DataLoader with 2 workers and pin_memory, batches moved to the device in the loop;
    the loss of every step and the final weights equal torch's."""
    import omnitensor.nn.functional as F
    from omnitensor.utils.data import DataLoader, TensorDataset
    rng = np.random.default_rng(3)
    images = rng.standard_normal((48, 1, 8, 8)).astype(np.float32)
    labels = rng.integers(0, 10, 48)
    order = rng.permutation(48).tolist()  # the same "shuffle" for both libraries

    def build(lib):
        nn_ = lib.nn

        class Net(nn_.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn_.Conv2d(1, 4, 3, 1)
                self.fc1 = nn_.Linear(4 * 3 * 3, 10)

            def forward(self, x):
                x = lib.nn.functional.relu(self.conv1(x))
                x = lib.nn.functional.max_pool2d(x, 2)
                x = lib.flatten(x, 1)
                return lib.nn.functional.log_softmax(self.fc1(x), dim=1)
        return Net()

    torch.manual_seed(1)
    tnet = build(torch)
    onet = build(ot)
    onet.load_state_dict({k: ot.tensor(v.detach().numpy()) for k, v in
                          tnet.state_dict().items()})
    onet = onet.to(device)
    t_loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.tensor(images), torch.tensor(labels)),
        batch_size=8, sampler=order)
    o_loader = DataLoader(TensorDataset(ot.tensor(images), ot.tensor(labels)), batch_size=8,
                          sampler=order, num_workers=2, pin_memory=True)
    t_opt, o_opt = torch.optim.Adadelta(tnet.parameters(), lr=1.0), \
        optim.Adadelta(onet.parameters(), lr=1.0)
    t_sched = torch.optim.lr_scheduler.StepLR(t_opt, step_size=1, gamma=0.7)
    o_sched = optim.lr_scheduler.StepLR(o_opt, step_size=1, gamma=0.7)
    for _ in range(2):
        for (tx, ty), (ox, oy) in zip(t_loader, o_loader):
            ox, oy = ox.to(device), oy.to(device)
            t_opt.zero_grad()
            tl = torch.nn.functional.nll_loss(tnet(tx), ty)
            tl.backward()
            t_opt.step()
            o_opt.zero_grad()
            ol = F.nll_loss(onet(ox), oy)
            ol.backward()
            o_opt.step()
            np.testing.assert_allclose(ol.item(), tl.item(), rtol=1e-4, atol=1e-5)
        t_sched.step()
        o_sched.step()
        assert o_sched.get_last_lr() == pytest.approx(t_sched.get_last_lr())
    for (name, tp), op in zip(tnet.named_parameters(), onet.parameters()):
        np.testing.assert_allclose(op.detach().cpu().numpy(), tp.detach().numpy(),
                                   rtol=1e-3, atol=1e-4, err_msg=name)
