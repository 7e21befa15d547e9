"""Compiled equals eager: training steps (forward, backward, optimizer update) of an MLP with
dropout, a CNN with batch norm, an LSTM and a Transformer encoder, over several steps.

Unfused (``config.fuse = False``: the replay runs the same primitives) the parameters,
gradients, buffers and losses are bitwise equal to eager on every device; with the default
planner (fused kernels where the fusion planner makes them) they agree within float32's
tolerance. Adam's compiled step keeps its count on the device (torch's capturable), so its
bias corrections are computed there: within tolerance, not bitwise."""
from __future__ import annotations

import pytest

import omnitensor as ot
from omnitensor import compiler

from compile_models import batches, make, train_step

STEPS = 4


@pytest.fixture
def unfused():
    old = compiler.config.fuse
    compiler.config.fuse = False
    yield
    compiler.config.fuse = old


def _run(name, opt_name, device, steps=STEPS):
    m1, o1 = make(name, opt_name, device)
    m2, o2 = make(name, opt_name, device)
    step = ot.compile(train_step)
    losses = []
    for i, (x, y) in enumerate(batches(name, device, steps)):
        ot.manual_seed(100 + i)
        a = train_step(m1, o1, x, y)
        ot.manual_seed(100 + i)
        b = step(m2, o2, x, y)
        losses.append((a, b))
    return m1, o1, m2, o2, step, losses


def _pairs(m1, m2):
    s1, s2 = m1.state_dict(), m2.state_dict()
    assert list(s1) == list(s2)
    for k in s1:
        yield k, s1[k], s2[k]
    for (k, p), q in zip(m1.named_parameters(), m2.parameters()):
        yield k + ".grad", p.grad, q.grad


@pytest.mark.parametrize("name", ["mlp", "cnn", "lstm", "encoder"])
def test_sgd_momentum_steps_bitwise_unfused(name, device, unfused):
    m1, _o1, m2, _o2, step, losses = _run(name, "sgd_momentum", device)
    info = step.cache_info()
    # the first step creates the momentum buffers (a new optimizer-state structure):
    # traced twice, then replayed
    assert info["traces"] == 2 and info["replays"] == STEPS - 2 and not info["breaks"]
    for a, b in losses:
        assert ot.equal(a, b).item()
    for k, p, q in _pairs(m1, m2):
        assert ot.equal(p, q).all().item(), k


# (not the encoder: its attention key bias has a zero gradient up to rounding, which Adam
# normalises to steps of size lr whose sign the last bit decides)
@pytest.mark.parametrize("name", ["mlp", "lstm"])
@pytest.mark.parametrize("opt_name", ["adam", "adamw_amsgrad"])
def test_adam_steps_within_tolerance(name, opt_name, device):
    m1, o1, m2, o2, step, losses = _run(name, opt_name, device, steps=5)
    assert step.cache_info()["replays"] == 3
    for a, b in losses:
        assert abs(a.item() - b.item()) < 1e-5
    for k, p, q in _pairs(m1, m2):
        if p.dtype.is_floating_point:
            assert ot.allclose(p, q, rtol=1e-4, atol=1e-6), k
    # the compiled optimizer's step count is a device tensor and counts every step
    for st in o2.state.values():
        assert float(st["step"]) == 5.0 and str(st["step"].device) == str(device)
    assert all(st["step"] == 5 for st in o1.state.values())


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_sgd_momentum_steps_default_planner(name, device):
    m1, _o1, m2, _o2, step, losses = _run(name, "sgd_momentum", device)
    assert step.cache_info()["replays"] == STEPS - 2
    for a, b in losses:
        assert abs(a.item() - b.item()) < 1e-5
    for k, p, q in _pairs(m1, m2):
        if p.dtype.is_floating_point:
            assert ot.allclose(p, q, rtol=1e-4, atol=1e-6), k


@pytest.mark.parametrize("name", ["mlp", "cnn", "lstm", "encoder"])
def test_compiled_module_with_backward_outside_bitwise_unfused(name, device, unfused):
    """torch.compile(model) in an eager training loop: the replayed forward carries one
    autograd node whose backward replays the captured backward graph."""
    m1, o1 = make(name, "sgd_momentum", device)
    m2, o2 = make(name, "sgd_momentum", device)
    cm = ot.compile(m2)
    for i, (x, y) in enumerate(batches(name, device, STEPS)):
        for o, f in ((o1, m1), (o2, cm)):
            ot.manual_seed(100 + i)
            o.zero_grad()
            loss = ot.nn.functional.cross_entropy(f(x), y)
            loss.backward()
            o.step()
    info = cm._compiled.cache_info()
    assert info["traces"] == 1 and info["replays"] == STEPS - 1
    for k, p, q in _pairs(m1, m2):
        assert ot.equal(p, q).all().item(), k


def test_backward_outside_reaches_upstream_tensors_and_accumulates(device):
    ot.manual_seed(0)
    lin = ot.nn.Linear(3, 2).to(device)
    ref = ot.nn.Linear(3, 2).to(device)
    ref.load_state_dict(lin.state_dict())
    cm = ot.compile(lin)
    a = ot.rand(4, 3, device=device, requires_grad=True)
    ref_a = a.detach().clone().requires_grad_(True)
    for _ in range(3):
        cm(a * 2).sum().backward()                  # a non-leaf input: grads flow to a
        ref(ref_a * 2).sum().backward()
    assert ot.allclose(a.grad, ref_a.grad)
    assert ot.allclose(lin.weight.grad, ref.weight.grad)   # accumulated over 3 calls
    assert ot.allclose(lin.bias.grad, ref.bias.grad)
    # traced without .grad tensors, traced with them, then replayed
    assert cm._compiled.cache_info()["replays"] == 1
    assert cm(a * 2).grad_fn.name() == "CompiledFunctionBackward"


def test_forward_under_no_grad_bitwise(device, unfused):
    m, _ = make("encoder", "sgd_momentum", device)
    m.eval()
    f = ot.compile(m)
    x = batches("encoder", device, 1)[0][0]
    with ot.no_grad():
        for _ in range(3):
            assert ot.equal(f(x), m(x)).all().item()
    assert f._compiled.cache_info()["replays"] == 2
