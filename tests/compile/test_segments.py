"""Graph breaks split a compiled call into segments (compiler/segments.py): the Python runs,
the device work between breaks replays as compiled plans. Every case compares with the same
program run eagerly, over enough calls that replays (not only the capture) are checked."""
from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import omnitensor as ot
from omnitensor import compiler, nn
from omnitensor.core import capture_hooks
from omnitensor.nn import functional as F


@pytest.fixture(autouse=True)
def always_segments():
    """Segments even where eager measures faster (the default policy picks per key)."""
    old = compiler.config.segments
    compiler.config.segments = True
    yield
    compiler.config.segments = old


@pytest.fixture(params=[True, False], ids=["fused", "unfused"])
def fuse(request):
    old = compiler.config.fuse
    compiler.config.fuse = None if request.param else False
    yield request.param
    compiler.config.fuse = old


def _quiet():
    w = warnings.catch_warnings()
    w.__enter__()
    warnings.simplefilter("ignore")
    return w


def _close(a, b, exact):
    a, b = np.asarray(a.tolist()), np.asarray(b.tolist())
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)


def _busiest(cf):
    """The segmented capture that served most calls (the first capture of a call that
    fills a cache, such as cross_entropy's class range, is replaced by a second one)."""
    scs = [e.segments for e in cf._cache.values() if e.segments is not None]
    assert scs, cf.cache_info()
    return max(scs, key=lambda sc: sc.calls)


def _mlp(device):
    ot.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)).to(device)


def test_item_before_backward_replays_in_segments(device, fuse):
    """The common case: logging ``loss.item()`` inside the step."""
    net = _mlp(device)
    ref = copy.deepcopy(net)

    def make_step(model, log):
        opt = ot.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            log.append(loss.item())          # a graph break between forward and backward
            loss.backward()
            opt.step()
            return loss
        return step
    log_c, log_e = [], []
    step_c = ot.compile(make_step(net, log_c))
    step_e = make_step(ref, log_e)
    ot.manual_seed(1)
    x = ot.randn(32, 8, device=device)
    y = ot.randint(0, 3, (32,), device=device)
    w = _quiet()
    try:
        for _ in range(8):
            lc = step_c(x, y)
            le = step_e(x, y)
            _close(lc, le, exact=not fuse)
    finally:
        w.__exit__(None, None, None)
    np.testing.assert_allclose(log_c, log_e, rtol=2e-5)
    for pc, pe in zip(net.parameters(), ref.parameters()):
        _close(pc, pe, exact=not fuse)
        _close(pc.grad, pe.grad, exact=not fuse)
    info = step_c.cache_info()
    assert info["segmented"] >= 1 and info["replays"] >= 4, info
    assert info["replayable"] == 0
    sc = _busiest(step_c)
    assert sc.compiled_segments == 2 and sc.calls >= 4 and sc.divergences == 0


def test_branch_on_a_host_value_takes_the_right_path(device, fuse):
    """Data-dependent Python after a break: the replay notices the other path and finishes
    eagerly; results are never stale."""
    def f(x):
        y = x * 2
        if y.sum().item() > 10:
            return (y + 1).exp()
        return (y - 1).sin()
    cf = ot.compile(f)
    small, big = ot.ones(4, device=device), ot.full((4,), 5.0, device=device)
    w = _quiet()
    try:
        for x in [small, small, small, big, small, big, big, small]:
            _close(cf(x), f(x), exact=not fuse)
    finally:
        w.__exit__(None, None, None)


def test_segments_replay_fused_kernels(device):
    """Both sides of a logging break hold elementwise chains: each side replays as a plan."""
    log: list = []

    def f(x):
        a = (x * 3 + 1).tanh() * 2 - x
        log.append(float(a.sum()))           # break
        return (a * 0.5).sigmoid() + a.exp() * 0.5
    cf = ot.compile(f)
    x = ot.linspace(-1, 1, 64, device=device).reshape(8, 8)
    w = _quiet()
    try:
        for _ in range(4):
            _close(cf(x), f(x), exact=False)
    finally:
        w.__exit__(None, None, None)
    np.testing.assert_allclose(log[0::2], log[1::2], rtol=1e-5)
    sc = _busiest(cf)
    assert sc.compiled_segments == 2 and sc.calls >= 2 and sc.divergences == 0


def test_a_number_read_at_a_break_scales_the_next_ops(device, fuse):
    """The host value feeds the next segment's scalars (it differs between calls, and by an
    ulp between fused and eager sums): that segment runs eagerly, the call never
    diverges, results are right."""
    def f(x):
        a = (x * 3 + 1).tanh() * 2 - x
        s = float(a.sum())                   # break
        return (a * s).sigmoid() + a.exp() * 0.5
    cf = ot.compile(f)
    w = _quiet()
    try:
        for k in [1.0, 1.0, 2.0, 3.0, 1.0]:
            x = ot.linspace(-k, k, 64, device=device).reshape(8, 8)
            _close(cf(x), f(x), exact=False)
    finally:
        w.__exit__(None, None, None)
    sc = _busiest(cf)
    assert sc.divergences == 0 and sc.calls >= 3


