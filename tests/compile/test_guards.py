"""Guards: a changed shape, dtype, device, requires_grad, grad mode, train/eval flag, scalar
argument, replaced parameter or hyperparameter retraces (and the result is the eager one);
an unchanged key replays, and sees in-place changes made outside; the recompile limit warns
once and runs eagerly."""
from __future__ import annotations

import warnings

import pytest

import omnitensor as ot
from omnitensor import compiler, nn


def _counting(fn):
    c = ot.compile(fn)
    return c, (lambda: c.cache_info()["traces"])


def test_shape_dtype_and_requires_grad_retrace(device):
    f, traces = _counting(lambda x: (x * 2).sum(0))
    x = ot.ones(3, 2, device=device)
    assert f(x).tolist() == [6.0, 6.0] and f(x).tolist() == [6.0, 6.0]
    assert traces() == 1
    assert f(ot.ones(4, 2, device=device)).tolist() == [8.0, 8.0]          # shape
    assert traces() == 2
    assert f(ot.ones(3, 2, dtype=ot.int32, device=device)).tolist() == [6, 6]   # dtype
    assert traces() == 3
    with ot.no_grad():
        assert f(ot.ones(3, 2, device=device, requires_grad=True)).tolist() == [6.0, 6.0]
    assert traces() == 4                                                    # requires_grad
    assert f(x).tolist() == [6.0, 6.0] and traces() == 4                    # cached key


def test_device_retraces(device):
    if str(device) == "cpu":
        pytest.skip("needs a second device")
    f, traces = _counting(lambda x: x + 1)
    a = f(ot.ones(2))
    b = f(ot.ones(2, device=device))
    assert traces() == 2 and str(b.device) == str(device) and str(a.device) == "cpu"
    assert f(ot.ones(2, device=device)).tolist() == [2.0, 2.0] and traces() == 2


def test_scalar_arguments_are_guarded(device):
    f, traces = _counting(lambda x, k: x * k)
    x = ot.ones(2, device=device)
    assert f(x, 2.0).tolist() == [2.0, 2.0]
    assert f(x, 3.0).tolist() == [3.0, 3.0]      # never the stale 2.0
    assert f(x, 2.0).tolist() == [2.0, 2.0] and traces() == 2


def test_grad_mode_and_train_eval(device):
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)).to(device)
    f = ot.compile(m)
    x = ot.ones(2, 4, device=device)
    with ot.no_grad():
        m.eval()
        a = f(x)
        assert ot.equal(a, f(x)).all()                     # eval: dropout is identity
        m.train()
        ot.manual_seed(0)
        b = f(x)
        ot.manual_seed(0)
        assert ot.equal(b, m(x)).all()
        assert not ot.equal(a, b).all()
    info = f._compiled.cache_info()
    assert info["traces"] == 2 and info["replays"] == 1
    ref = m(x)                                             # grad mode on: a new key
    ot.manual_seed(0)
    assert f(x).requires_grad and f._compiled.cache_info()["traces"] == 3
    assert ref.shape == (2, 4)


def test_replaced_parameter_retraces(device):
    m = nn.Linear(3, 2).to(device)
    f = ot.compile(m)
    x = ot.ones(1, 3, device=device)
    with ot.no_grad():
        f(x)
        f(x)
        m.weight = nn.Parameter(ot.zeros(2, 3, device=device))
        m.bias = nn.Parameter(ot.zeros(2, device=device))
        assert f(x).tolist() == [[0.0, 0.0]]
    assert f._compiled.cache_info()["traces"] == 2


