"""torch functions composed from core ops (``core/ops/torch_extras.py``) on every device:
against torch when it is installed (values, dtypes, input gradients), and against NumPy
with numerical gradient checks either way."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot

try:
    import torch
except ImportError:  # CI installs no torch: the NumPy-referenced tests below still run
    torch = None

rng = np.random.default_rng(7)
A = rng.standard_normal((4, 5)).astype(np.float32)
B = rng.standard_normal((3, 5)).astype(np.float32)
SQ = (rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
V = rng.standard_normal(6).astype(np.float32)
SPECIAL = np.array([0.0, np.nan, np.inf, -np.inf, -2.5, 3.0], np.float32)
IDX = np.array([0, 2, 2], np.int64)
INTS = np.array([1, 3, 3, 0, 5, 1], np.int64)


def _cases():
    """(name, function of a library namespace and its tensors, inputs, differentiable)."""
    c = [
        ("clamp_min", lambda m, a: m.clamp_min(a, 0.1), [A], True),
        ("clamp_max", lambda m, a: a.clamp_max(0.2), [A], True),
        ("index_add", lambda m, a, i, s: a.index_add(1, i, s, alpha=2.0),
         [A, IDX, A[:, :3] * 0 + 1.5], True),
        ("index_copy", lambda m, a, i, s: a.index_copy(1, i, s),
         [A, np.array([0, 3], np.int64), A[:, :2] * 3], True),
        ("index_fill", lambda m, a, i: a.index_fill(0, i, -7.0), [A, IDX], True),
        ("index_put_acc", lambda m, a, i, v: a.index_put((i, i + 1), v, accumulate=True),
         [A, IDX, V[:3]], True),
        ("index_put_rows", lambda m, a, i, v: a.index_put((i,), v[:5], accumulate=True),
         [A, IDX, V], True),
        ("index_put_neg", lambda m, a, i: a.index_put((i - 3,), a[0] * 0 + 2.0, True),
         [A, IDX], True),
        ("index_put_set", lambda m, a, i, v: a.index_put((i[1:], i[1:]), v[:1]),
         [A, IDX, V], False),
        ("nan_to_num", lambda m, a: m.nan_to_num(a, nan=1.0), [SPECIAL], False),
        ("nan_to_num_lim", lambda m, a: a.nan_to_num(posinf=9.0, neginf=-9.0), [SPECIAL],
         False),
        ("exp2", lambda m, a: m.exp2(a), [V], True),
        ("logaddexp2", lambda m, a, b: m.logaddexp2(a, b), [V, V[::-1].copy()], True),
        ("erfc", lambda m, a: m.erfc(a), [V], True),
        ("sgn", lambda m, a: m.sgn(a), [SPECIAL], False),
        ("isposinf", lambda m, a: m.isposinf(a), [SPECIAL], False),
        ("isneginf", lambda m, a: a.isneginf(), [SPECIAL], False),
        ("isreal", lambda m, a: m.isreal(a), [V], False),
        ("ravel", lambda m, a: m.ravel(a.t()), [A], True),
        ("hsplit", lambda m, a: m.hsplit(a, [1, 3])[1], [A], True),
        ("vsplit", lambda m, a: m.vsplit(a, 2)[1], [A], True),
        ("dsplit", lambda m, a: m.dsplit(a.reshape(2, 2, 5), [2])[1], [A], True),
        ("split_with_sizes", lambda m, a: a.split_with_sizes([1, 3], 0)[1], [A], True),
        ("atleast_3d", lambda m, a: m.atleast_3d(a), [A], True),
        ("atleast_2d", lambda m, a: m.atleast_2d(a), [V], True),
        ("column_stack", lambda m, a, b: m.column_stack([a, b, a]), [V, V * 2], True),
        ("row_stack", lambda m, a, b: m.row_stack([a, b]), [A, B], True),
        ("dstack", lambda m, a, b: m.dstack([a, b]), [B, B * 2], True),
        ("diagflat", lambda m, a: m.diagflat(a, 1), [SQ], True),
        ("kron", lambda m, a, b: m.kron(a, b), [SQ[:2], B[:2, :2]], True),
        ("kron_3d", lambda m, a, b: m.kron(a, b), [A.reshape(2, 2, 5), SQ[:2, :2]], True),
        ("rot90", lambda m, a: m.rot90(a, 1, [0, 1]), [A], True),
        ("rot90_k3", lambda m, a: m.rot90(a.reshape(2, 2, 5), -1, [2, 0]), [A], True),
        ("float_power", lambda m, a: m.float_power(a, 2), [A], True),
        ("cov", lambda m, a: m.cov(a), [A], True),
        ("cov_corr0", lambda m, a: m.cov(a, correction=0), [A], True),
        ("corrcoef", lambda m, a: m.corrcoef(a), [A], True),
        ("cdist", lambda m, a, b: m.cdist(a, b), [A, B], True),
        ("cdist_p1", lambda m, a, b: m.cdist(a, b, p=1.0), [A, B], True),
        ("block_diag", lambda m, a, b: m.block_diag(a, b, a[0]), [SQ, B], True),
        ("cartesian_prod", lambda m, a, b: m.cartesian_prod(a, b), [V[:3], V[3:]], True),
        ("trapezoid", lambda m, a: m.trapezoid(a, dx=0.5), [A], True),
        ("trapezoid_x", lambda m, a, x: m.trapezoid(a, x, dim=1), [A, np.cumsum(V[:5] ** 2)],
         True),
        ("bincount", lambda m, i: m.bincount(i, minlength=8), [INTS], False),
        ("bincount_w", lambda m, i, w: m.bincount(i, weights=w), [INTS, V], False),
        ("histc", lambda m, a: m.histc(a, bins=4, min=-1.0, max=1.0), [A], False),
        ("histc_auto", lambda m, a: m.histc(a, bins=5), [A], False),
        ("logcumsumexp", lambda m, a: m.logcumsumexp(a * 30, 1), [A], True),
        ("unfold", lambda m, a: a.unfold(1, 2, 2), [A], True),
        ("unfold_overlap", lambda m, a: a.unfold(0, 3, 1), [V], True),
        ("sum_to_size", lambda m, a: a.sum_to_size(1, 5), [A], True),
        ("softmax", lambda m, a: m.softmax(a, 1), [A], True),
        ("log_softmax", lambda m, a: a.log_softmax(0), [A], True),
        ("det", lambda m, a: m.det(a), [SQ], True),
        ("inverse", lambda m, a: a.inverse(), [SQ], True),
        ("logdet", lambda m, a: m.logdet(a), [SQ], True),
        ("matrix_power", lambda m, a: m.matrix_power(a, 3), [SQ], True),
    ]
    return c


CASES = _cases()


def _to_ot(a, device):
    return ot.tensor(a, device=device)


def _close(got, exp, what):
    g = got.detach().cpu().numpy() if isinstance(got, ot.Tensor) else np.asarray(got)
    e = exp.detach().numpy()
    assert g.shape == e.shape, f"{what}: shape {g.shape} vs torch {e.shape}"
    assert g.dtype == e.dtype or (g.dtype.kind == e.dtype.kind and what.startswith("float")), \
        f"{what}: dtype {g.dtype} vs torch {e.dtype}"
    np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=2e-4,
                               atol=2e-4, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name,fn,inputs,diff", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(device, name, fn, inputs, diff):
    if torch is None:
        pytest.skip("compared with PyTorch, which is not installed (pip install torch)")
    if name == "float_power" and not ot.device(device).supports_dtype(ot.float64):
        pytest.skip(f"{device} has no float64")
    ours = [_to_ot(a, device) for a in inputs]
    theirs = [torch.tensor(a) for a in inputs]
    if diff:
        for t in ours:
            if t.dtype.kind == "f":
                t.requires_grad_(True)
        for t in theirs:
            if t.dtype.is_floating_point:
                t.requires_grad_(True)
    got = fn(ot, *ours)
    exp = fn(torch, *theirs)
    _close(got, exp, name)
    if not diff:
        return
    w = rng.standard_normal(tuple(exp.shape)).astype(np.float64)
    (got * ot.tensor(w, dtype=got.dtype, device=device)).sum().backward()
    (exp * torch.tensor(w, dtype=exp.dtype)).sum().backward()
    for i, (o, t) in enumerate(zip(ours, theirs)):
        if t.grad is not None:
            assert o.grad is not None, f"{name}: no gradient for input {i}"
            _close(o.grad, t.grad, f"{name} grad {i}")


def test_in_place_variants_and_small_methods(device):
    x = ot.tensor(SPECIAL, device=device)
    assert x.nan_to_num_(nan=0.0) is x and not bool(x.isnan().any())
    y = ot.tensor(A, device=device)
    y.clamp_min_(0.0)
    assert float(y.min()) >= 0.0
    z = ot.zeros(3, 4, device=device)
    z.index_add_(0, ot.tensor([0, 0, 2], device=device), ot.ones(3, 4, device=device))
    assert z[:, 0].tolist() == [2.0, 0.0, 1.0]
    assert ot.ones(2, device=device).get_device() == (-1 if device == "cpu" else
                                                      ot.device(device).index)
    assert ot.ones(1, device=device).is_cpu == (device == "cpu")
    assert ot.ones(1, dtype=ot.int8).is_signed() and not ot.ones(1, dtype=ot.uint8).is_signed()
    assert ot.ones(1).is_nonzero() and ot.ones(2, 3).is_same_size(ot.zeros(2, 3))
    with pytest.raises(IndexError, match="1-D integer"):
        ot.ones(3, device=device).index_fill(0, ot.tensor([0.5], device=device), 1.0)
    with pytest.raises(ValueError, match="non-negative"):
        ot.bincount(ot.tensor([1, -1], device=device))


# ------------------------------------------------------------ NumPy references
# The same functions checked without PyTorch (CI installs no torch): values against NumPy
# in float64, gradients numerically (gradcheck, float64 where the device has it).
def _np_cov(a, correction=1):
    return np.cov(a, ddof=correction)


def _np_logcumsumexp(a, axis):
    return np.log(np.cumsum(np.exp(a.astype(np.float64)), axis=axis))


def _np_index_add(a, dim, idx, src, alpha):
    out = a.astype(np.float64).copy()
    np.add.at(out, (slice(None),) * dim + (idx,), alpha * src)
    return out


def _np_unfold(a, dim, size, step):
    n = a.shape[dim]
    wins = [np.take(a, range(s, s + size), axis=dim) for s in range(0, n - size + 1, step)]
    return np.moveaxis(np.stack(wins, axis=dim), dim + 1, -1)


NP_CASES = [
    ("kron", lambda m, a, b: m.kron(a, b), lambda a, b: np.kron(a, b), [SQ[:2], B[:2, :2]]),
    ("rot90", lambda m, a: m.rot90(a, 1, [0, 1]), lambda a: np.rot90(a, 1, (0, 1)), [A]),
    ("rot90_3", lambda m, a: m.rot90(a, 3, [0, 1]), lambda a: np.rot90(a, 3, (0, 1)), [A]),
    ("cov", lambda m, a: m.cov(a), _np_cov, [A]),
    ("corrcoef", lambda m, a: m.corrcoef(a), np.corrcoef, [A]),
    ("cdist", lambda m, a, b: m.cdist(a, b),
     lambda a, b: np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1)), [A, B]),
    ("block_diag", lambda m, a, b: m.block_diag(a, b),
     lambda a, b: np.block([[a, np.zeros((3, 5))], [np.zeros((3, 3)), b]]), [SQ, B]),
    ("trapezoid", lambda m, a: m.trapezoid(a, dx=0.5), lambda a: np.trapezoid(a, dx=0.5), [A]),
    ("logcumsumexp", lambda m, a: m.logcumsumexp(a, 1), lambda a: _np_logcumsumexp(a, 1),
     [A]),
    ("index_add", lambda m, a, s: a.index_add(1, m.tensor(IDX, device=a.device), s,
                                              alpha=2.0),
     lambda a, s: _np_index_add(a, 1, IDX, s, 2.0), [A, A[:, :3] + 1]),
    ("unfold", lambda m, a: a.unfold(1, 2, 2), lambda a: _np_unfold(a, 1, 2, 2), [A]),
    ("nan_to_num", lambda m, a: m.nan_to_num(a, nan=1.0, posinf=9.0, neginf=-9.0),
     lambda a: np.nan_to_num(a, nan=1.0, posinf=9.0, neginf=-9.0), [SPECIAL]),
    ("diagflat", lambda m, a: m.diagflat(a, 1), lambda a: np.diagflat(a, 1), [SQ]),
    ("column_stack", lambda m, a, b: m.column_stack([a, b]), np.column_stack, [V, V * 2]),
    ("dstack", lambda m, a, b: m.dstack([a, b]), lambda a, b: np.dstack([a, b]), [B, B]),
    ("logaddexp2", lambda m, a, b: m.logaddexp2(a, b), np.logaddexp2, [V, V[::-1].copy()]),
    ("exp2", lambda m, a: m.exp2(a), np.exp2, [V]),
]


@pytest.mark.parametrize("name,fn,ref,inputs", NP_CASES, ids=[c[0] for c in NP_CASES])
def test_matches_numpy_and_gradcheck(device, name, fn, ref, inputs):
    import omnitensor as ot_
    got = fn(ot_, *[ot_.tensor(a, device=device) for a in inputs])
    if name == "column_stack":
        exp = ref([inputs[0], inputs[1]])
    else:
        exp = ref(*[np.asarray(a, np.float64) for a in inputs])
    np.testing.assert_allclose(got.cpu().numpy().astype(np.float64), exp, rtol=1e-4,
                               atol=1e-4, equal_nan=True, err_msg=name)
    if name == "nan_to_num" or not ot.device(device).supports_dtype(ot.float64):
        return
    args = [ot.tensor(np.asarray(a, np.float64), device=device, requires_grad=True)
            for a in inputs]
    if name == "column_stack":
        assert ot.autograd.gradcheck(lambda a, b: fn(ot, a, b), args)
    else:
        assert ot.autograd.gradcheck(lambda *xs: fn(ot, *xs), args), name


def test_counting_functions_match_numpy(device):
    ints = ot.tensor(INTS, device=device)
    assert ot.bincount(ints, minlength=8).tolist() == np.bincount(INTS, minlength=8).tolist()
    np.testing.assert_allclose(ot.bincount(ints, weights=ot.tensor(V, device=device)).cpu()
                               .numpy(), np.bincount(INTS, weights=V), rtol=1e-6)
    counts = ot.histc(ot.tensor(A, device=device), bins=4, min=-1.0, max=1.0)
    ref, _ = np.histogram(A[(A >= -1) & (A <= 1)], bins=4, range=(-1.0, 1.0))
    assert counts.tolist() == ref.astype(np.float32).tolist()
    m = ot.tensor(SQ, device=device)
    np.testing.assert_allclose(ot.det(m).item(), np.linalg.det(SQ), rtol=1e-4)
    np.testing.assert_allclose(m.inverse().cpu().numpy(), np.linalg.inv(SQ), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(ot.logdet(m).item(), np.log(np.linalg.det(SQ)), rtol=1e-4)
    np.testing.assert_allclose(ot.softmax(ot.tensor(A, device=device), 1).cpu().numpy(),
                               np.exp(A) / np.exp(A).sum(1, keepdims=True), rtol=1e-5)
