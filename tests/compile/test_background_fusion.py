"""The default tiered mode: a new key replays unfused at once (bitwise eager) while its fused
kernels build on a thread; the fused plan then takes over, and results stay right across the
swap."""
from __future__ import annotations

import numpy as np

import omnitensor as ot
from omnitensor import compiler, nn
from omnitensor.compiler.entry import concurrent_build
from omnitensor.nn import functional as F


def _step_pair(device):
    def make():
        ot.manual_seed(0)
        net = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 4)).to(device)
        opt = ot.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            return loss
        return net, step
    return make(), make()


def test_first_replays_are_unfused_then_the_fused_plan_takes_over(device):
    compiler.config.fuse_in_background = True
    (net_c, step_c), (net_e, step_e) = _step_pair(device)
    cf = ot.compile(step_c)
    ot.manual_seed(1)
    x, y = ot.randn(16, 8, device=device), ot.randint(0, 4, (16,), device=device)
    losses = []
    for i in range(12):
        lc, le = cf(x, y), step_e(x, y)
        losses.append((lc.item(), le.item()))
        if i == 3:
            assert cf.wait_for_kernels(timeout=300)
    np.testing.assert_allclose([a for a, _ in losses], [b for _, b in losses], rtol=2e-5,
                               atol=1e-6)
    for pc, pe in zip(net_c.parameters(), net_e.parameters()):
        np.testing.assert_allclose(np.asarray(pc.tolist()), np.asarray(pe.tolist()),
                                   rtol=2e-5, atol=2e-6)
    entries = [e for e in cf._cache.values() if e.plan is not None]
    assert entries
    if not concurrent_build(str(ot.device(device))):   # sycl builds before replaying
        assert all(e.upgrade is None for e in entries)
        return
    assert all(e.upgrade is not None and not e.upgrade.is_alive() for e in entries)
    assert all(e.upgrade_error is None for e in entries), [e.upgrade_error for e in entries]
    # the swapped-in plan is the planner's (fewer steps than one per recorded node)
    assert any(e.plan.launches < len(e.graph.nodes) for e in entries)


def test_background_off_builds_before_the_first_replay(device):
    compiler.config.fuse_in_background = False
    (_, step_c), _ = _step_pair(device)
    cf = ot.compile(step_c)
    x, y = ot.randn(16, 8, device=device), ot.randint(0, 4, (16,), device=device)
    for _ in range(3):
        cf(x, y)
    assert all(e.upgrade is None for e in cf._cache.values())
    assert cf.wait_for_kernels(timeout=0)
