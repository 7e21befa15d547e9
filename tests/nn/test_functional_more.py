"""F.grouped_mm (every operand layout), F.conv_tbc, F.l1_loss(weight=) and
F.assert_int_or_pair against torch: values, gradients and error messages, on every
device."""
import numpy as np
import pytest

import omnitensor as ot
import omnitensor.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
RNG = np.random.default_rng(0)


def _t(a, device, grad=False):
    return ot.tensor(a, device=device, requires_grad=grad)


def _close(o, t, tol=1e-5):
    np.testing.assert_allclose(o.detach().cpu().numpy(), t.detach().numpy(),
                               rtol=tol, atol=tol)


CASES = [((8, 16), (2, 16, 8), [3, 8]), ((2, 8, 16), (16, 8), [4, 8]),
         ((8, 16), (16, 8), [4, 16]), ((2, 8, 16), (2, 16, 8), None),
         ((8, 16), (3, 16, 8), [0, 5, 8])]


@pytest.mark.parametrize("sa,sb,offs", CASES)
def test_grouped_mm(device, sa, sb, offs) -> None:
    a = RNG.standard_normal(sa).astype(np.float32)
    b = RNG.standard_normal(sb).astype(np.float32)
    toffs = None if offs is None else torch.tensor(offs, dtype=torch.int32)
    ooffs = None if offs is None else ot.tensor(np.array(offs, np.int32), device=device)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    oa, ob = _t(a, device, True), _t(b, device, True)
    want = TF.grouped_mm(ta, tb, offs=toffs)
    got = F.grouped_mm(oa, ob, offs=ooffs)
    assert got.shape == want.shape
    _close(got, want, 1e-4)
    w = RNG.standard_normal(tuple(want.shape)).astype(np.float32)
    (want * torch.tensor(w)).sum().backward()
    (got * _t(w, device)).sum().backward()
    _close(oa.grad, ta.grad, 1e-4)
    _close(ob.grad, tb.grad, 1e-4)


def test_grouped_mm_errors(device) -> None:
    a, b = ot.ones((8, 16), device=device), ot.ones((2, 16, 8), device=device)
    ta, tb = torch.ones(8, 16), torch.ones(2, 16, 8)
    offs, toffs = ot.tensor(np.array([3, 8], np.int32), device=device), \
        torch.tensor([3, 8], dtype=torch.int32)
    for kw, tkw in [(dict(), dict()), (dict(offs=offs, bias=ot.ones((2, 8))),
                                       dict(offs=toffs, bias=torch.ones(2, 8))),
                    (dict(offs=offs, out_dtype=ot.float64),
                     dict(offs=toffs, out_dtype=torch.float64))]:
        with pytest.raises(RuntimeError) as theirs:
            TF.grouped_mm(ta, tb, **tkw)
        with pytest.raises(RuntimeError, match=str(theirs.value).split("(")[0][:30]):
            F.grouped_mm(a, b, **kw)


@pytest.mark.parametrize("pad", [0, 2])
def test_conv_tbc(device, pad) -> None:
    x = RNG.standard_normal((7, 3, 4)).astype(np.float32)
    w = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    b = RNG.standard_normal(5).astype(np.float32)
    tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (x, w, b))
    ox, ow, ob = (_t(v, device, True) for v in (x, w, b))
    want, got = TF.conv_tbc(tx, tw, tb, pad), F.conv_tbc(ox, ow, ob, pad)
    assert got.shape == want.shape
    _close(got, want, 1e-4)
    want.sum().backward()
    got.sum().backward()
    for o, t in ((ox, tx), (ow, tw), (ob, tb)):
        _close(o.grad, t.grad, 1e-4)
    with pytest.raises(RuntimeError, match="Input dim 2"):
        F.conv_tbc(ox, _t(np.ones((3, 2, 5), np.float32), device), ob)
    with pytest.raises(RuntimeError, match="Input dim 2"):
        TF.conv_tbc(tx, torch.ones(3, 2, 5), tb)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_l1_loss_weight(device, reduction) -> None:
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    y = RNG.standard_normal((4, 3)).astype(np.float32)
    w = RNG.uniform(0.1, 2.0, (4, 3)).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    ox = _t(x, device, True)
    want = TF.l1_loss(tx, torch.tensor(y), reduction=reduction, weight=torch.tensor(w))
    got = F.l1_loss(ox, _t(y, device), reduction=reduction, weight=_t(w, device))
    _close(got, want)
    want.sum().backward()
    got.sum().backward()
    _close(ox.grad, tx.grad)
    for lib, mk in ((TF, torch.ones), (F, lambda *s: ot.ones(s, device=device))):
        with pytest.raises(ValueError, match="Weights and input must have the same size"):
            lib.l1_loss(mk(4, 3), mk(4, 3), weight=mk(3))


def test_assert_int_or_pair() -> None:
    for lib in (TF, F):
        lib.assert_int_or_pair(3, "k", "{} bad")
        lib.assert_int_or_pair((1, 2), "k", "{} bad")
        with pytest.raises(AssertionError, match="kernel_size must be an int or a pair"):
            lib.assert_int_or_pair((1, 2, 3), "kernel_size", "{} must be an int or a pair")


@pytest.mark.parametrize("log_input", [True, False])
def test_poisson_nll_loss_full_with_zero_and_one_counts(device, log_input):
    """full=True adds Stirling's term only where target > 1; zero counts (log 0) gave nan
    for every reduction before the term was masked."""
    x = RNG.uniform(0.1, 3.0, (4, 5)).astype(np.float32)
    y = RNG.integers(0, 4, (4, 5)).astype(np.float32)  # zeros and ones among them
    y[0, :3] = (0, 1, 3)
    xo, xt = _t(x, device, True), torch.tensor(x, requires_grad=True)
    for reduction in ("none", "mean", "sum"):
        o = F.poisson_nll_loss(xo, _t(y, device), log_input=log_input, full=True,
                               reduction=reduction)
        t = TF.poisson_nll_loss(xt, torch.tensor(y), log_input=log_input, full=True,
                                reduction=reduction)
        _close(o, t, 1e-4)
    o.backward()
    t.backward()
    _close(xo.grad, xt.grad, 1e-4)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1),
                                dict(kernel_size=3, stride=2, padding=1,
                                     count_include_pad=False, ceil_mode=True),
                                dict(kernel_size=2, divisor_override=3)])
def test_avg_pool_of_int64_truncates_as_torch(device, kw):
    """torch averages int64 windows by truncating division (-5 / 2 -> -2) and keeps int64;
    other integer dtypes it refuses, as here."""
    a = RNG.integers(-50, 50, (2, 3, 7, 6))
    o = F.avg_pool2d(_t(a, device), **kw)
    t = TF.avg_pool2d(torch.tensor(a), **kw)
    assert o.dtype is ot.int64
    np.testing.assert_array_equal(o.cpu().numpy(), t.numpy())
    with pytest.raises(TypeError, match="floating or int64"):
        F.avg_pool1d(ot.ones(1, 1, 4, dtype=ot.int32, device=device), 2)