def test_views_and_in_place_writes_across_a_break(device, fuse):
    def f(x):
        base = x * 1.0
        v = base.view(2, 8)[1]               # a view held across the break
        m = v.max().item()                   # break
        v.add_(m)                            # writes through the view into base
        base.mul_(2)
        return base, v
    cf = ot.compile(f)
    x = ot.arange(16.0, device=device)
    w = _quiet()
    try:
        for _ in range(4):
            (b1, v1), (b2, v2) = cf(x), f(x)
            _close(b1, b2, exact=True)
            _close(v1, v2, exact=True)
            v1.add_(1)                       # still a view of the returned base
            assert b1[8].item() == v1[0].item()
    finally:
        w.__exit__(None, None, None)


def test_data_dependent_shape_between_segments(device):
    def f(x):
        y = x * 2 - 1
        pos = y[y > 0]                       # nonzero: a data-dependent shape
        return pos.sum() + y.mean()
    cf = ot.compile(f)
    w = _quiet()
    try:
        for k in [3, 3, 5, 3, 7, 7]:
            x = ot.arange(10.0, device=device) / k
            _close(cf(x), f(x), exact=False)
    finally:
        w.__exit__(None, None, None)


def test_random_draws_and_host_randn_segments(device, fuse):
    """Dropout draws fresh masks in a segmented replay (same stream as eager); ``randn``
    (a host computation) runs eagerly until the next break."""
    def f(x, log):
        h = F.dropout(x * 2, 0.5, training=True)
        log.append(h.sum().item())
        z = ot.randn(4, 4, device=device)
        return (h + z).relu()
    cf = ot.compile(f)
    x = ot.ones(4, 4, device=device)
    w = _quiet()
    try:
        for i in range(4):
            ot.manual_seed(10 + i)
            lc: list = []
            rc = cf(x, lc)
            ot.manual_seed(10 + i)
            le: list = []
            re_ = f(x, le)
            _close(rc, re_, exact=True)
            assert lc == le
    finally:
        w.__exit__(None, None, None)


def test_validation_inside_a_segment_still_raises(device):
    def f(logits, target):
        loss = F.cross_entropy(logits, target)
        print_me = loss.item()               # break
        return loss * print_me
    cf = ot.compile(f)
    logits = ot.zeros(4, 3, device=device)
    good = ot.tensor([0, 1, 2, 1], device=device)
    bad = ot.tensor([0, 1, 7, 1], device=device)
    w = _quiet()
    try:
        for _ in range(3):
            _close(cf(logits, good), f(logits, good), exact=False)
        with pytest.raises((RuntimeError, IndexError), match="out of bounds"):
            cf(logits, bad)
        _close(cf(logits, good), f(logits, good), exact=False)   # usable after
    finally:
        w.__exit__(None, None, None)


def test_backward_outside_a_segmented_forward(device):
    net = _mlp(device)
    ref = copy.deepcopy(net)

    def fwd(model, x):
        h = model(x)
        if h.abs().max().item() > 1e6:       # break in the forward
            h = h / 2
        return h.square().mean()
    cf = ot.compile(lambda x: fwd(net, x))
    x = ot.linspace(-1, 1, 40, device=device).reshape(5, 8)
    w = _quiet()
    try:
        for _ in range(4):
            net.zero_grad()
            ref.zero_grad()
            cf(x).backward()
            fwd(ref, x).backward()
            for pc, pe in zip(net.parameters(), ref.parameters()):
                _close(pc.grad, pe.grad, exact=False)
    finally:
        w.__exit__(None, None, None)


def test_fullgraph_still_raises():
    def f(x):
        return x * x.sum().item()
    with pytest.raises(compiler.Unsupported, match="graph break"):
        ot.compile(f, fullgraph=True)(ot.ones(3))


def test_segment_warning_says_what_runs():
    @ot.compile
    def f(x):
        return x * x.sum().item()
    with pytest.warns(UserWarning, match="run as 2 segments"):
        f(ot.ones(3))


def test_auto_policy_measures_and_keeps_results_right(device):
    compiler.config.segments = None
    log: list = []

    def f(x):
        a = (x * 3 + 1).tanh() * 2 - x
        log.append(a.sum().item())
        return a.exp() - 1
    cf = ot.compile(f)
    x = ot.linspace(-1, 1, 256, device=device)
    w = _quiet()
    try:
        for _ in range(12):
            _close(cf(x), f(x), exact=False)
    finally:
        w.__exit__(None, None, None)
    sc = _busiest(cf)
    assert sc.verdict in ("segments", "eager")
    assert len(sc.timings["S"]) == 5 and len(sc.timings["E"]) == 3


def test_segments_off_runs_break_calls_eagerly():
    compiler.config.segments = False

    @ot.compile
    def f(x):
        return x * x.sum().item()
    w = _quiet()
    try:
        for _ in range(3):
            assert f(ot.ones(3)).tolist() == [3.0, 3.0, 3.0]
    finally:
        w.__exit__(None, None, None)
    assert f.cache_info()["segmented"] == 0


