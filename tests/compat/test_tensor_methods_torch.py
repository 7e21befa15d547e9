"""torch's Tensor methods bound in omnitensor/core/methods_torch.py (the in-place forms,
fill_diagonal_, new, apply_/map_/map2_, module_load...)
equal real torch's."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(2)
X = RNG.uniform(0.1, 0.9, (3, 4))
Y = RNG.uniform(0.5, 1.5, (3, 4))

SAME = {  # method name -> args (tensors given as "Y")
    "fix": (),
    "diff": (1, 0), "dist": ("Y", 3), "narrow_copy": (1, 1, 2), "hardshrink": (0.4,),
    "adjoint": (), "cumprod_": (1,), "deg2rad_": (), "rad2deg_": (), "frac_": (),
    "heaviside_": ("Y",), "logit_": (), "sinc_": (), "xlogy_": ("Y",), "fix_": (),
    "unsafe_split_with_sizes": ([1, 2],),
}


def _args(args, mod, device=None):
    out = []
    for a in args:
        if a == "Y":
            out.append(torch.tensor(Y) if mod is torch else ot.tensor(Y, device=device))
        else:
            out.append(a)
    return out


@pytest.mark.parametrize("name", sorted(SAME))
def test_method_equals_torch(name, device):
    t, o = torch.tensor(X), ot.tensor(X, device=device)
    rt = getattr(t, name)(*_args(SAME[name], torch))
    ro = getattr(o, name)(*_args(SAME[name], ot, device))
    if name.endswith("_"):
        assert ro is o and rt is t
    rt, ro = (rt, ro) if isinstance(rt, tuple) else ((rt,), (ro,))
    for a, b in zip(ro, rt):
        np.testing.assert_allclose(a.cpu().numpy(), b.numpy(), rtol=1e-9, atol=1e-12)


def test_inplace_forms_record_gradients(device):
    o = ot.tensor(X, device=device, requires_grad=True)
    t = torch.tensor(X, requires_grad=True)
    (o * 1).logit_().sum().backward()
    (t * 1).logit_().sum().backward()
    np.testing.assert_allclose(o.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-8)


@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((7, 3), False), ((7, 3), True),
                                        ((2, 5), False), ((3, 3, 3), False)])
def test_fill_diagonal_equals_torch(shape, wrap, device):
    o = ot.zeros(shape, device=device)
    t = torch.zeros(shape)
    assert o.fill_diagonal_(5.0, wrap) is o
    t.fill_diagonal_(5.0, wrap)
    np.testing.assert_array_equal(o.cpu().numpy(), t.numpy())


def test_fill_diagonal_refuses_unequal_sizes():
    with pytest.raises(ValueError, match="equal length"):
        ot.zeros((2, 3, 4)).fill_diagonal_(1.0)


def test_prelu_and_adjoint(device):
    x = RNG.standard_normal((2, 3, 4))
    w = np.array([0.1, 0.2, 0.3])
    got = ot.tensor(x, device=device).prelu(ot.tensor(w, device=device))
    np.testing.assert_allclose(got.cpu().numpy(),
                               torch.tensor(x).prelu(torch.tensor(w)).numpy())
    with pytest.raises(ValueError, match="channels"):
        ot.tensor(x).prelu(ot.ones(4, dtype="float64"))
    c = x + 1j * RNG.standard_normal((2, 3, 4))
    np.testing.assert_allclose(ot.tensor(c, device=device).adjoint().cpu().numpy(),
                               torch.tensor(c).adjoint().resolve_conj().numpy())


def test_queries_and_new(device):
    o = ot.tensor(X, device=device)
    t = torch.tensor(X)
    assert o.is_conj() == t.is_conj() and o.is_neg() == t.is_neg()
    assert o.is_distributed() == t.is_distributed()
    assert o.const_data_ptr() == o.data_ptr()
    for args in ((), (2, 3), ([1.5, 2.5],)):
        a, b = o.new(*args), t.new(*args)
        assert tuple(a.shape) == tuple(b.shape) and a.dtype == o.dtype
        assert str(a.device) == str(o.device)
    np.testing.assert_array_equal(o.new([1.5, 2.5]).cpu().numpy(), [1.5, 2.5])
    assert tuple(o.new(o.shape).shape) == tuple(t.new(t.shape).shape)


def test_random_methods(device):
    ot.manual_seed(0)
    p = ot.full((2000,), 0.3, dtype="float64", device=device)
    draws = p.bernoulli()
    assert draws.dtype == p.dtype and set(np.unique(draws.cpu().numpy())) <= {0.0, 1.0}
    assert abs(draws.cpu().numpy().mean() - 0.3) < 0.04
    probs = ot.tensor([0.0, 1.0, 0.0], device=device)
    np.testing.assert_array_equal(probs.multinomial(2, True).cpu().numpy(), [1, 1])
    z = ot.tensor([0, 3, 0, 2], device=device)
    np.testing.assert_array_equal(z.nonzero_static(size=3).cpu().numpy(),
                                  torch.tensor([0, 3, 0, 2]).nonzero_static(size=3).numpy())


def test_apply_map_on_cpu():
    o, t = ot.tensor(X), torch.tensor(X)
    o.apply_(lambda v: v * 2 + 1)
    t.apply_(lambda v: v * 2 + 1)
    np.testing.assert_allclose(o.numpy(), t.numpy())
    o.map_(ot.tensor(Y), lambda a, b: a - b)
    t.map_(torch.tensor(Y), lambda a, b: a - b)
    np.testing.assert_allclose(o.numpy(), t.numpy())
    o.map2_(ot.tensor(Y), ot.tensor(X), lambda a, b, c: a * b + c)
    t.map2_(torch.tensor(Y), torch.tensor(X), lambda a, b, c: a * b + c)
    np.testing.assert_allclose(o.numpy(), t.numpy())


def test_apply_refuses_other_devices():
    others = [d for d in ot.devices() if d.type != "cpu"]
    if not others:
        pytest.skip("no device other than cpu here")
    with pytest.raises(TypeError, match="CPU"):
        ot.tensor(X, device=others[0]).apply_(lambda v: v)


def test_module_load(device):
    p = ot.zeros((3, 4), dtype="float64", device=device, requires_grad=True)
    src = ot.tensor(X, device=device)
    out = p.module_load(src)
    assert out is not p and out is not src and not out.requires_grad
    np.testing.assert_array_equal(p.detach().cpu().numpy(), X)
    out = p.module_load(src * 2, assign=True)
    np.testing.assert_array_equal(out.cpu().numpy(), X * 2)
