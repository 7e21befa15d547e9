"""Autograd semantics, matching PyTorch."""
import gc
import weakref

import numpy as np
import pytest

import omnitensor as ot
from omnitensor import autograd


def test_leaf_grad_accumulates(device):
    x = ot.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    assert x.is_leaf and x.grad is None
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0, 9.0]
    y = x * 2
    assert not y.is_leaf and y.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "AccumulateGrad"


def test_shared_gradient_is_not_aliased(device):
    a = ot.ones(3, device=device, requires_grad=True)
    b = ot.ones(3, device=device, requires_grad=True)
    (a + b).sum().backward()
    a.grad.zero_()
    assert b.grad.tolist() == [1.0, 1.0, 1.0]


def test_backward_needs_scalar_or_gradient(device):
    x = ot.ones(2, device=device, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="scalar outputs"):
        y.backward()
    y.backward(ot.tensor([1.0, 10.0], device=device))
    assert x.grad.tolist() == [2.0, 20.0]
    with pytest.raises(RuntimeError, match="does not require grad"):
        ot.ones(1, device=device).backward()


def test_freed_graph_and_retain_graph(device):
    x = ot.tensor([2.0], device=device, requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert abs(x.grad.item() - 2 * 3 * np.exp(2)) < 1e-3
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_saved_tensors_released(device):
    x = ot.ones(1000, device=device, requires_grad=True)
    y = x.exp()
    ref = weakref.ref(y.grad_fn._saved[0])
    z = (y * 2).sum()
    z.backward()
    gc.collect()
    assert ref() is None or y.grad_fn._saved is None


def test_long_chain_no_recursion(device):
    x = ot.ones(2, device=device, requires_grad=True)
    y = x
    for _ in range(10000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_autograd_grad_and_higher_order(device):
    x = ot.tensor([1.5], device=device, requires_grad=True)
    y = x ** 3
    (g,) = autograd.grad(y, x, create_graph=True)
    assert abs(g.item() - 3 * 1.5 ** 2) < 1e-5
    (gg,) = autograd.grad(g, x, create_graph=True)
    assert abs(gg.item() - 6 * 1.5) < 1e-5
    (ggg,) = autograd.grad(gg, x)
    assert abs(ggg.item() - 6) < 1e-5
    assert x.grad is None
    z = ot.ones(1, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="not have been used"):
        autograd.grad((x * 2).sum(), [x, z])
    gx, gz = autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    assert gz is None and gx.item() == 2.0


def test_backward_inputs_only(device):
    a = ot.ones(1, device=device, requires_grad=True)
    b = ot.ones(1, device=device, requires_grad=True)
    (a * b * 3).backward(inputs=[a])
    assert a.grad.item() == 3.0 and b.grad is None


def test_grad_modes(device):
    x = ot.ones(2, device=device, requires_grad=True)
    with ot.no_grad():
        assert not (x * 2).requires_grad
        with ot.enable_grad():
            assert (x * 2).requires_grad
    assert (x * 2).requires_grad

    @ot.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad
    ot.set_grad_enabled(False)
    assert not ot.is_grad_enabled()
    ot.set_grad_enabled(True)
    with ot.set_grad_enabled(False):
        assert not (x + 1).requires_grad
    with ot.inference_mode():
        assert not (x + 1).requires_grad and autograd.is_inference_mode_enabled()
    assert ot.is_grad_enabled()


def test_non_differentiable_outputs_have_no_grad_fn(device):
    x = ot.tensor([1.0, 3.0, 2.0], device=device, requires_grad=True)
    for out in (x.argmax(), x > 1, x.to(ot.int32), x.sort(0).indices, ot.nonzero(x)[0]):
        assert out.grad_fn is None and not out.requires_grad


def test_detach_and_requires_grad(device):
    x = ot.ones(2, device=device, requires_grad=True)
    d = (x * 2).detach()
    assert not d.requires_grad and d.grad_fn is None
    with pytest.raises(RuntimeError, match="floating point"):
        ot.ones(2, dtype=ot.int64, device=device).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf"):
        (x * 2).requires_grad_(False)


def test_hooks(device):
    x = ot.ones(2, device=device, requires_grad=True)
    seen = []
    h = x.register_hook(lambda g: g * 10)
    posted = []
    x.register_post_accumulate_grad_hook(lambda t: posted.append(t.grad.tolist()))
    y = x * 3
    y.register_hook(lambda g: seen.append(g.tolist()))
    y.sum().backward()
    assert seen == [[1.0, 1.0]] and x.grad.tolist() == [30.0, 30.0]
    assert posted == [[30.0, 30.0]]
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_retain_grad(device):
    x = ot.ones(2, device=device, requires_grad=True)
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 4.0] and y.retains_grad


def test_inplace_errors(device):
    x = ot.ones(2, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.add_(1)
    y = x.exp()
    z = y * 1
    y.add_(1)  # y is saved by exp's backward
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward() if False else (y.sum() + z.sum()).backward()
    with ot.no_grad():
        x.add_(1)  # optimizers do this
    assert x.tolist() == [2.0, 2.0]


def test_inplace_on_nonleaf_is_differentiable(device):
    x = ot.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x * 2
    y.mul_(x)
    y[0] = y[0] * 10
    y.sum().backward()
    assert x.grad.tolist() == [40.0, 8.0]


def test_inplace_on_view_updates_base_history(device):
    x = ot.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = x * 1
    y[1:].mul_(x[1:])
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 4.0, 6.0]


def test_detect_anomaly_names_the_op(device):
    x = ot.tensor([0.0], device=device, requires_grad=True)
    with autograd.detect_anomaly():
        y = x.sqrt() * 0  # backward of sqrt at 0 gives inf * 0 = nan
        with pytest.raises(RuntimeError, match="SqrtBackward0"):
            y.sum().backward()


def _training_steps(device, n, trace):
    import tracemalloc
    w = ot.ones(16, device=device, requires_grad=True)
    x = ot.ones(16, device=device)

    def step():
        loss = ((w * x).tanh() ** 2).sum()
        loss.backward()
        with ot.no_grad():
            w.sub_(0.001 * w.grad)
        w.grad = None

    for _ in range(200):  # warm caches (kernels, pools)
        step()
    gc.collect()
    tracked = len(gc.get_objects())
    if trace:
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
    for _ in range(n):
        step()
    gc.collect()
    grown = (tracemalloc.get_traced_memory()[0] - base) if trace else 0
    if trace:
        tracemalloc.stop()
    return len(gc.get_objects()) - tracked, grown


def test_memory_stable_over_10000_iterations():
    # the engine and graph bookkeeping are backend-independent: 10,000 steps on cpu
    objects, grown = _training_steps("cpu", 10000, trace=True)
    assert objects < 100
    assert grown < 256 * 1024, f"Python heap grew by {grown} bytes over 10,000 steps"


def test_no_graph_leak_on_device(device):
    objects, _ = _training_steps(device, 1000, trace=False)
    assert objects < 100


def test_cast_backward_returns_input_dtype(device):
    if not ot.device(device).supports_dtype(ot.float64):
        pytest.skip("no float64")
    x = ot.ones(3, dtype=ot.float64, device=device, requires_grad=True)
    (x.to(ot.float32) * 2).sum().backward()
    assert x.grad.dtype is ot.float64 and x.grad.tolist() == [2.0] * 3
    y = ot.ones(2, device=device, requires_grad=True)
    (y.to("cpu") * 3).sum().backward()
    assert y.grad.device is y.device and y.grad.tolist() == [3.0, 3.0]


def test_queue_callback_runs_after_the_whole_pass(device):
    x = ot.tensor([1.0, 2.0], device=device, requires_grad=True)
    w = ot.tensor([3.0, 4.0], device=device, requires_grad=True)
    events = []

    def on_x(g):
        events.append("x hook")
        autograd.queue_callback(lambda: events.append(
            ("first", x.grad.tolist(), w.grad.tolist())))  # every leaf already has .grad
        autograd.queue_callback(lambda: (events.append("second"),
                                         autograd.queue_callback(lambda: events.append("third"))))
    x.register_hook(on_x)
    (x * w).sum().backward()
    assert events == ["x hook", ("first", [3.0, 4.0], [1.0, 2.0]), "second", "third"]
    # a callback belongs to one pass: the next backward runs none of the old ones
    events.clear()
    (x * 2).sum().backward()
    assert events == ["x hook", ("first", [5.0, 6.0], [1.0, 2.0]), "second", "third"]


def test_queue_callback_outside_backward_and_failing_pass(device):
    with pytest.raises(RuntimeError, match="only be installed during the backward pass"):
        autograd.queue_callback(lambda: None)
    x = ot.ones(2, device=device, requires_grad=True)
    ran = []

    def bad(g):
        autograd.queue_callback(lambda: ran.append(1))
        raise ValueError("hook failed")
    x.register_hook(bad)
    with pytest.raises(ValueError, match="hook failed"):
        (x * 2).sum().backward()
    assert ran == []
    with pytest.raises(RuntimeError, match="backward pass"):  # the failed pass left no state
        autograd.queue_callback(lambda: None)


def test_queue_callback_nested_backward_and_grad(device):
    x = ot.tensor([2.0], device=device, requires_grad=True)
    order = []

    class Inner(autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            autograd.queue_callback(lambda: order.append("outer"))
            y = ot.tensor([3.0], device=device, requires_grad=True)

            def inner_hook(gy):
                autograd.queue_callback(lambda: order.append("inner"))
            y.register_hook(inner_hook)
            with ot.enable_grad():       # a nested pass runs its own callbacks first
                (y * y).sum().backward()
            order.append("nested done")
            return g
    Inner.apply(x).sum().backward()
    assert order == ["inner", "nested done", "outer"]
    ran = []
    y = x * x

    def hook(g):
        autograd.queue_callback(lambda: ran.append("grad"))
    y.register_hook(hook)
    (gx,) = autograd.grad(y.sum(), x)
    assert gx.tolist() == [4.0] and ran == ["grad"]


def test_grad_modes_as_bare_decorators():
    @ot.enable_grad
    def enabled():
        return ot.is_grad_enabled()

    @ot.inference_mode
    def inference():
        return ot.is_grad_enabled(), autograd.is_inference_mode_enabled()

    @ot.no_grad
    def disabled():
        return ot.is_grad_enabled()
    with ot.no_grad():
        assert enabled() is True
    assert inference() == (False, True) and disabled() is False
    assert ot.is_grad_enabled() and enabled.__name__ == "enabled"


def test_pow_gradient_with_zero_tensor_exponent_like_torch(device):
    x = ot.tensor([0.0, 2.0, 0.0], requires_grad=True, device=device)
    (x ** ot.tensor([0.0, 0.0, 1.0], device=device)).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]     # not NaN at 0 ** 0


def test_full_median_shares_the_gradient_among_ties_like_torch(device):
    x = ot.tensor([1.0, 2.0, 2.0, 3.0], requires_grad=True, device=device)
    x.median().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 0.0]
