"""bfloat16 (issue 18): promotion, finfo, casts, arithmetic, reductions, matmul, autograd
and checkpoints on every device, compared with torch's bfloat16 (which computes in float32
and rounds once to nearest even, as omnitensor does)."""
from __future__ import annotations

import io
import warnings

import ml_dtypes
import numpy as np
import pytest

import omnitensor as ot

torch = pytest.importorskip("torch")

BF = ot.bfloat16
ALL = [ot.bool, ot.int8, ot.int16, ot.int32, ot.int64, ot.uint8, ot.uint16, ot.uint32,
       ot.uint64, ot.float16, ot.bfloat16, ot.float32, ot.float64, ot.complex64,
       ot.complex128]


def _torch_dtype(d):
    return getattr(torch, "bool" if d is ot.bool else d.name)


def _bits(t) -> np.ndarray:
    """The bfloat16 bits of an omnitensor or torch tensor (uint16)."""
    if isinstance(t, torch.Tensor):
        return t.detach().view(torch.int16).numpy().view(np.uint16)
    assert t.dtype is BF
    return t.detach().cpu().numpy().view(np.uint16)


def _ot(t: "torch.Tensor", device) -> ot.Tensor:
    """A torch tensor's values as an omnitensor tensor of the same dtype on ``device``."""
    if t.dtype == torch.bfloat16:
        host = t.view(torch.int16).numpy().view(np.uint16).view(ml_dtypes.bfloat16)
        return ot.tensor(host, device=device)
    return ot.tensor(t.numpy(), device=device)


def _assert_same_bits(got, want):
    g, w = _bits(got), _bits(want)
    # NaN bits differ between implementations (torch's vector path writes 0xffff): any NaN
    nan_g, nan_w = (g & 0x7fff) > 0x7f80, (w & 0x7fff) > 0x7f80
    np.testing.assert_array_equal(nan_g, nan_w)
    np.testing.assert_array_equal(g[~nan_g], w[~nan_w])


def _on_grid(t) -> bool:
    """Whether ``t``'s stored values are bfloat16 values. A backend may hold bfloat16
    widened to float32 (sycl, cuda): every op must round what it stores there."""
    raw = np.asarray(t._device.backend.to_numpy(t.detach()._data)).astype(np.float32)
    back = raw.astype(ml_dtypes.bfloat16).astype(np.float32)
    return bool(np.array_equal(raw, back, equal_nan=True))


def _close(got, want, ulps: int = 2):
    """Equal up to ``ulps`` bfloat16 units in the last place (relative 2**-8 each)."""
    g = got.detach().cpu().float().numpy()
    w = want.detach().float().numpy()
    np.testing.assert_allclose(g, w, rtol=ulps * 2.0 ** -8, atol=ulps * 2.0 ** -8 * 1e-2)


# ----------------------------------------------------------------------- the dtype
@pytest.mark.parametrize("other", ALL, ids=lambda d: d.name)
def test_promotion_with_bfloat16_is_torchs(other):
    want = torch.promote_types(torch.bfloat16, _torch_dtype(other))
    got = ot.promote_types(BF, other)
    assert _torch_dtype(got) == want
    assert ot.promote_types(other, BF) is got
    assert ot.result_type(BF, other) is got


def test_weak_scalars_and_mixed_tensors_follow_torch():
    x = ot.ones(3, dtype=BF)
    tx = torch.ones(3, dtype=torch.bfloat16)
    for s in (2, 2.5, True, 1j):
        assert _torch_dtype((x + s).dtype) == (tx + s).dtype, s
    i = ot.arange(3)
    assert (x + i).dtype is BF and (i * x).dtype is BF
    assert (x + ot.ones(3, dtype=ot.float16)).dtype is ot.float32
    assert (x / 3).dtype is BF and (x > 0).dtype is ot.bool
    assert (ot.arange(3) * 1.5).dtype is ot.float32  # the default dtype, not bfloat16


def test_finfo_equals_torch():
    f, t = ot.finfo(BF), torch.finfo(torch.bfloat16)
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(f, field) == getattr(t, field), field
    assert f.dtype is BF and f.eps == 0.0078125 and f.resolution == 0.01


