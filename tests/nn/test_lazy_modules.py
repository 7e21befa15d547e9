"""torch.nn's lazy modules (omnitensor/nn/lazy.py, one rule for all 13), the norms' ``bias=``
and Hardtanh's deprecated ``min_value``/``max_value``, ``factory_kwargs``, ``Container``
and ``LinearCrossEntropyLoss`` (omnitensor/nn/modules_torch_more.py) against real torch."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.nn as nn
from omnitensor.nn import lazy

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(3)

#: lazy class -> (constructor args, input shape)
LAZY = {
    "LazyLinear": ((4,), (2, 5)),
    "LazyConv1d": ((4, 3), (2, 3, 9)),
    "LazyConv2d": ((4, 3), (2, 3, 7, 7)),
    "LazyConv3d": ((2, 2), (1, 3, 4, 4, 4)),
    "LazyConvTranspose1d": ((4, 3), (2, 3, 6)),
    "LazyConvTranspose2d": ((2, 3), (2, 3, 5, 5)),
    "LazyConvTranspose3d": ((2, 2), (1, 3, 3, 3, 3)),
    "LazyBatchNorm1d": ((), (4, 3)),
    "LazyBatchNorm2d": ((), (2, 3, 4, 4)),
    "LazyBatchNorm3d": ((), (2, 3, 2, 2, 2)),
    "LazyInstanceNorm1d": ((), (2, 3, 5)),
    "LazyInstanceNorm2d": ((), (2, 3, 4, 4)),
    "LazyInstanceNorm3d": ((), (2, 3, 2, 2, 2)),
}


def test_every_lazy_class_is_tested():
    assert set(LAZY) == set(lazy.make_all())


@pytest.mark.parametrize("name", sorted(LAZY))
def test_lazy_signature_is_torchs(name):
    import inspect

    def params(cls):
        return [(p.name, p.kind, p.default) for p in inspect.signature(cls).parameters.values()]
    assert params(getattr(nn, name)) == params(getattr(torch.nn, name))


@pytest.mark.parametrize("name", sorted(LAZY))
def test_lazy_module_becomes_torchs_module(name, device):
    args, shape = LAZY[name]
    x = RNG.standard_normal(shape).astype(np.float32)
    theirs = getattr(torch.nn, name)(*args)
    ours = getattr(nn, name)(*args, device=device)
    assert ours.has_uninitialized_params() and theirs.has_uninitialized_params()
    held = list(ours.parameters())
    assert [type(p).__name__ for p in held] == [type(p).__name__ for p in theirs.parameters()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs(torch.tensor(x))
    ours(ot.tensor(x, device=device))  # materializes
    assert type(ours).__name__ == type(theirs).__name__
    assert not any(isinstance(t, (nn.UninitializedParameter, nn.UninitializedBuffer))
                   for t in list(ours.parameters()) + list(ours.buffers()))
    assert [p is q for p, q in zip(held, ours.parameters())] == [True] * len(held)
    ts, os_ = theirs.state_dict(), ours.state_dict()
    assert list(os_) == list(ts)
    assert [tuple(v.shape) for v in os_.values()] == [tuple(v.shape) for v in ts.values()]
    ours.load_state_dict({k: ot.tensor(v.numpy(), device=device) for k, v in ts.items()})
    theirs.eval(), ours.eval()
    np.testing.assert_allclose(ours(ot.tensor(x, device=device)).detach().cpu().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_lazy_linear_initializes_as_linear_and_trains(device):
    m = nn.LazyLinear(3, bias=False, device=device)
    assert m.bias is None and isinstance(m.weight, nn.UninitializedParameter)
    opt = ot.optim.SGD(m.parameters(), lr=0.1)  # made before the first call, as torch allows
    x = ot.tensor(RNG.standard_normal((4, 6)).astype(np.float32), device=device)
    m(x).sum().backward()
    before = m.weight.detach().clone()
    opt.step()
    assert isinstance(m, nn.Linear) and m.in_features == 6
    assert abs(float(before.abs().max())) <= 1 / np.sqrt(6) + 1e-6  # Linear's init bound
    np.testing.assert_allclose(m.weight.detach().cpu().numpy(),
                               (before - 0.1 * x.sum(0).expand(3, 6)).cpu().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_uninitialized_placeholders_materialize():
    for cls in (nn.UninitializedParameter, nn.UninitializedBuffer):
        p = cls(dtype="float64")
        p.materialize((2, 3))
        assert tuple(p.shape) == (2, 3) and p.dtype.name == "float64"
        assert type(p) is (nn.Parameter if cls is nn.UninitializedParameter else ot.Tensor)
    q = torch.nn.UninitializedParameter(dtype=torch.float64)
    q.materialize((2, 3))
    assert type(q) is torch.nn.Parameter


NORMS = {"BatchNorm1d": (3,), "BatchNorm2d": (3,), "BatchNorm3d": (3,), "GroupNorm": (1, 3),
         "InstanceNorm1d": (3,), "InstanceNorm2d": (3,), "InstanceNorm3d": (3,),
         "SyncBatchNorm": (3,)}
NORM_INPUT = {"1d": (4, 3, 5), "2d": (2, 3, 4, 4), "3d": (2, 3, 2, 2, 2)}


@pytest.mark.parametrize("name", sorted(NORMS))
def test_norm_without_bias_equals_torch(name, device):
    kw = {"affine": True} if name.startswith("Instance") else {}
    theirs = getattr(torch.nn, name)(*NORMS[name], bias=False, **kw)
    ours = getattr(nn, name)(*NORMS[name], bias=False, device=device, **kw)
    assert ours.bias is None and theirs.bias is None
    assert list(ours.state_dict()) == list(theirs.state_dict())
    shape = NORM_INPUT["1d" if name.endswith("1d") else "3d" if name.endswith("3d") else "2d"]
    x = RNG.standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        theirs.weight.mul_(1.5)
    ours.load_state_dict({k: ot.tensor(v.numpy(), device=device)
                          for k, v in theirs.state_dict().items()})
    if name == "SyncBatchNorm":  # torch's runs only in a process group: compare in eval
        theirs.eval(), ours.eval()
    np.testing.assert_allclose(ours(ot.tensor(x, device=device)).detach().cpu().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-4,
                               atol=1e-5)


def test_hardtanh_deprecated_bounds_equal_torch(device):
    x = RNG.standard_normal(10).astype(np.float32) * 3
    with pytest.warns(FutureWarning, match="renamed"):
        ours = nn.Hardtanh(min_value=-0.5, max_value=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.Hardtanh(min_value=-0.5, max_value=2.0)
    assert (ours.min_val, ours.max_val) == (theirs.min_val, theirs.max_val) == (-0.5, 2.0)
    np.testing.assert_allclose(ours(ot.tensor(x, device=device)).cpu().numpy(),
                               theirs(torch.tensor(x)).numpy())
    with pytest.raises(AssertionError, match="must be greater than min_val"):
        nn.Hardtanh(1.0, 0.5)


def test_factory_kwargs_equals_torch():
    for kw in (None, {}, {"device": "cpu"}, {"dtype": 1, "factory_kwargs": {"device": 2}}):
        assert nn.factory_kwargs(kw) == torch.nn.factory_kwargs(kw)
    for bad in ({"other": 1}, {"dtype": 1, "factory_kwargs": {"dtype": 2}}):
        with pytest.raises(TypeError) as theirs:
            torch.nn.factory_kwargs(bad)
        with pytest.raises(TypeError) as ours:
            nn.factory_kwargs(bad)
        assert str(ours.value) == str(theirs.value)


def test_container_holds_its_modules():
    with pytest.warns(FutureWarning, match="deprecated"):
        c = nn.Container(a=nn.Linear(2, 3), b=nn.ReLU())
    assert [n for n, _ in c.named_children()] == ["a", "b"]
    assert len(list(c.parameters())) == 2


@pytest.mark.parametrize("bias", [False, True])
def test_linear_cross_entropy_loss_equals_torch(bias, device):
    x = RNG.standard_normal((6, 5)).astype(np.float32)
    y = RNG.integers(0, 4, 6)
    theirs = torch.nn.LinearCrossEntropyLoss(5, 4, bias=bias, label_smoothing=0.1)
    ours = nn.LinearCrossEntropyLoss(5, 4, bias=bias, label_smoothing=0.1, device=device)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: ot.tensor(v.numpy(), device=device)
                          for k, v in theirs.state_dict().items()})
    lt = theirs(torch.tensor(x), torch.tensor(y))
    lo = ours(ot.tensor(x, device=device), ot.tensor(y, device=device))
    np.testing.assert_allclose(lo.item(), lt.item(), rtol=1e-5)
    lt.backward()
    lo.backward()
    np.testing.assert_allclose(ours.linear.weight.grad.cpu().numpy(),
                               theirs.linear.weight.grad.numpy(), rtol=1e-4, atol=1e-6)
    with pytest.raises(RuntimeError, match="label_smoothing"):
        nn.LinearCrossEntropyLoss(5, 4, label_smoothing=2.0)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("kw", [{"output_size": 3}, {"output_ratio": 0.5}])
def test_fractional_max_pool_module_equals_torch(n, kw, device):
    shape = (2, 3) + (8,) * n
    x = RNG.standard_normal(shape).astype(np.float32)
    samples = RNG.uniform(0, 1, (2, 3, n)).astype(np.float32)
    name = f"FractionalMaxPool{n}d"
    theirs = getattr(torch.nn, name)(2, return_indices=True,
                                     _random_samples=torch.tensor(samples), **kw)
    ours = getattr(nn, name)(2, return_indices=True,
                             _random_samples=ot.tensor(samples, device=device), **kw)
    (vt, it), (vo, io) = theirs(torch.tensor(x)), ours(ot.tensor(x, device=device))
    np.testing.assert_allclose(vo.cpu().numpy(), vt.numpy())
    np.testing.assert_array_equal(io.cpu().numpy(), it.numpy())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    with pytest.raises(ValueError, match="either an output size"):
        getattr(nn, name)(2)
    with pytest.raises(ValueError, match="between 0 and 1"):
        getattr(nn, name)(2, output_ratio=1.5)


@pytest.mark.parametrize("head_bias", [False, True])
def test_adaptive_log_softmax_equals_torch(head_bias, device):
    torch.manual_seed(0)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0,
                                                 head_bias=head_bias)
    ours = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=head_bias,
                                         device=device)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: ot.tensor(v.numpy(), device=device)
                          for k, v in theirs.state_dict().items()})
    x = RNG.standard_normal((7, 8)).astype(np.float32)
    y = np.array([0, 2, 3, 5, 6, 9, 1])
    rt = theirs(torch.tensor(x), torch.tensor(y))
    ro = ours(ot.tensor(x, device=device), ot.tensor(y, device=device))
    _ok = dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ro.output.detach().cpu().numpy(), rt.output.detach().numpy(), **_ok)
    np.testing.assert_allclose(ro.loss.item(), rt.loss.item(), **_ok)
    rt.loss.backward()
    ro.loss.backward()
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.numpy(), err_msg=n, **_ok)
    np.testing.assert_allclose(ours.log_prob(ot.tensor(x, device=device)).detach().cpu()
                               .numpy(), theirs.log_prob(torch.tensor(x)).detach().numpy(),
                               **_ok)
    np.testing.assert_array_equal(ours.predict(ot.tensor(x, device=device)).cpu().numpy(),
                                  theirs.predict(torch.tensor(x)).numpy())
    one = ours(ot.tensor(x[0], device=device), ot.tensor(y[0], device=device))
    assert one.output.ndim == 0
    with pytest.raises(RuntimeError, match="Target values should be in"):
        ours(ot.tensor(x, device=device), ot.tensor(y * 2, device=device))
    with pytest.raises(ValueError, match="cutoffs should be a sequence"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])