def test_host_values_become_tensors_after_a_break(device):
    """A tensor made from a number read at the break is an input of the next segment."""
    p = nn.Parameter(ot.ones(3, device=device))

    def f(x):
        m = (x * 2).max().item()
        t = ot.tensor([m, m + 1, m + 2], device=device)
        with ot.no_grad():
            p.add_(t)                        # an in-place parameter update after the break
        return x * t
    q = nn.Parameter(ot.ones(3, device=device))

    def g(x):
        m = (x * 2).max().item()
        t = ot.tensor([m, m + 1, m + 2], device=device)
        with ot.no_grad():
            q.add_(t)
        return x * t
    cf = ot.compile(f)
    w = _quiet()
    try:
        for k in [1.0, 2.0, 3.0, 3.0, 5.0]:
            x = ot.full((3,), k, device=device)
            _close(cf(x), g(x), exact=True)
            _close(p, q, exact=True)
    finally:
        w.__exit__(None, None, None)


def test_an_exception_leaves_the_work_before_it_done(device):
    p = nn.Parameter(ot.zeros(2, device=device))
    state = {"fail": False}

    def f(x):
        with ot.no_grad():
            p.add_(x)
        s = x.sum().item()
        with ot.no_grad():
            p.mul_(2)
        if state["fail"]:
            raise ValueError("user code failed")
        return p * s
    cf = ot.compile(f)
    x = ot.ones(2, device=device)
    w = _quiet()
    try:
        for _ in range(3):
            cf(x)
        before = p.tolist()
        state["fail"] = True
        with pytest.raises(ValueError, match="user code failed"):
            cf(x)
        assert p.tolist() == [(v + 1) * 2 for v in before]   # both updates happened
    finally:
        w.__exit__(None, None, None)
    assert capture_hooks.active() is None
    assert type(ot.ones(1, device=device)._device.backend).__name__ != "Interposer"


def test_adamw_step_with_clipping_and_a_logged_loss(device):
    """A transformer-style step: AdamW, clip_grad_norm_, loss.item() before backward. The
    second capture (warm caches, optimizer state present) serves every later call."""
    net = _mlp(device)
    ref = copy.deepcopy(net)

    def make(model):
        opt = ot.optim.AdamW(model.parameters(), lr=1e-2)
        logs: list = []

        def step(x, y):
            loss = F.cross_entropy(model(x), y)
            logs.append(loss.item())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            return loss
        return step, logs
    (sc_step, logs_c), (se_step, logs_e) = make(net), make(ref)
    cstep = ot.compile(sc_step)
    ot.manual_seed(3)
    x, y = ot.randn(16, 8, device=device), ot.randint(0, 3, (16,), device=device)
    w = _quiet()
    try:
        for _ in range(8):
            cstep(x, y)
            se_step(x, y)
    finally:
        w.__exit__(None, None, None)
    np.testing.assert_allclose(logs_c, logs_e, rtol=1e-5, atol=1e-6)
    for pc, pe in zip(net.parameters(), ref.parameters()):
        _close(pc, pe, exact=False)
    sc = _busiest(cstep)
    assert sc.calls >= 5 and sc.divergences == 0


def test_eager_adam_steps_between_compiled_ones_match_pure_eager(device):
    """Adam's device step count stays on the device for eager steps after compiled ones."""
    p = nn.Parameter(ot.linspace(-1, 1, 6, device=device))
    q = nn.Parameter(ot.linspace(-1, 1, 6, device=device))
    op, oq = ot.optim.Adam([p], lr=0.1), ot.optim.Adam([q], lr=0.1)

    def make(param, opt):
        def step():
            opt.zero_grad()
            (param * param).sum().backward()
            opt.step()
        return step
    cstep, estep, ref = ot.compile(make(p, op)), make(p, op), make(q, oq)
    for i in range(8):
        (cstep if i % 3 else estep)()
        ref()
        _close(p, q, exact=False)


def test_a_failed_check_inside_a_plan_runs_nothing_twice(device):
    """Work before a failed validation stays done exactly once, as in eager."""
    p = nn.Parameter(ot.zeros(3, device=device))

    def f(logits, target):
        s = logits.sum().item()              # break: the next segment holds both
        with ot.no_grad():
            p.add_(1.0)                      # an in-place update before the check
        return F.cross_entropy(logits, target) + s
    cf = ot.compile(f)
    logits = ot.zeros(4, 3, device=device)
    good = ot.tensor([0, 1, 2, 1], device=device)
    bad = ot.tensor([0, 1, 9, 1], device=device)
    w = _quiet()
    try:
        for _ in range(4):
            cf(logits, good)
        before = p.tolist()
        with pytest.raises((RuntimeError, IndexError), match="out of bounds"):
            cf(logits, bad)
        assert p.tolist() == [v + 1 for v in before]
        cf(logits, good)
        assert p.tolist() == [v + 2 for v in before]
    finally:
        w.__exit__(None, None, None)