def test_dtype_facts_and_names():
    assert ot.bfloat16 is ot.as_dtype("bfloat16") is ot.as_dtype(ml_dtypes.bfloat16)
    assert repr(BF) == "omnitensor.bfloat16" and BF.itemsize == 2 and BF.bits == 16
    assert BF.is_floating_point and not BF.is_complex and BF.is_signed
    assert BF.compute is ot.float32 and ot.float32.compute is ot.float32
    assert ot.can_cast(BF, ot.float32) and not ot.can_cast(ot.float16, BF)
    assert not ot.can_cast(BF, ot.float16)
    x = ot.ones(2, dtype=BF)
    assert x.element_size() == 2 and x.is_floating_point()
    assert x.type() == "torch.BFloat16Tensor" and isinstance(x, ot.BFloat16Tensor)


def test_array_api_namespace_lists_no_bfloat16():
    info = ot.__array_namespace_info__()
    assert "bfloat16" not in info.dtypes()
    assert "bfloat16" not in info.dtypes(kind="real floating")


def test_default_dtype_may_be_bfloat16():
    before = ot.get_default_dtype()
    try:
        ot.set_default_dtype(ot.bfloat16)
        torch.set_default_dtype(torch.bfloat16)
        assert ot.tensor([1.5]).dtype is BF and ot.zeros(2).dtype is BF
        assert ot.get_default_dtype() is BF
        assert (ot.arange(3) / 2).dtype is BF
        assert torch.tensor([1.5]).dtype == torch.bfloat16
    finally:
        ot.set_default_dtype(before)
        torch.set_default_dtype(torch.float32)


def test_every_device_supports_bfloat16(device):
    assert ot.device(device).supports_dtype(BF)


# ------------------------------------------------------------------------- casts
def _special_float32() -> np.ndarray:
    one = np.float32(1.0)
    ulp = np.float32(2.0 ** -8)  # bfloat16's spacing just above 1
    vals = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan,
            one + ulp / 2, one + 3 * ulp / 2,          # ties: to even (down, then up)
            one + ulp / 2 + 2.0 ** -20,                 # just above a tie: up
            3.3895313892515355e38, 3.4028235e38,        # bfloat16's max, float32's max
            1e-40, -1e-40, 9.2e-41, 1.17549435e-38,     # subnormals, smallest normal
            65504.0, 1e10, -2.5e-5, 0.1, 1 / 3]
    return np.array(vals, dtype=np.float32)


@pytest.fixture(scope="module")
def float32_values() -> np.ndarray:
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2 ** 32, size=4000, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([_special_float32(), bits.view(np.float32),
                           rng.standard_normal(500).astype(np.float32)])


def test_float32_to_bfloat16_rounds_like_torch(device, float32_values):
    got = ot.tensor(float32_values, device=device).bfloat16()
    want = torch.from_numpy(float32_values.copy()).bfloat16()
    _assert_same_bits(got, want)
    _assert_same_bits(ot.tensor(float32_values, device=device).to(BF), want)


@pytest.mark.parametrize("src", [ot.float64, ot.float16, ot.int32, ot.int64, ot.uint8,
                                 ot.int8, ot.bool, ot.complex64], ids=lambda d: d.name)
def test_casts_to_bfloat16_match_torch(device, src):
    rng = np.random.default_rng(1)
    if src is ot.bool:
        host = rng.integers(0, 2, 64).astype(bool)
    elif src.kind in "iu":
        info = ot.iinfo(src)
        host = rng.integers(info.min, info.max, 256, endpoint=True).astype(src.np)
        host[:3] = [info.min, info.max, 0]
    elif src is ot.complex64:
        host = (rng.standard_normal(64) + 1j * rng.standard_normal(64)).astype(np.complex64)
    else:
        host = (rng.standard_normal(256) * 100).astype(src.np)
        host[:4] = [np.inf, -np.inf, 0.0, -0.0]
    if not ot.device(device).supports_dtype(src):
        pytest.skip(f"{device} has no {src.name}")
    t = torch.from_numpy(host.copy())
    with warnings.catch_warnings():  # torch: complex -> real discards the imaginary part
        warnings.simplefilter("ignore")
        want = t.bfloat16()
    got = ot.tensor(host, device=device).bfloat16()
    _assert_same_bits(got, want)


