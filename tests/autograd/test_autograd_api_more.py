"""torch.autograd's full signatures and switches, against torch: ``grad``'s
``is_grads_batched`` and deprecated ``only_inputs``, ``backward``'s deprecated
``grad_variables``, ``gradcheck``'s forward-mode, dtype and batched checks,
``set_detect_anomaly(mode, check_nan)`` as call and context manager, and
``set_multithreading_enabled`` (on every device)."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.autograd as oag

torch = pytest.importorskip("torch")


def _pair(device, shape=(3, 2), seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    dt = "float64" if ot.device(device).supports_dtype("float64") else "float32"
    x = ot.tensor(a.astype(dt), device=device, requires_grad=True)
    tx = torch.tensor(a.astype(dt), requires_grad=True)
    return x, tx, (1e-10 if dt == "float64" else 1e-5)


def test_grad_is_grads_batched(device) -> None:
    x, tx, tol = _pair(device)
    y, ty = (x.sin() * x).sum(0), (tx.sin() * tx).sum(0)       # shape (2,)
    vs = np.random.default_rng(1).standard_normal((4, 2))
    v = ot.tensor(vs.astype(str(x.dtype).split(".")[-1]), device=device)
    g, = oag.grad(y, x, v, is_grads_batched=True, retain_graph=True)
    tg, = torch.autograd.grad(ty, tx, torch.tensor(vs, dtype=tx.dtype),
                              is_grads_batched=True, retain_graph=True)
    assert g.shape == (4, 3, 2) and g.device == x.device
    np.testing.assert_allclose(g.cpu().numpy(), tg.numpy(), rtol=tol, atol=tol)
    # create_graph: the batched gradients are differentiable (second order)
    g2, = oag.grad(y, x, v, create_graph=True, is_grads_batched=True)
    tg2, = torch.autograd.grad(ty, tx, torch.tensor(vs, dtype=tx.dtype), create_graph=True,
                               is_grads_batched=True)
    h, = oag.grad(g2.sum(), x)
    th, = torch.autograd.grad(tg2.sum(), tx)
    np.testing.assert_allclose(h.cpu().numpy(), th.numpy(), rtol=tol, atol=tol)
    with pytest.raises(RuntimeError, match="first dimension of each grad_output"):
        oag.grad(x.sum(), x, ot.tensor(1.0, device=device), is_grads_batched=True)


def test_deprecated_arguments(device) -> None:
    for lib, (x, tx, _) in ((oag, _pair(device)), (torch.autograd, _pair(device))):
        t = x if lib is oag else tx
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
            g, = lib.grad((t * 2).sum(), t, only_inputs=False)
        assert float(g.sum()) == pytest.approx(12.0)
        with pytest.warns(FutureWarning, match="`grad_variables` is deprecated"):
            lib.backward((t * 3).sum(), grad_variables=torch.tensor(2.0) if lib is not oag
                         else ot.tensor(2.0, dtype=t.dtype, device=t.device))
        assert float(t.grad.sum()) == pytest.approx(36.0)
        with pytest.raises(RuntimeError, match="both passed to `backward\\(\\)`"):
            lib.backward((t * 3).sum(), t.sum(), grad_variables=t.sum())


def test_gradcheck_new_checks(device) -> None:
    x, tx, _ = _pair(device, (2, 2))
    if x.dtype != ot.float64:
        pytest.skip("gradcheck's finite differences need float64")
    kw = dict(check_forward_ad=True, check_grad_dtypes=True, check_batched_grad=True,
              check_batched_forward_grad=True)
    assert oag.gradcheck(lambda a: (a.exp() * a).sum(1), (x,), **kw)
    assert torch.autograd.gradcheck(lambda a: (a.exp() * a).sum(1), (tx,), **kw)
    assert oag.gradcheck(func=lambda a: a.tanh(), inputs=x, check_backward_ad=False,
                         check_forward_ad=True)

    class WrongForward(oag.Function):  # right backward, wrong forward-mode rule
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return 2 * a * g

        @staticmethod
        def jvp(ctx, t):
            return t

    assert oag.gradcheck(WrongForward.apply, (x,))
    with pytest.raises(oag.GradcheckError, match="forward mode"):
        oag.gradcheck(WrongForward.apply, (x,), check_forward_ad=True)
    assert oag.gradcheck(WrongForward.apply, (x,), check_forward_ad=True,
                         raise_exception=False) is False

    class WrongDtype(oag.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).to(ot.float32)

    # the engine casts a Function's gradient to its input's dtype (torch's rule), so the
    # dtype check passes for both
    assert oag.gradcheck(WrongDtype.apply, (x,), atol=1e-4, check_grad_dtypes=True)

    class TorchWrongDtype(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).float()

    assert torch.autograd.gradcheck(TorchWrongDtype.apply, (tx,), atol=1e-4,
                                    check_grad_dtypes=True)
    with pytest.raises(NotImplementedError, match="masked"):
        oag.gradcheck(lambda a: a, (x,), masked=True)


def test_set_detect_anomaly(device) -> None:
    x = ot.tensor([0.0, 1.0], device=device, requires_grad=True)

    def nan_backward():
        (x.sqrt() * 0).sum().backward()   # 0 * inf in sqrt's backward at 0

    assert not oag.is_anomaly_enabled()
    with oag.set_detect_anomaly(True):
        assert oag.is_anomaly_enabled() and oag.is_anomaly_check_nan_enabled()
        with pytest.raises(RuntimeError, match="returned nan values"):
            nan_backward()
    assert not oag.is_anomaly_enabled()
    with oag.set_detect_anomaly(True, check_nan=False):
        assert oag.is_anomaly_enabled() and not oag.is_anomaly_check_nan_enabled()
        nan_backward()  # traced, not checked
    oag.set_detect_anomaly(True)      # the call form stays on
    try:
        assert oag.is_anomaly_enabled()
    finally:
        oag.set_detect_anomaly(False)
    assert not oag.is_anomaly_enabled()
    # torch's own answers to the same switches
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        assert torch.is_anomaly_enabled() and not torch.is_anomaly_check_nan_enabled()
    assert not torch.is_anomaly_enabled()


def test_set_multithreading_enabled(device) -> None:
    import threading
    x = ot.tensor([1.0, 2.0], device=device, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(threading.current_thread()) or g)
    with oag.set_multithreading_enabled(False):
        assert not oag.is_multithreading_enabled()
        (x * x).sum().backward()
    assert oag.is_multithreading_enabled()
    assert seen == [threading.current_thread()]  # backward ran on the calling thread
    np.testing.assert_allclose(x.grad.cpu().numpy(), [2.0, 4.0])

    @oag.set_multithreading_enabled(False)
    def inside():
        return oag.is_multithreading_enabled()
    assert oag.is_multithreading_enabled() and inside() is False
    assert oag.is_multithreading_enabled()
    assert oag.set_multithreading_enabled(True).clone().mode is True
