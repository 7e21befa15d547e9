"""Learning-rate schedulers against their closed forms (and torch when installed)."""
import math

import pytest

import omnitensor as ot
from omnitensor import nn, optim
from omnitensor.optim import lr_scheduler as S


def _opt(lr=0.1, cls=optim.SGD, **kw):
    return cls([nn.Parameter(ot.ones(1))], lr=lr, **kw)


def _run(sched, opt, n):
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(n):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    return lrs


def test_step_multistep_exponential():
    o = _opt()
    assert _run(S.StepLR(o, step_size=2, gamma=0.5), o, 5) == pytest.approx(
        [0.1, 0.1, 0.05, 0.05, 0.025, 0.025])
    o = _opt()
    assert _run(S.MultiStepLR(o, milestones=[1, 3, 3], gamma=0.1), o, 4) == pytest.approx(
        [0.1, 0.01, 0.01, 0.0001, 0.0001])
    o = _opt()
    assert _run(S.ExponentialLR(o, gamma=0.9), o, 3) == pytest.approx(
        [0.1, 0.09, 0.081, 0.0729])


def test_cosine_annealing_closed_form():
    o = _opt(lr=1.0)
    lrs = _run(S.CosineAnnealingLR(o, T_max=4, eta_min=0.1), o, 4)
    ref = [0.1 + 0.9 * (1 + math.cos(math.pi * e / 4)) / 2 for e in range(5)]
    assert lrs == pytest.approx(ref)


def test_lambda_lr_and_groups():
    p1, p2 = nn.Parameter(ot.ones(1)), nn.Parameter(ot.ones(1))
    o = optim.SGD([{"params": [p1]}, {"params": [p2], "lr": 1.0}], lr=0.5)
    s = S.LambdaLR(o, [lambda e: 0.5 ** e, lambda e: 1 / (e + 1)])
    for _ in range(3):
        o.step()
        s.step()
    assert s.get_last_lr() == pytest.approx([0.5 * 0.125, 0.25])
    sd = s.state_dict()
    assert "lr_lambdas" not in sd and sd["last_epoch"] == 3


def test_one_cycle_two_and_three_phase():
    o = _opt(cls=optim.SGD, momentum=0.9)
    s = S.OneCycleLR(o, max_lr=1.0, total_steps=10, pct_start=0.3, div_factor=10,
                     final_div_factor=100)
    lrs = _run(s, o, 9)
    assert lrs[0] == pytest.approx(0.1)                 # max_lr / div_factor
    assert max(lrs) == pytest.approx(1.0) and lrs.index(max(lrs)) == 2
    assert lrs[-1] == pytest.approx(0.1 / 100)           # initial / final_div_factor
    assert o.param_groups[0]["momentum"] == pytest.approx(0.95)
    a = _opt(cls=optim.Adam)
    s = S.OneCycleLR(a, max_lr=0.01, epochs=2, steps_per_epoch=5, three_phase=True,
                     anneal_strategy="linear")
    lrs = _run(s, a, 9)
    # phases end at steps 2, 4 and 9: up, down to the start, then down to min_lr
    assert lrs[:5] == pytest.approx([0.0004, 0.0052, 0.01, 0.0052, 0.0004])
    assert lrs[9] == pytest.approx(0.0004 / 1e4)
    assert a.param_groups[0]["betas"][0] != 0.9          # beta1 cycles
    with pytest.raises(ValueError, match="Tried to step"):
        for _ in range(3):
            s.step()


def test_schedulers_match_torch():
    torch = pytest.importorskip("torch")
    cases = [
        (S.StepLR, torch.optim.lr_scheduler.StepLR, dict(step_size=3, gamma=0.3)),
        (S.MultiStepLR, torch.optim.lr_scheduler.MultiStepLR, dict(milestones=[2, 5])),
        (S.ExponentialLR, torch.optim.lr_scheduler.ExponentialLR, dict(gamma=0.8)),
        (S.CosineAnnealingLR, torch.optim.lr_scheduler.CosineAnnealingLR,
         dict(T_max=5, eta_min=0.01)),
        (S.OneCycleLR, torch.optim.lr_scheduler.OneCycleLR, dict(max_lr=0.5, total_steps=12)),
        (S.OneCycleLR, torch.optim.lr_scheduler.OneCycleLR,
         dict(max_lr=0.5, total_steps=12, three_phase=True, anneal_strategy="linear")),
    ]
    for ours, theirs, kw in cases:
        for ocls, tcls in ((optim.SGD, torch.optim.SGD), (optim.Adam, torch.optim.Adam)):
            extra = {"momentum": 0.9} if ocls is optim.SGD else {}
            o = ocls([nn.Parameter(ot.ones(1))], lr=0.2, **extra)
            t = tcls([torch.ones(1, requires_grad=True)], lr=0.2, **extra)
            so, st = ours(o, **kw), theirs(t, **kw)
            steps = 11 if ours is S.OneCycleLR else 14     # CosineAnnealing: past T_max
            for _ in range(steps):
                o.step(), t.step()
                so.step(), st.step()
                assert so.get_last_lr() == pytest.approx(st.get_last_lr(), rel=1e-12), ours
                if "betas" in t.param_groups[0]:
                    assert o.param_groups[0]["betas"][0] == pytest.approx(
                        t.param_groups[0]["betas"][0])
                elif "momentum" in t.param_groups[0]:
                    assert o.param_groups[0]["momentum"] == pytest.approx(
                        t.param_groups[0]["momentum"])


def test_state_dict_and_resume():
    o = _opt()
    s = S.StepLR(o, step_size=2)
    _run(s, o, 3)
    sd = s.state_dict()
    assert "optimizer" not in sd
    o2 = _opt()
    s2 = S.StepLR(o2, step_size=2)
    s2.load_state_dict(sd)
    assert s2.last_epoch == 3 and s2.get_last_lr() == s.get_last_lr()
    with pytest.raises(KeyError, match="initial_lr"):
        S.StepLR(_opt(), step_size=2, last_epoch=4)
    with pytest.raises(TypeError):
        S.StepLR(object(), step_size=2)