@pytest.mark.parametrize("dst", [ot.float32, ot.float64, ot.float16, ot.int32, ot.int64,
                                 ot.int16, ot.uint8, ot.bool, ot.complex64],
                         ids=lambda d: d.name)
def test_casts_from_bfloat16_match_torch(device, dst, float32_values):
    if not ot.device(device).supports_dtype(dst):
        pytest.skip(f"{device} has no {dst.name}")
    want_bf = torch.from_numpy(float32_values.copy()).bfloat16()
    if dst.kind in "iu":  # only values the integer holds (out of range is undefined in C)
        keep = torch.isfinite(want_bf) & (want_bf.float().abs() < 120)
        if dst is ot.uint8:
            keep &= want_bf >= 0
        want_bf = want_bf[keep]
    x = _ot(want_bf, device)
    got, want = x.to(dst), want_bf.to(_torch_dtype(dst))
    assert got.dtype is dst
    g = got.cpu().numpy()
    w = want.numpy()
    if dst.kind in "fc":
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        ok = ~np.isnan(w)
        np.testing.assert_array_equal(g[ok], w[ok])
        np.testing.assert_array_equal(np.signbit(g[ok].real), np.signbit(w[ok].real))
    else:
        np.testing.assert_array_equal(g, w)


def test_round_trip_and_moves_keep_the_bits(device, float32_values):
    want = torch.from_numpy(float32_values.copy()).bfloat16()
    x = _ot(want, device)
    assert x.dtype is BF and x.device == ot.device(device)
    _assert_same_bits(x, want)
    _assert_same_bits(x.float().bfloat16(), want)
    for other in ("cpu", "opencl:0", "sycl:0"):
        if other in [str(d) for d in ot.devices()]:
            _assert_same_bits(x.to(other), want)
            _assert_same_bits(x.to(other).to(device), want)


def test_host_views(device):
    x = ot.tensor([1.5, -2.25, 0.1], dtype=BF, device=device)
    arr = x.numpy()
    assert arr.dtype == np.dtype(ml_dtypes.bfloat16)  # torch refuses; NumPy has bfloat16 here
    assert x.tolist() == [1.5, -2.25, 0.10009765625]
    assert x[1].item() == -2.25 and isinstance(x[1].item(), float)
    want = repr(torch.tensor([1.5, -2.25, 0.1], dtype=torch.bfloat16))
    # the values as torch prints them (a device suffix may move dtype= to a line of its own,
    # as torch's would on its devices)
    assert repr(x.cpu()) == want.replace("torch.", "omnitensor.")
    assert f"device='{device}'" in repr(x) or device == "cpu"
    back = ot.tensor(arr, device=device)
    assert back.dtype is BF and _bits(back).tolist() == _bits(x).tolist()
    assert ot.tensor(np.float32(3.3), dtype=BF).item() == 3.296875


def test_creation_in_bfloat16(device):
    for t in (ot.zeros(3, dtype=BF, device=device), ot.ones(2, 2, dtype=BF, device=device),
              ot.full((3,), 1.00390625, dtype=BF, device=device),
              ot.arange(0, 2, 0.25, dtype=BF, device=device),
              ot.linspace(0, 1, 5, dtype=BF, device=device),
              ot.rand(8, dtype=BF, device=device), ot.randn(8, dtype=BF, device=device),
              ot.empty(4, dtype=BF, device=device), ot.eye(3, dtype=BF, device=device)):
        assert t.dtype is BF and t.device == ot.device(device)
    assert ot.full((2,), 1.00390625, dtype=BF, device=device).tolist() == [1.0, 1.0]
    np.testing.assert_array_equal(ot.arange(0, 2, 0.25, dtype=BF, device=device).tolist(),
                                  torch.arange(0, 2, 0.25, dtype=torch.bfloat16).tolist())
    r = ot.rand(1000, dtype=BF, device=device)
    assert 0 <= r.min().item() and r.max().item() < 1