def test_outside_in_place_mutation_is_seen_without_retracing(device):
    # a replay reads each tensor's current storage: an eager optimizer step, zero_(),
    # fill_() or a `.data =` of the same shape between calls is seen (torch does not
    # retrace for these either); a new shape is a new key
    m = nn.Linear(3, 2).to(device)
    f = ot.compile(m)
    x = ot.ones(1, 3, device=device)
    with ot.no_grad():
        f(x)
        f(x)
        m.weight.zero_()
        m.bias.fill_(1.0)
        assert f(x).tolist() == [[1.0, 1.0]]
        m.bias.data = ot.full((2,), 2.0, device=device)      # storage replaced
        assert f(x).tolist() == [[2.0, 2.0]]
        assert f._compiled.cache_info()["traces"] == 1
        m.weight.data = ot.zeros(4, 3, device=device)          # new shapes: retrace
        m.bias.data = ot.ones(4, device=device)
        assert f(x).tolist() == [[1.0, 1.0, 1.0, 1.0]]
        assert f._compiled.cache_info()["traces"] == 2


def test_hyperparameter_change_retraces(device):
    p = nn.Parameter(ot.ones(3, device=device))
    opt = ot.optim.SGD([p], lr=0.5)

    @ot.compile
    def step():
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
    for _ in range(3):
        step()
    assert p.tolist() == [0.0, 0.0, 0.0]                  # 1 - 0.5 * 2 = 0, then 0 - 0
    with ot.no_grad():
        p.fill_(1.0)
    opt.param_groups[0]["lr"] = 0.25
    step()
    assert p.tolist() == [0.5, 0.5, 0.5]                  # the new lr, not the traced one
    # traced without .grad tensors, traced again with them, replayed, traced for the new lr
    assert step.cache_info()["traces"] == 3


def test_recompile_limit_warns_once_and_runs_eagerly(device):
    f = ot.compile(lambda x: x + 1)
    old = compiler.config.cache_size_limit
    compiler.config.cache_size_limit = 3
    try:
        for n in range(1, 4):
            f(ot.ones(n, device=device))
        with pytest.warns(UserWarning, match="cache_size_limit"):
            assert f(ot.ones(7, device=device)).tolist() == [2.0] * 7
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert f(ot.ones(8, device=device)).tolist() == [2.0] * 8
            assert f(ot.ones(2, device=device)).tolist() == [2.0] * 2   # still replays
        assert f.cache_info()["traces"] == 3
    finally:
        compiler.config.cache_size_limit = old


SCALE = 2.0


def _scaled(x):
    return x * SCALE                  # a global read by a helper, not by the compiled code


def test_globals_of_helpers_and_module_attributes_are_guarded(device):
    global SCALE
    f = ot.compile(lambda x: _scaled(x) + 1)
    x = ot.ones(2, device=device)
    assert f(x).tolist() == [3.0, 3.0] and f(x).tolist() == [3.0, 3.0]
    SCALE = 5.0
    try:
        assert f(x).tolist() == [6.0, 6.0]          # never the traced 2.0
    finally:
        SCALE = 2.0
    drop = nn.Dropout(0.5)
    g = ot.compile(drop)
    with ot.no_grad():
        g(ot.ones(8, device=device))
        drop.p = 0.0                                  # a module's Python attribute
        assert g(ot.ones(8, device=device)).tolist() == [1.0] * 8


def test_autocast_state_is_guarded():
    lin = nn.Linear(4, 4)
    f = ot.compile(lin)
    x = ot.ones(2, 4)
    with ot.no_grad():
        assert f(x).dtype == ot.float32
        with ot.autocast("cpu", dtype=ot.bfloat16):
            lin(x)                                  # fills autocast's weight-cast cache
            a = f(x)
            b = f(x)
            with ot.no_grad():
                lin.weight.zero_()
                lin.bias.zero_()
            c = f(x)                                # the replay recasts the new weights
        assert a.dtype == b.dtype == ot.bfloat16 and c.abs().sum().item() == 0
        assert f(x).dtype == ot.float32
    assert f._compiled.cache_info()["traces"] == 2


def test_a_scheduler_stepped_inside_keeps_the_call_eager(device):
    p = nn.Parameter(ot.ones(2, device=device))
    opt = ot.optim.SGD([p], lr=1.0)
    sched = ot.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)

    @ot.compile
    def step():
        opt.zero_grad()
        p.sum().backward()
        opt.step()
        sched.step()
    lrs = []
    for _ in range(7):
        step()
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25]   # the schedule advances
    assert p.tolist() == [-3.75, -3.75]