# -------------------------------------------------------------------- arithmetic
@pytest.fixture(scope="module")
def operands():
    g = torch.Generator().manual_seed(0)
    a = (torch.randn(257, generator=g) * 3).bfloat16()
    b = (torch.randn(257, generator=g) * 3).bfloat16()
    a[:4] = torch.tensor([0.0, -0.0, float("inf"), 1.0])
    b[:4] = torch.tensor([-0.0, 2.0, float("inf"), 0.0])
    return a, b


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum", "atan2",
                                "fmod", "remainder", "copysign"])
def test_binary_ops_bitwise_as_torch(device, operands, op):
    a, b = operands
    x, y = _ot(a, device), _ot(b, device)
    got = getattr(ot, op)(x, y)
    assert got.dtype is BF and _on_grid(got)
    want = getattr(torch, op)(a, b)
    # fmod/remainder: torch and omnitensor both compute a - b * trunc(a / b) (an ulp off
    # the exact value at times, in float32 too)
    if op in ("atan2", "fmod", "remainder"):
        _close(got, want, 1)
    else:
        _assert_same_bits(got, want)


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_rounding_division_as_torch(device, operands, mode):
    a, b = operands
    # quotients just below an integer
    a = torch.cat([a, torch.tensor([2.984375, -2.984375, 5.9375], dtype=torch.bfloat16)])
    b = torch.cat([b, torch.tensor([1.0, 1.0, 2.0], dtype=torch.bfloat16) * 1.0078125])
    got = ot.div(_ot(a, device), _ot(b, device), rounding_mode=mode)
    assert got.dtype is BF
    if mode == "trunc":  # torch truncates the rounded bfloat16 quotient, and so do we
        _assert_same_bits(got, torch.div(a, b, rounding_mode=mode))
    else:  # floor: computed in float32 and rounded once (torch's bfloat16 loop rounds its
        # intermediates and is an integer off near integer quotients)
        _assert_same_bits(got, torch.div(a.float(), b.float(), rounding_mode=mode).bfloat16())
        _close(got, torch.div(a, b, rounding_mode=mode), 256)


@pytest.mark.parametrize("op", ["neg", "abs", "sqrt", "floor", "ceil", "round", "trunc",
                                "square", "reciprocal", "sign"])
def test_exact_unary_ops_bitwise_as_torch(device, operands, op):
    a = operands[0]
    x = _ot(a, device)
    fn = getattr(ot, op, None) or getattr(ot.nn.functional, op)
    tfn = getattr(torch, op)
    _assert_same_bits(fn(x), tfn(a))


@pytest.mark.parametrize("op", ["exp", "log", "sin", "cos", "tanh", "sigmoid", "erf",
                                "log1p", "expm1", "rsqrt"])
def test_transcendental_ops_within_an_ulp_of_torch(device, operands, op):
    a = operands[0].abs() if op in ("log", "rsqrt", "log1p") else operands[0]
    got = getattr(ot, op)(_ot(a, device))
    assert got.dtype is BF
    _close(got, getattr(torch, op)(a), 1)


def test_scalars_comparisons_and_inplace(device, operands):
    a, b = operands
    x, y = _ot(a, device), _ot(b, device)
    _assert_same_bits(x * 2.5, a * 2.5)
    _assert_same_bits(x + 1, a + 1)
    _assert_same_bits(1 / x, 1 / a)
    _assert_same_bits(x ** 2, a ** 2)
    for cmp in ("lt", "le", "eq", "ne", "gt", "ge"):
        np.testing.assert_array_equal(getattr(x, cmp)(y).cpu().numpy(),
                                      getattr(a, cmp)(b).numpy())
    _assert_same_bits(ot.where(x > y, x, y), torch.where(a > b, a, b))
    _assert_same_bits(x.clamp(-1, 1), a.clamp(-1, 1))
    x2, a2 = x.clone(), a.clone()
    x2.add_(y)
    a2.add_(b)
    x2.mul_(0.3)
    a2.mul_(0.3)
    x2 -= 1
    a2 -= 1
    _assert_same_bits(x2, a2)
    x3, a3 = x.clone(), a.clone()
    x3.exp_()
    a3.exp_()
    _close(x3, a3, 1)
    # a float32 operand promotes: the result is float32, exactly torch's
    f = torch.randn(257, generator=torch.Generator().manual_seed(3))
    got = x + _ot(f, device)
    assert got.dtype is ot.float32
    np.testing.assert_array_equal(got.cpu().numpy(), (a + f).numpy())


def test_moves_and_indexing_keep_bits(device, operands):
    a = operands[0].reshape(1, 257)[:, :256].reshape(16, 16)
    x = _ot(a, device)
    _assert_same_bits(x.T.contiguous(), a.T.contiguous())
    _assert_same_bits(x[::2, 1:5], a[::2, 1:5])
    _assert_same_bits(ot.cat([x, x], 0), torch.cat([a, a], 0))
    _assert_same_bits(x.flip(1), a.flip(1))
    idx = ot.tensor([3, 0, 7], device=device)
    _assert_same_bits(x[idx], a[torch.tensor([3, 0, 7])])
    _assert_same_bits(x.gather(1, ot.zeros(16, 2, dtype=ot.int64, device=device)),
                      a.gather(1, torch.zeros(16, 2, dtype=torch.int64)))
    _assert_same_bits(ot.nn.functional.pad(x, (1, 1)), torch.nn.functional.pad(a, (1, 1)))
    # accumulation: index_add / index_put(accumulate) add in float32 and round
    i = ot.tensor([0, 2, 0, 5], device=device)
    v = _ot(a[:4], device)
    got = ot.zeros(8, 16, dtype=BF, device=device).index_add(0, i, v)
    want = torch.zeros(8, 16, dtype=torch.bfloat16).index_add(0, torch.tensor([0, 2, 0, 5]),
                                                              a[:4])
    _close(got, want, 1)
    z = ot.zeros(8, dtype=BF, device=device)
    z.index_put_((ot.tensor([1, 1, 3], device=device),),
                 ot.tensor([0.5, 0.25, 3.0], dtype=BF, device=device), accumulate=True)
    assert z.tolist() == [0, 0.75, 0, 3.0, 0, 0, 0, 0]
    # sums that leave bfloat16's grid come back on it (a widened backend adds in float32)
    for acc in (lambda t, i, v: t.index_put_((i,), v, accumulate=True),
                lambda t, i, v: t.__setitem__(slice(0, 2), t[0:2] + v[:2]),
                lambda t, i, v: t.scatter_add_(0, i, v) if hasattr(t, "scatter_add_")
                else t.copy_(t.scatter_add(0, i, v)),
                lambda t, i, v: t.index_add_(0, i, v)):
        t = ot.full((4,), 1.0, dtype=BF, device=device)
        i = ot.tensor([0, 1, 1, 3], device=device)
        v = ot.full((4,), 2.0 ** -9, dtype=BF, device=device)
        acc(t, i, v)  # 1 + 2**-9 and 1 + 2**-8 round to 1 (ulp 2**-7, ties to even)
        assert (t - 1).abs().max().item() == 0, t - 1
        t[1:3] += 2.0 ** -9
        assert (t - 1).abs().max().item() == 0, t - 1


# ------------------------------------------------------------ reductions, matmul
@pytest.fixture(scope="module")
def matrix():
    g = torch.Generator().manual_seed(1)
    return torch.randn(33, 70, generator=g).bfloat16()


@pytest.mark.parametrize("name,kwargs", [
    ("sum", {}), ("sum", {"dim": 1}), ("mean", {}), ("mean", {"dim": 0}),
    ("prod", {"dim": 0}), ("amax", {"dim": 1}), ("amin", {}), ("var", {"dim": 1}),
    ("std", {}), ("logsumexp", {"dim": 1}), ("cumsum", {"dim": 1}), ("norm", {}),
    ("softmax", {"dim": 1}), ("log_softmax", {"dim": 0}),
])
def test_reductions_accumulate_in_float32_like_torch(device, matrix, name, kwargs):
    x = _ot(matrix, device)
    got = getattr(x, name)(**kwargs)
    want = getattr(matrix, name)(**kwargs)
    assert got.dtype is BF and want.dtype == torch.bfloat16 and _on_grid(got)
    _close(got, want, 2)


def test_arg_reductions_and_sorting(device, matrix):
    x = _ot(matrix, device)
    np.testing.assert_array_equal(x.argmax(1).cpu().numpy(), matrix.argmax(1).numpy())
    np.testing.assert_array_equal(x.argmin().item(), matrix.argmin().item())
    v, i = x.sort(dim=1)
    tv, ti = matrix.sort(dim=1, stable=True)
    _assert_same_bits(v, tv)
    np.testing.assert_array_equal(i.cpu().numpy(), ti.numpy())
    m, mi = x.max(dim=0)
    tm, tmi = matrix.max(dim=0)
    _assert_same_bits(m, tm)
    np.testing.assert_array_equal(mi.cpu().numpy(), tmi.numpy())
    k = x.topk(3, dim=1).values
    _assert_same_bits(k, matrix.topk(3, dim=1).values)
    s = x[0].sort().values
    q = _ot(torch.tensor([-1.0, 0.0, 0.5], dtype=torch.bfloat16), device)
    np.testing.assert_array_equal(ot.searchsorted(s, q).cpu().numpy(),
                                  torch.searchsorted(matrix[0].sort().values,
                                                     torch.tensor([-1.0, 0.0, 0.5],
                                                                  dtype=torch.bfloat16)))


def test_matmul_rounds_once(device, matrix):
    g = torch.Generator().manual_seed(2)
    w = torch.randn(70, 20, generator=g).bfloat16()
    x, y = _ot(matrix, device), _ot(w, device)
    got = x @ y
    assert got.dtype is BF
    _close(got, matrix @ w, 2)
    # float32 accumulation, rounded once: equal to the float32 product rounded
    exact = (matrix.float() @ w.float()).bfloat16()
    _close(got, exact, 1)
    b = _ot(torch.randn(4, 5, 6, generator=g).bfloat16(), device)
    assert ot.bmm(b, b.transpose(1, 2)).dtype is BF
    assert ot.einsum("ij,jk->ik", x, y).dtype is BF


# ------------------------------------------------------------------- autograd, nn
def test_linear_forward_backward_in_bfloat16_like_torch(device):
    tl = torch.nn.Linear(24, 10).to(torch.bfloat16)
    ol = ot.nn.Linear(24, 10).to(BF)
    assert ol.weight.dtype is BF and ol.bias.dtype is BF
    with ot.no_grad():
        ol.weight.copy_(_ot(tl.weight.detach(), "cpu"))
        ol.bias.copy_(_ot(tl.bias.detach(), "cpu"))
    ol.to(device)
    xt = torch.randn(16, 24, generator=torch.Generator().manual_seed(4)).bfloat16()
    xt.requires_grad_(True)
    xo = _ot(xt.detach(), device).requires_grad_(True)
    yt, yo = tl(xt), ol(xo)
    assert yo.dtype is BF
    # torch adds the bias before rounding the product; omnitensor rounds both: an ulp or
    # two of the output's scale
    scale = float(yt.detach().abs().max())
    np.testing.assert_allclose(yo.detach().cpu().float().numpy(), yt.detach().float().numpy(),
                               rtol=2 ** -7, atol=2 ** -7 * scale)
    yt.square().sum().backward()
    yo.square().sum().backward()
    for got, want in ((xo.grad, xt.grad), (ol.weight.grad, tl.weight.grad),
                      (ol.bias.grad, tl.bias.grad)):
        assert got.dtype is BF
        # torch's bf16 backward rounds its intermediates in other places: a few ulps
        np.testing.assert_allclose(got.cpu().float().numpy(), want.float().numpy(),
                                   rtol=3e-2, atol=3e-2 * float(want.abs().max()))


def test_models_convert_and_train_in_bfloat16(device):
    ot.manual_seed(0)
    model = ot.nn.Sequential(ot.nn.Conv2d(2, 4, 3, padding=1), ot.nn.ReLU(),
                             ot.nn.Flatten(), ot.nn.Linear(4 * 6 * 6, 3))
    model.bfloat16().to(device)
    assert all(p.dtype is BF for p in model.parameters())
    opt = ot.optim.SGD(model.parameters(), lr=0.05)
    x = ot.randn(8, 2, 6, 6, device=device).to(BF)
    target = ot.tensor([0, 1, 2, 0, 1, 2, 0, 1], device=device)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = ot.nn.functional.cross_entropy(model(x), target)
        assert loss.dtype is BF
        loss.backward()
        assert all(p.grad.dtype is BF and _on_grid(p.grad) for p in model.parameters())
        assert _on_grid(loss)
        opt.step()
        assert all(_on_grid(p) for p in model.parameters())
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    adam = ot.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(2):
        adam.zero_grad()
        ot.nn.functional.cross_entropy(model(x), target).backward()
        adam.step()
    assert all(p.dtype is BF and _on_grid(p) for p in model.parameters())
    assert all(_on_grid(v) for st in adam.state.values() for v in st.values()
               if isinstance(v, ot.Tensor) and v.dtype is BF)
    model.to(ot.float32)
    assert all(p.dtype is ot.float32 for p in model.parameters())


def test_conv2d_in_bfloat16_matches_torch(device):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 3, 8, 8, generator=g).bfloat16()
    w = torch.randn(4, 3, 3, 3, generator=g).bfloat16()
    got = ot.nn.functional.conv2d(_ot(x, device), _ot(w, device), padding=1)
    assert got.dtype is BF
    _close(got, torch.nn.functional.conv2d(x, w, padding=1), 3)


# ---------------------------------------------------------------------- checkpoints
def test_checkpoint_round_trip_is_bit_exact(device, tmp_path, float32_values):
    want = torch.from_numpy(float32_values.copy()).bfloat16()
    sd = {"w": _ot(want, device), "b": ot.ones(3, dtype=BF, device=device)}
    path = tmp_path / "bf16.pt"
    ot.save(sd, path)
    back = ot.load(path)
    assert back["w"].dtype is BF and back["w"].device == ot.device(device)
    _assert_same_bits(back["w"], want)
    np.testing.assert_array_equal(_bits(back["w"]), _bits(sd["w"]))  # NaNs too
    # torch's own reader sees BF16 with the same bits: in torch's zip format (the default)
    mine = torch.load(path, weights_only=True)["w"]
    assert mine.dtype == torch.bfloat16
    np.testing.assert_array_equal(_bits(mine.reshape(-1)), _bits(sd["w"]))
    # ... and in a plain safetensors file, when that format is asked for
    st = pytest.importorskip("safetensors.torch")
    ot.save(sd, path, format="safetensors")
    theirs = st.load(path.read_bytes())
    match = [t for t in theirs.values()
             if t.dtype == torch.bfloat16 and t.numel() == want.numel()]
    assert len(match) == 1
    np.testing.assert_array_equal(_bits(match[0].reshape(-1)), _bits(sd["w"]))


def test_checkpoint_through_a_stream():
    x = ot.tensor([1.0, 2.5, 1e-40], dtype=BF)
    buf = io.BytesIO()
    ot.save({"x": x}, buf)
    buf.seek(0)
    y = ot.load(buf)["x"]
    assert y.dtype is BF and _bits(y).tolist() == _bits(x).tolist()


def test_dlpack_export_is_refused_clearly(device):
    x = ot.ones(2, dtype=BF, device=device)
    with pytest.raises(BufferError, match="bfloat16"):
        x.__dlpack__()
    with pytest.raises(BufferError, match="bfloat16"):
        torch.from_dlpack(x)


def test_default_dtype_change_reaches_rules_already_used():
    """int / int gives the default dtype even when the pair was divided before the change."""
    before = ot.get_default_dtype()
    assert (ot.arange(3) / 2).dtype is before
    assert (ot.arange(3) / ot.arange(1, 4)).dtype is before
    try:
        for d in (ot.float64, BF):
            ot.set_default_dtype(d)
            assert (ot.arange(3) / 2).dtype is d
            assert (ot.arange(3) / ot.arange(1, 4)).dtype is d
            assert ot.arange(3).sqrt().dtype is d
    finally:
        ot.set_default_dtype(before)
    assert (ot.arange(3) / 2).dtype is before
