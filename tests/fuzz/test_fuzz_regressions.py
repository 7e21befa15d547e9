"""Findings of the seeded bad-input fuzz (``-m slow``), fixed at their root, kept here as
fast checks against torch."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape,dim,keepdim", [((0, 3), 0, False), ((3, 0), 1, True),
                                                ((0,), 0, False), ((2, 0, 3), (0, 1), False)])
def test_logsumexp_over_an_empty_dim_is_minus_inf(device, shape, dim, keepdim):
    """torch gives -inf (log of an empty sum); the max shift used to refuse the empty
    reduction ("max(): cannot reduce an empty tensor")."""
    want = torch.logsumexp(torch.zeros(shape), dim, keepdim=keepdim)
    got = ot.logsumexp(ot.zeros(shape, device=device), dim, keepdim=keepdim)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("with_bias", [False, True])
def test_linear_with_a_1d_weight_is_a_dot_product(device, with_bias):
    """torch's F.linear takes a (in_features,) weight: one output feature, its dim dropped."""
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((3, 2, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    tw = torch.tensor(w, requires_grad=True)
    want = torch.nn.functional.linear(torch.tensor(x), tw, torch.tensor(2.0) if with_bias else None)
    want.sum().backward()
    ow = ot.tensor(w, device=device, requires_grad=True)
    got = ot.nn.functional.linear(ot.tensor(x, device=device), ow,
                                  ot.tensor(2.0, device=device) if with_bias else None)
    got.sum().backward()
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(ow.grad.cpu().numpy(), tw.grad.numpy(), rtol=1e-5)


VECTOR_WEIGHT_BIAS = [((0,), False, (0,)), ((3,), False, (1,)), ((3,), False, ()),
                      ((6,), True, (1,)), ((6,), True, ()), ((4, 3), False, ()),
                      ((2, 4, 3), False, (4,)), ((2, 4, 3), False, (2, 4)),
                      ((2, 4, 3), False, (1, 4)), ((2, 4, 3), False, (2, 1)),
                      ((2, 4, 3), False, (1, 1)), ((2, 4, 6), True, (4,)),
                      ((2, 4, 6), True, (1, 4)), ((2, 5, 4, 3), False, (1, 5, 1)),
                      ((2, 5, 4, 3), False, (1, 5, 4)), ((3,), False, (2, 4))]


@pytest.mark.parametrize("shape,strided,bias_shape", VECTOR_WEIGHT_BIAS, ids=str)
def test_a_bias_with_a_1d_weight_follows_torchs_paths(device, shape, strided, bias_shape):
    """With a 1-D weight torch adds a bias through addmm (refusing the vector weight) for a
    2-D input, or a contiguous one with a bias of one non-1 dim; otherwise in place into the
    input.shape[:-1] result. omnitensor broadcast the bias onto the result (the fuzz:
    linear of three (0,) tensors)."""
    def call(m, d):
        x = m.zeros(shape, device=d)
        x = x[..., ::2] if strided else x
        return m.nn.functional.linear(x, m.ones(x.shape[-1], device=d),
                                      m.ones(bias_shape, device=d))
    _like_torch(call, device, same_message=False)


def test_unbatched_cross_entropy_without_classes_is_nan(device):
    """An unbatched input of no classes: torch's mean is 0 / 0 (it gave 0)."""
    got = ot.nn.functional.cross_entropy(ot.zeros(0, device=device), ot.zeros(0, device=device))
    want = torch.nn.functional.cross_entropy(torch.zeros(0), torch.zeros(0))
    assert np.isnan(got.item()) and np.isnan(want.item())


# ------------------------------------------------ issue 32: one rule for dim/size arguments
import omnitensor.torch_face as otorch  # noqa: E402 - torch's meanings, as the fuzz calls them

F = ot.nn.functional
TF = torch.nn.functional

# torch refuses a bool where it wants an int dim or size (``True`` is an int to Python)
BOOL_ARGS = [
    ("sum", lambda m, x: x.sum(True)), ("mean", lambda m, x: x.mean(True)),
    ("amax", lambda m, x: x.amax(True)), ("argmax", lambda m, x: x.argmax(True)),
    ("cumsum", lambda m, x: x.cumsum(True)), ("sort", lambda m, x: x.sort(True)),
    ("softmax", lambda m, x: x.softmax(True)), ("logsumexp", lambda m, x: x.logsumexp(True)),
    ("max", lambda m, x: x.max(True)), ("transpose", lambda m, x: x.transpose(-1, True)),
    ("flatten", lambda m, x: x.flatten(True)), ("unsqueeze", lambda m, x: x.unsqueeze(True)),
    ("squeeze", lambda m, x: x.squeeze(True)), ("narrow", lambda m, x: x.narrow(True, 0, 1)),
    ("flip", lambda m, x: x.flip(True)), ("roll_dims", lambda m, x: x.roll(1, True)),
    ("roll_shifts", lambda m, x: x.roll(True, 0)), ("cat", lambda m, x: m.cat([x], True)),
    ("stack", lambda m, x: m.stack([x], True)),
    ("index_select", lambda m, x: x.index_select(True, m.tensor([0], device=x.device))),
    ("gather", lambda m, x: x.gather(True, m.zeros((2, 3), dtype=m.int64, device=x.device))),
    ("reshape", lambda m, x: x.reshape(True)), ("expand", lambda m, x: x.expand(True)),
    ("zeros", lambda m, x: m.zeros(True)), ("empty", lambda m, x: m.empty(True)),
    ("zeros_list", lambda m, x: m.zeros([True])), ("full", lambda m, x: m.full(True, 1.0)),
    ("eye", lambda m, x: m.eye(True)), ("pad", lambda m, x: (TF if m is torch else F).pad(
        x, [True, 1])),
]


@pytest.mark.parametrize("name,call", BOOL_ARGS, ids=[c[0] for c in BOOL_ARGS])
def test_a_bool_dim_or_size_is_refused_like_torch(device, name, call):
    with pytest.raises(TypeError):
        call(torch, torch.zeros(2, 3))
    with pytest.raises(TypeError, match=r"must be (int|tuple of ints).*bool"):
        call(otorch, ot.zeros((2, 3), device=device))


# None: refused where torch refuses it; "every dim" where torch reads it so
NONE_REFUSED = [
    ("flip", lambda m, x: x.flip(None)), ("flip_dims", lambda m, x: x.flip(dims=None)),
    ("squeeze", lambda m, x: x.squeeze(None)), ("squeeze_fn", lambda m, x: m.squeeze(x, None)),
    ("prod", lambda m, x: x.prod(None)), ("prod_fn", lambda m, x: m.prod(x, None)),
    ("max", lambda m, x: x.max(None)), ("max_fn", lambda m, x: m.max(x, None)),
    ("min", lambda m, x: x.min(None)), ("logsumexp", lambda m, x: x.logsumexp(None)),
    ("cumsum", lambda m, x: x.cumsum(None)), ("sort", lambda m, x: x.sort(None)),
    ("eye", lambda m, x: m.eye(2, None)), ("zeros", lambda m, x: m.zeros(None)),
]
NONE_ACCEPTED = [
    ("sum", lambda m, x: x.sum(None)), ("mean", lambda m, x: x.mean(None)),
    ("amax", lambda m, x: x.amax(None)), ("argmax", lambda m, x: x.argmax(None)),
    ("std", lambda m, x: x.std(None)), ("var", lambda m, x: x.var(None)),
    ("roll", lambda m, x: x.roll(1, None)), ("std_unbiased", lambda m, x: x.std(True)),
    ("squeeze_none_given", lambda m, x: x.squeeze()), ("prod_none_given", lambda m, x: x.prod()),
    ("max_none_given", lambda m, x: x.max()), ("flip_int", lambda m, x: x.flip(0)),
]


@pytest.mark.parametrize("name,call", NONE_REFUSED, ids=[c[0] for c in NONE_REFUSED])
def test_a_none_dim_is_refused_where_torch_refuses_it(device, name, call):
    with pytest.raises(TypeError):
        call(torch, torch.zeros(2, 3))
    with pytest.raises(TypeError, match="NoneType"):
        call(otorch, ot.zeros((2, 3), device=device))


@pytest.mark.parametrize("name,call", NONE_ACCEPTED, ids=[c[0] for c in NONE_ACCEPTED])
def test_a_none_dim_works_where_torch_reads_it_as_every_dim(device, name, call):
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 4 + 0.5
    want = call(torch, torch.tensor(x))
    got = call(otorch, ot.tensor(x, device=device))
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6)


SIZE_FORMS = [  # torch's factories: which spellings of a size they take
    ("full_int", lambda m: m.full(3, 1.0)), ("full_list", lambda m: m.full([3], 1.0)),
    ("ones_none", lambda m: m.ones()), ("ones_empty_tuple", lambda m: m.ones(())),
    ("zeros_ints", lambda m: m.zeros(2, 3)), ("empty_int", lambda m: m.empty(3)),
    ("randint_int", lambda m: m.randint(0, 3, 5)),
    ("randint_tuple", lambda m: m.randint(0, 3, (5,))),
    ("normal_int", lambda m: m.normal(0.0, 1.0, 3)),
    ("normal_tuple", lambda m: m.normal(0.0, 1.0, (3,))),
    ("eye_n", lambda m: m.eye(2)), ("eye_nm", lambda m: m.eye(2, 3)),
    ("zeros_tensor", lambda m: m.zeros(m.tensor(2))),
]


@pytest.mark.parametrize("name,call", SIZE_FORMS, ids=[c[0] for c in SIZE_FORMS])
def test_factory_size_forms_are_torchs(name, call):
    try:
        want = call(torch)
    except TypeError:
        with pytest.raises(TypeError, match="size|must be"):
            call(otorch)
        return
    assert tuple(call(otorch).shape) == tuple(want.shape)


def test_the_array_api_namespace_keeps_its_own_forms():
    """``omnitensor`` itself is an Array API namespace: ``full(3, v)`` and
    ``eye(n, None)`` are valid there (the torch face refuses them, as torch)."""
    assert tuple(ot.full(3, 1.0).shape) == (3,)
    assert tuple(ot.eye(2, None).shape) == (2, 2)
    assert tuple(ot.flip(ot.arange(3), None).tolist()) == (2, 1, 0)


@pytest.mark.parametrize("op", ["relu", "floor", "ceil", "trunc"])
def test_real_only_ops_refuse_bool_like_torch(device, op):
    with pytest.raises((RuntimeError, NotImplementedError)):
        getattr(torch.zeros(2, dtype=torch.bool), op)()
    with pytest.raises(TypeError, match=f"{op}: not supported for dtype bool"):
        getattr(ot.zeros(2, dtype=ot.bool, device=device), op)()


@pytest.mark.parametrize("pads", [[-1, -1], [-2, -2], [-4, 1], [-3, -2], [-5, 2], [2, -5],
                                  [-1, -3, -3, -2], [-3, 0, -1, -2], [1, -1, -4, 0]])
def test_negative_pad_crops_as_far_as_torch_lets_it(device, pads):
    """torch narrows by each negative width in turn: cropping more than the size is an
    error even when positive padding would make the result's size non-negative."""
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    try:
        want = TF.pad(torch.tensor(x), pads)
    except RuntimeError:
        with pytest.raises(ValueError, match="crops more than"):
            F.pad(ot.tensor(x, device=device), pads)
        return
    got = F.pad(ot.tensor(x, device=device), pads)
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("shape,shift,dim", [((0,), 0, 3), ((0,), 1, 2), ((0, 3), 1, 5)])
def test_roll_of_an_empty_tensor_takes_any_dim(device, shape, shift, dim):
    want = torch.zeros(shape).roll(shift, dim)
    got = ot.zeros(shape, device=device).roll(shift, dim)
    assert tuple(got.shape) == tuple(want.shape)
    with pytest.raises(IndexError):
        ot.zeros((2, 3), device=device).roll(shift, dim)


@pytest.mark.parametrize("e", [-1.0729162072386908e-186, 1e-50, -2.7659841638437023e-62])
def test_a_tiny_python_exponent_of_an_integer_tensor_is_not_rounded_to_zero(device, e):
    """An integer base: torch keeps the exponent in double, so 0 ** -tiny is inf and a
    negative base NaN, where rounding it to float32 gave x ** -0.0 = 1 everywhere. (torch's
    CPU kernel rounds it once a tensor has 32 elements or more; the math, and torch below
    that, say this.)"""
    x = np.array([[-1, 0, 2], [3, 1, -2]], dtype=np.int64)
    want = (torch.tensor(x) ** e).numpy()
    got = (ot.tensor(x, device=device) ** e).cpu().numpy()
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_a_tiny_python_exponent_of_a_float32_tensor_rounds_to_its_dtype(device):
    """A float32 base: the Array API converts a Python scalar to the array's dtype (as
    torch's vectorised kernel does), so ``x ** 1e-60`` is ``x ** 0 = 1``."""
    x = np.linspace(-3, 3, 64, dtype=np.float32).reshape(4, 4, 4)
    want = (torch.tensor(x) ** 7.85e-68).numpy()
    got = (ot.tensor(x, device=device) ** 7.85e-68).cpu().numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, np.ones_like(x))


@pytest.mark.parametrize("call", [lambda m, i, b: i - b, lambda m, i, b: b - i,
                                  lambda m, i, b: b - b, lambda m, i, b: i - True,
                                  lambda m, i, b: True - i, lambda m, i, b: b - 0.5])
def test_subtracting_a_bool_is_refused_like_torch(device, call):
    with pytest.raises(RuntimeError, match="Subtraction"):
        call(torch, torch.tensor([1, 2]), torch.tensor([True, False]))
    with pytest.raises(TypeError, match="subtract: not supported for dtype .*bool"):
        call(ot, ot.tensor([1, 2], device=device), ot.tensor([True, False], device=device))


def test_linspace_ends_must_be_numbers_even_for_no_steps(device):
    for bad in ("a", None):
        with pytest.raises(TypeError):
            torch.linspace(bad, 1.0, 0)
        with pytest.raises(TypeError, match="must be Number"):
            ot.linspace(bad, 1.0, 0, device=device)
    np.testing.assert_array_equal(ot.linspace(-1, True, 3, device=device).cpu().numpy(),
                                  torch.linspace(-1, True, 3).numpy())


@pytest.mark.parametrize("bias_shape", [(3, 4), (2, 3, 3), (3,), (1, 3), (3, 3), ()])
def test_linear_refuses_a_bias_that_does_not_broadcast_to_its_output(device, bias_shape):
    """The bias is added in place on the trusted path, which checks no shapes: opencl
    accepted a (3, 4) bias for a (3, 3) output."""
    x, w = np.ones((3, 4), np.float32), np.ones((3, 4), np.float32)
    b = np.arange(int(np.prod(bias_shape)), dtype=np.float32).reshape(bias_shape)
    try:
        want = TF.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b))
    except RuntimeError:
        with pytest.raises(ValueError, match="does not broadcast to the output shape"):
            F.linear(ot.tensor(x, device=device), ot.tensor(w, device=device),
                     ot.tensor(b, device=device))
        return
    got = F.linear(ot.tensor(x, device=device), ot.tensor(w, device=device),
                   ot.tensor(b, device=device))
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy())


EMPTY_FORMS = [  # torch's rules at size 0: what it accepts there and what it still checks
    ("split_0_of_empty", lambda m, d: m.zeros((2, 0, 2), device=d).split(0, 1)),
    ("split_of_empty", lambda m, d: m.zeros((1, 0, 4), device=d).split(5, -2)),
    ("split_0_of_nonempty", lambda m, d: m.zeros((2, 3), device=d).split(0, 0)),
    ("repeat_negative_of_empty", lambda m, d: m.zeros(0, device=d).repeat(-1)),
    ("repeat_negative", lambda m, d: m.zeros(2, device=d).repeat(-1)),
    ("one_hot_empty_infer", lambda m, d: m.nn.functional.one_hot(
        m.zeros(0, dtype=m.int64, device=d), -1)),
    ("one_hot_empty_0", lambda m, d: m.nn.functional.one_hot(
        m.zeros(0, dtype=m.int64, device=d), 0)),
    ("one_hot_empty_3", lambda m, d: m.nn.functional.one_hot(
        m.zeros((2, 0), dtype=m.int64, device=d), 3)),
    ("gather_empty_index_bad_dim", lambda m, d: m.zeros(4, device=d).gather(
        4, m.zeros((1, 1, 0), dtype=m.int64, device=d))),
    ("cat_none", lambda m, d: m.cat([m.zeros((2, 3), device=d)], None)),
    ("prod_tuple", lambda m, d: m.prod(m.ones((2, 3), device=d), (0, 1))),
    ("arange_none_end", lambda m, d: m.arange(1, None, 2, device=d)),
]


@pytest.mark.parametrize("name,call", EMPTY_FORMS, ids=[c[0] for c in EMPTY_FORMS])
def test_edge_forms_match_torch(device, name, call):
    try:
        want = call(torch, "cpu")
    except (RuntimeError, TypeError, IndexError) as e:
        with pytest.raises(type(e) if isinstance(e, (TypeError, IndexError)) else ValueError):
            call(otorch, device)
        return
    got = call(otorch, device)
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    assert [tuple(t.shape) for t in got] == [tuple(t.shape) for t in want]


@pytest.mark.parametrize("op", ["scatter", "scatter_add"])
@pytest.mark.parametrize("x_shape,index_shape,src_shape,dim", [
    ((1, 2, 0), (1, 2, 0), (), 0), ((3,), (0, 4), (2, 2), 0), ((3, 0, 0), (0,), (0,), 0),
    ((), (2, 2, 0), (), 0), ((1, 2, 0), (1, 2, 0), (), 5)])
def test_scatter_of_an_empty_index_writes_nothing_and_checks_only_the_dim(
        device, op, x_shape, index_shape, src_shape, dim):
    """torch returns the input for an empty index whatever the ranks and sizes of index
    and src (the dim is still checked); omnitensor checked their shapes (or indexed a 0-d
    src with three slices)."""
    x = np.arange(int(np.prod(x_shape)), dtype=np.float32).reshape(x_shape)
    args = (np.zeros(index_shape, np.int64), np.ones(src_shape, np.float32))
    try:
        want = getattr(torch.tensor(x), op)(dim, *(torch.tensor(a) for a in args))
    except IndexError:
        with pytest.raises(IndexError, match="Dimension out of range"):
            getattr(ot.tensor(x, device=device), op)(
                dim, *(ot.tensor(a, device=device) for a in args))
        return
    got = getattr(ot.tensor(x, device=device), op)(dim, *(ot.tensor(a, device=device)
                                                         for a in args))
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


# ------------------------------------------- issue 32: index bounds, loss targets, empties
def _outcome(call, m, device):
    """(exception, None) or (None, result) of ``call(m, device)``."""
    try:
        return None, call(m, device)
    except Exception as e:  # compared with torch's below
        return e, None


def _like_torch(call, device, same_message=True):
    """``call`` behaves as under torch: the same error (builtin type, and message when
    ``same_message``), or the same shapes and values."""
    want_err, want = _outcome(call, torch, "cpu")
    got_err, got = _outcome(call, ot, device)
    if want_err is not None:
        assert got_err is not None, f"accepted where torch raises {want_err!r}"
        for base in (IndexError, ValueError, TypeError):
            if isinstance(want_err, base):
                assert isinstance(got_err, base), (got_err, want_err)
        if same_message:
            assert str(want_err) in str(got_err)
        return
    assert got_err is None, f"rejected where torch works: {got_err!r}"
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-6)


def _t(m, device, a, dtype=None):
    return m.tensor(np.asarray(a, dtype=dtype or np.float32), device=device)


_X23 = np.arange(6, dtype=np.float32).reshape(2, 3)
NEGATIVE_INDEX = [
    ("gather", lambda m, d: _t(m, d, _X23).gather(1, _t(m, d, [[-1]], np.int64)), True),
    ("gather_0d", lambda m, d: _t(m, d, 1.0).gather(0, _t(m, d, -1, np.int64)), True),
    ("gather_in_range", lambda m, d: _t(m, d, _X23).gather(1, _t(m, d, [[2], [0]], np.int64)),
     True),
    ("scatter", lambda m, d: _t(m, d, _X23).scatter(1, _t(m, d, [[-1]], np.int64),
                                                     _t(m, d, [[9.0]])), True),
    ("scatter_0d", lambda m, d: _t(m, d, 1.0).scatter(0, _t(m, d, -1, np.int64),
                                                      _t(m, d, 9.0)), True),
    ("scatter_add", lambda m, d: _t(m, d, _X23).scatter_add(0, _t(m, d, [[-2, 0]], np.int64),
                                                             _t(m, d, [[9.0, 1.0]])), True),
    ("index_select", lambda m, d: _t(m, d, [1.0, 2.0]).index_select(
        0, _t(m, d, -1, np.int64)), True),
    ("index_select_dim1", lambda m, d: _t(m, d, _X23).index_select(
        1, _t(m, d, [0, -1], np.int64)), False),  # torch's message is another kernel's
    ("index_select_0d", lambda m, d: _t(m, d, 1.0).index_select(
        -1, _t(m, d, -1, np.int64)), True),
    ("index_select_in_range", lambda m, d: _t(m, d, _X23).index_select(
        1, _t(m, d, [2, 0, 2], np.int64)), True),
    ("take_along_dim_wraps", lambda m, d: m.take_along_dim(
        _t(m, d, _X23), _t(m, d, [[-1], [-3]], np.int64), 1), True),
]


@pytest.mark.parametrize("name,call,same_message", NEGATIVE_INDEX,
                         ids=[c[0] for c in NEGATIVE_INDEX])
def test_gather_scatter_and_index_select_refuse_a_negative_index(device, name, call,
                                                                 same_message):
    """torch refuses a negative index there ("index -1 is out of bounds for dimension 1
    with size 3"); omnitensor wrapped it like getitem does. take_along_dim still wraps."""
    _like_torch(call, device, same_message)


GATHER_FORMS = [
    ("empty_index_larger_off_dim", lambda m, d: m.zeros(4, 3, 0, device=d).gather(
        -1, m.zeros(4, 4, 0, dtype=m.int64, device=d))),
    ("empty_index_larger_everywhere", lambda m, d: m.zeros(2, 4, 0, device=d).gather(
        0, m.zeros(2, 0, 2, dtype=m.int64, device=d))),
    ("0d_index_of_1d_input", lambda m, d: _t(m, d, [1.0, 2.0, 3.0]).gather(
        0, _t(m, d, 2, np.int64))),
    ("scatter_0d_index_of_1d_input", lambda m, d: m.zeros(3, device=d).scatter(
        0, _t(m, d, 1, np.int64), _t(m, d, 5.0))),
    ("scatter_add_0d_index_2d_src", lambda m, d: m.zeros((), device=d).scatter_add(
        0, _t(m, d, 0, np.int64), m.ones(4, 1, device=d))),
]


@pytest.mark.parametrize("name,call", GATHER_FORMS, ids=[c[0] for c in GATHER_FORMS])
def test_gather_and_scatter_index_shapes_are_torchs(device, name, call):
    """torch skips the size checks for an empty index and reads a 0-d index as 1-D (its
    ensure_nonempty_dim), refusing an src of another rank than the index."""
    _like_torch(call, device)


TARGET_SHAPES = [((4,), ()), ((4,), (1,)), ((4,), (4,)), ((4,), (1, 1)), ((2, 3), (2,)),
                 ((2, 3), (2, 1)), ((2, 3), ()), ((2, 3), (2, 3)), ((2, 3, 5), (2, 5)),
                 ((2, 3, 5), (2, 4)), ((2, 3, 5), (2,)), ((2, 3, 5, 6), (2, 5, 6)),
                 ((2, 3, 5, 6), (2, 5, 7)), ((2, 3, 5, 6), (2, 30)), ((2, 1, 0), (1, 0, 2)),
                 ((2, 1, 0), (2, 0, 2)), ((), ()), ((2, 3, 4, 5, 6), (2, 4, 5, 7)),
                 ((0, 3), (0,)), ((0, 3), (0, 1)), ((4, 0), (4, 0)), ((4, 4), (4, 0)),
                 ((1, 1, 1), ())]


@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("shapes", TARGET_SHAPES, ids=str)
def test_class_index_targets_are_checked_against_the_input_like_torch(device, loss, shapes):
    """torch checks the target's shape against the input's (batch size, spatial dims, a
    long target of input's shape read as probabilities) with its messages; omnitensor
    flattened both and accepted empty or mismatched ones."""
    x_shape, t_shape = shapes
    _like_torch(lambda m, d: getattr(m.nn.functional, loss)(
        m.zeros(x_shape, device=d), m.zeros(t_shape, dtype=m.int64, device=d)), device)


@pytest.mark.parametrize("target", [-1, 4, [1, -1]])
def test_nll_loss_names_an_out_of_bounds_target_like_torch(device, target):
    """torch: "Target -1 is out of bounds." (a negative target went through a wrapping
    gather)."""
    x = np.log(np.full((2, 4) if isinstance(target, list) else (4,), 0.25, np.float32))
    _like_torch(lambda m, d: m.nn.functional.nll_loss(_t(m, d, x), _t(m, d, target, np.int64)),
                device)


EMPTY_GETITEM = [((1, 0), [3]), ((4, 0, 0), [[[4, 0, 1, 2]]]), ((3, 0), [5]), ((0, 3), [5]),
                 ((0,), [1]), ((2, 3, 0), (slice(None), [7])), ((2, 0), ([5], [0])),
                 ((2, 3), [7]), ((3, 0), 5)]


@pytest.mark.parametrize("shape,key", EMPTY_GETITEM, ids=str)
def test_an_index_into_an_empty_result_is_not_bounds_checked(device, shape, key):
    """torch checks index tensors as it reads: an empty tensor indexed into an empty
    result reads nothing, so any index works there (omnitensor refused it)."""
    def call(m, d):
        k = tuple(_t(m, d, v, np.int64) if isinstance(v, list) else v for v in key) \
            if isinstance(key, tuple) else (_t(m, d, key, np.int64) if isinstance(key, list)
                                            else key)
        return m.zeros(shape, device=d)[k]
    _like_torch(call, device, same_message=False)


CAT_LEGACY = [([(0,)], 3), ([(0,), (0,)], -3), ([(0,), (2, 3)], 5), ([(0,), (3,)], 3),
              ([(0,), (2, 3)], 1), ([(0,)], True)]


@pytest.mark.parametrize("shapes,dim", CAT_LEGACY, ids=str)
def test_cat_of_only_legacy_empty_tensors_takes_any_dim(device, shapes, dim):
    """torch's legacy rule skips every (0,) input, so with nothing left it never checks
    the dim's range (its type it does)."""
    _like_torch(lambda m, d: m.cat([m.zeros(s, device=d) for s in shapes], dim), device,
                same_message=False)


# --------------------------------------- issue 32: integer division by zero (one rule, core)
ZERO_DIVISION = [
    ("floor_divide", lambda m, a, z: m.floor_divide(a, z)),
    ("floordiv_op", lambda m, a, z: a // z), ("rfloordiv", lambda m, a, z: 5 // z),
    ("floordiv_scalar", lambda m, a, z: a // 0), ("remainder", lambda m, a, z: m.remainder(a, z)),
    ("mod_op", lambda m, a, z: a % z), ("rmod", lambda m, a, z: 5 % z),
    ("mod_scalar", lambda m, a, z: a % 0), ("remainder_scalar_first", lambda m, a, z:
                                            m.remainder(5, z)),
    ("fmod", lambda m, a, z: m.fmod(a, z)), ("fmod_scalar", lambda m, a, z: a.fmod(0)),
    ("div_floor", lambda m, a, z: m.div(a, z, rounding_mode="floor")),
    ("div_trunc", lambda m, a, z: m.div(a, z, rounding_mode="trunc")),
    ("div_trunc_scalar", lambda m, a, z: a.div(0, rounding_mode="trunc")),
    ("div_trunc_scalar_first", lambda m, a, z: m.div(5, z, rounding_mode="trunc")),
    ("zero_dim_divisor", lambda m, a, z: a // m.tensor(0, device=a.device)),
    ("floor_divide_", lambda m, a, z: a.clone().floor_divide_(z)),
    ("ifloordiv_scalar", lambda m, a, z: a.clone().__ifloordiv__(0)),
    ("remainder_", lambda m, a, z: a.clone().remainder_(z)),
    ("imod", lambda m, a, z: a.clone().__imod__(z)),
    ("fmod_", lambda m, a, z: a.clone().fmod_(z)),
    ("div_floor_", lambda m, a, z: a.clone().div_(z, rounding_mode="floor")),
    ("div_trunc_", lambda m, a, z: a.clone().div_(0, rounding_mode="trunc")),
    ("uint8", lambda m, a, z: a.abs().to(m.uint8) // z.to(m.uint8)),
    ("int8_mod", lambda m, a, z: a.to(m.int8) % z.to(m.int8)),
    ("int32_fmod", lambda m, a, z: m.fmod(a.to(m.int32), z.to(m.int32))),
    ("int16_trunc", lambda m, a, z: m.div(a.to(m.int16), z.to(m.int16), rounding_mode="trunc")),
    ("bool_divisor", lambda m, a, z: a // (z != 0)),
    ("bool_by_zero", lambda m, a, z: (a > 0) // 0),
    ("mixed_int_dtypes", lambda m, a, z: a.to(m.int32) // z),
]


@pytest.mark.parametrize("name,call", ZERO_DIVISION, ids=[c[0] for c in ZERO_DIVISION])
def test_integer_division_by_zero_raises_like_torch(device, name, call):
    """torch raises RuntimeError("ZeroDivisionError") for an integer zero divisor, tensor or
    scalar, in every division form; omnitensor gave 0 (NumPy's value) or garbage."""
    def args(m, d):
        return m.tensor([5, -7, 3], device=d), m.tensor([1, 0, 2], device=d)
    with pytest.raises(RuntimeError) as want:
        call(torch, *args(torch, "cpu"))
    with pytest.raises(RuntimeError) as got:
        call(otorch, *args(otorch, device))
    assert str(got.value) == str(want.value)


NONZERO_DIVISION = [
    ("floor_divide", lambda m, a, b: m.floor_divide(a, b)),
    ("remainder", lambda m, a, b: m.remainder(a, b)), ("fmod", lambda m, a, b: m.fmod(a, b)),
    ("div_trunc", lambda m, a, b: m.div(a, b, rounding_mode="trunc")),
    ("div_trunc_scalar", lambda m, a, b: m.div(a, 3, rounding_mode="trunc")),
    ("div_trunc_scalar_first", lambda m, a, b: m.div(-(2 ** 40) - 1, b, rounding_mode="trunc")),
    ("div_trunc_", lambda m, a, b: a.clone().div_(b, rounding_mode="trunc")),
    ("div_trunc_int32", lambda m, a, b: m.div(a.to(m.int32), b.to(m.int32),
                                              rounding_mode="trunc")),
    ("div_trunc_uint8", lambda m, a, b: m.div(a.to(m.uint8), b.abs().to(m.uint8),
                                              rounding_mode="trunc")),
    ("float_divisor_zero", lambda m, a, b: a // (b * 0.0)),
    ("float_mod_zero", lambda m, a, b: a % 0.0),
    ("empty_by_zero", lambda m, a, b: a[:0] // 0),
    ("empty_by_zero_tensor", lambda m, a, b: a[:0] % (b * 0)[:0]),
]


@pytest.mark.parametrize("name,call", NONZERO_DIVISION, ids=[c[0] for c in NONZERO_DIVISION])
def test_integer_division_values_are_torchs(device, name, call):
    """Where torch divides, the values are its own: truncating division of integers is
    exact (it went through a float32 quotient: 2**62+1 // 3 lost its low bits), a float
    zero divisor gives inf/NaN and an empty result raises nothing."""
    vals = [2 ** 62 + 1, -(2 ** 62) - 3, 7, -7, -8, 8, 0, 2 ** 31 - 5]
    divs = [3, 7, -2, 2, -3, 3, 5, -9]

    def args(m, d):
        return m.tensor(vals, device=d), m.tensor(divs, device=d)
    want = call(torch, *args(torch, "cpu"))
    got = call(otorch, *args(otorch, device))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


def test_a_compiled_integer_division_checks_its_divisor_on_every_call(device):
    """The divisor check is a check node of the captured graph, not baked into it: a
    compiled (or traced) function raises torch's error once a later call divides by 0."""
    a = ot.tensor([5, -7, 3], device=device)
    f = ot.compile(lambda x, y: x // y + x % y)
    ok = f(a, ot.tensor([1, 2, 3], device=device))
    np.testing.assert_array_equal(ok.cpu().numpy(), [5, -3, 1])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        f(a, ot.tensor([1, 0, 3], device=device))
    traced = ot.jit.trace(lambda x, y: x.remainder_(y), (a.clone(), ot.tensor([2, 2, 2],
                                                                               device=device)))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        traced(a.clone(), ot.tensor([2, 0, 2], device=device))


# ----------------------------- issue 32: Python bools in keys, ints beside index tensors
_S = slice(None)
BOOL_KEYS = [(True, True), (True, False), (False, True), (True, True, True), (True, 0),
             (True, True, 1), (True, _S, True), (None, True, True), (True, [0]),
             (True, True, [0, 1]), (Ellipsis, True, True), (True, Ellipsis, True), (False,),
             (1, True, True), (_S, True, 0), (0, _S, True), (0, _S, False), (_S, [0, 1], _S, True),
             (True, _S, [0, 1]), ([0, 1], True), (_S, True, [0, 1, 1]), (_S, False, [0, 1, 1]),
             (False, [[0], [1]]), (Ellipsis, False), (True, 0, True), ([True, False], True),
             (0, _S, [0, 1]), (_S, 0, _S, [0, 1]), (0, _S, [[0], [1]]), ([], [[0], [1]])]


def _key(m, d, key):
    return tuple(m.tensor(v, dtype=m.int64 if v == [] else None, device=d)
                 if isinstance(v, list) else v for v in key)


@pytest.mark.parametrize("shape", [(0, 0), (2, 3), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("key", BOOL_KEYS, ids=str)
def test_bools_and_ints_in_keys_index_like_torch(device, shape, key):
    """torch reads a Python bool as a new axis indexed by [0] or [] (an advanced index that
    broadcasts with the others: x[True, True] adds one axis) and an int beside an index
    tensor as basic indexing (x[0, :, idx]: idx's axis after the slice's). omnitensor gave
    each bool its own axis, and NumPy's placement on cpu; an index broadcast to nothing
    reads nothing, so its bounds are not checked (opencl/sycl refused it)."""
    def get(m, d):
        return m.arange(int(np.prod(shape)), dtype=m.float32, device=d).reshape(shape)[
            _key(m, d, key)]

    def put(m, d):
        x = m.arange(int(np.prod(shape)), dtype=m.float32, device=d).reshape(shape)
        x[_key(m, d, key)] = -1.0
        return x
    _like_torch(get, device, same_message=False)
    _like_torch(put, device, same_message=False)


# ------------------------------ issue 32: seeds 30 and 40 (layer_norm, arange, roll, index_select)
SEED_30_40 = [
    ("layer_norm_int", lambda m, d: m.nn.functional.layer_norm(m.zeros(0, device=d), 0)),
    ("layer_norm_int3", lambda m, d: m.nn.functional.layer_norm(m.zeros(2, 3, device=d), 3)),
    ("layer_norm_list", lambda m, d: m.nn.functional.layer_norm(m.ones(2, 3, device=d), [3])),
    ("layer_norm_module_int", lambda m, d: m.nn.LayerNorm(3).to(d)(m.ones(2, 3, device=d))),
    ("arange_tiny_step", lambda m, d: m.arange(2.2250738585072014e-308, 0,
                                               2.2250738585072014e-308, device=d)),
    ("arange_tiny_negative", lambda m, d: m.arange(0, 1e-310, -1e-310, device=d)),
    ("arange_tiny_ok", lambda m, d: m.arange(0, 1e-300, 1e-300, device=d)),
    ("roll_one_shift_two_dims", lambda m, d: m.zeros((4, 3, 0), dtype=m.bool, device=d).roll(
        0, [1, 2])),
    ("roll_one_shift_two_dims_full", lambda m, d: m.arange(12, device=d).reshape(4, 3).roll(
        1, [0, 1])),
    ("roll_two_shifts_no_dims", lambda m, d: m.arange(12, device=d).reshape(4, 3).roll([1, 2])),
    ("roll_fn_two_shifts_no_dims", lambda m, d: m.roll(m.arange(12, device=d), [1, 2])),
    ("roll_one_shift_seq", lambda m, d: m.arange(12, device=d).reshape(4, 3).roll([2])),
    ("roll_aligned", lambda m, d: m.arange(12, device=d).reshape(4, 3).roll([1, 2], [0, 1])),
    ("roll_empty_any_dim", lambda m, d: m.zeros((4, 0), device=d).roll(1, 7)),
    ("index_select_scalar_empty", lambda m, d: m.tensor(1.0, device=d).index_select(
        -1, m.tensor([], dtype=m.int64, device=d))),
    ("index_select_scalar_two", lambda m, d: m.tensor(1.0, device=d).index_select(
        0, m.tensor([0, 0], device=d))),
    ("index_select_scalar_one", lambda m, d: m.tensor(1.0, device=d).index_select(
        0, m.tensor([0], device=d))),
]


@pytest.mark.parametrize("name,call", SEED_30_40, ids=[c[0] for c in SEED_30_40])
def test_seed_30_and_40_findings_match_torch(device, name, call):
    """F.layer_norm takes a sequence only (nn.LayerNorm an int too); arange's step-sign check
    is by sign ((end - start) * step underflowed to -0); roll wants as many shifts as dims
    (or one shift, no dims); a 0-d tensor's index_select takes exactly one index."""
    _like_torch(lambda m, d: call(otorch if m is ot else m, d), device, same_message=False)


# ------------------- issue 32: seeds 50-70 (softmax dim, slice steps, __index__, scatter)
SEED_50_70 = [
    ("tensor_softmax_none", lambda m, d: m.zeros((3, 0, 1), device=d).softmax(None)),
    ("tensor_log_softmax_none", lambda m, d: m.zeros(3, device=d).log_softmax(None)),
    ("torch_softmax_none", lambda m, d: m.softmax(m.zeros(3, device=d), None)),
    ("functional_softmax_none", lambda m, d: m.nn.functional.softmax(m.zeros(2, 3, device=d),
                                                                     None)),
    ("tensor_softmax_int", lambda m, d: m.ones(2, 3, device=d).softmax(-1)),
    ("positive_step", lambda m, d: m.arange(5.0, device=d)[1::2]),
    ("bool_as_index", lambda m, d: m.arange(3.0, device=d)[:int(
        "ab" * m.ones((1, 1, 1), dtype=m.bool, device=d) == "ab")]),
    ("scatter_0d_index_empty_src", lambda m, d: m.zeros(4, device=d).scatter(
        0, m.tensor(0, device=d), m.zeros(0, device=d))),
    ("scatter_index_larger_than_src", lambda m, d: m.zeros((4, 3), device=d).scatter(
        0, m.zeros((2, 2), dtype=m.int64, device=d), m.ones((1, 5), device=d))),
    ("scatter_add_index_larger_than_src", lambda m, d: m.zeros(4, device=d).scatter_add(
        0, m.tensor([0], device=d), m.zeros(0, device=d))),
    ("scatter_add_0d_src", lambda m, d: m.zeros(4, device=d).scatter_add(
        0, m.tensor([1], device=d), m.tensor(5.0, device=d))),
    ("scatter_smaller_index", lambda m, d: m.zeros((4, 3), device=d).scatter(
        0, m.ones((2, 2), dtype=m.int64, device=d), m.ones((3, 3), device=d))),
]


@pytest.mark.parametrize("name,call", SEED_50_70, ids=[c[0] for c in SEED_50_70])
def test_seed_50_to_70_findings_match_torch(device, name, call):
    """Tensor.softmax/torch.softmax want an int dim (F.softmax keeps the implicit one);
    a one-element bool tensor is an index
    (0/1: "ab" * t); scatter's index is no larger than src in any dim, and a 0-d src gives
    a one-element index its value."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the implicit softmax dim's deprecation
        _like_torch(lambda m, d: call(otorch if m is ot else m, d), device, same_message=False)


BOOL_TENSOR_INTS = [
    ("transpose", lambda m, d: m.zeros((2, 3), device=d).transpose(0, m.tensor(True, device=d))),
    ("reshape", lambda m, d: m.zeros((2, 1), device=d).reshape(2, m.tensor(True, device=d))),
    ("narrow", lambda m, d: m.zeros((2, 3), device=d).narrow(1, m.tensor(True, device=d), 1)),
    ("narrow_int_tensor", lambda m, d: m.arange(6.0, device=d).reshape(2, 3).narrow(
        1, m.tensor(1, device=d), 2)),
    ("list_index", lambda m, d: m.arange(3.0, device=d)[[0, 2][m.tensor(True, device=d)]]),
]


@pytest.mark.parametrize("name,call", BOOL_TENSOR_INTS, ids=[c[0] for c in BOOL_TENSOR_INTS])
def test_a_bool_tensor_is_an_index_but_not_an_int_argument(device, name, call):
    """``__index__`` of a one-element bool tensor is 0/1 (torch), but where torch wants an
    int (a dim, a size, narrow's start) a bool tensor stays refused."""
    _like_torch(lambda m, d: call(otorch if m is ot else m, d), device, same_message=False)


EMPTY_INDEXING = [
    ("0d_index_out_of_range", lambda m, d: m.zeros((2, 0, 4), device=d)[m.tensor(3, device=d)]),
    ("1d_index_reads_nothing", lambda m, d: m.zeros((2, 0, 4), device=d)[m.tensor([3], device=d)]),
    ("index_into_empty_dim", lambda m, d: m.zeros((0, 4), device=d)[m.tensor([3], device=d)]),
    ("index_beside_empty_dim", lambda m, d: m.zeros((0, 4), device=d)[:, m.tensor([7], device=d)]),
]


@pytest.mark.parametrize("name,call", EMPTY_INDEXING, ids=[c[0] for c in EMPTY_INDEXING])
def test_index_tensors_into_empty_tensors_are_checked_as_torch_checks(device, name, call):
    """Seed 69: a 0-d index tensor is an int, checked even where the result is empty (a
    1-D one reading nothing is not checked, unless its own dim is empty)."""
    _like_torch(lambda m, d: call(otorch if m is ot else m, d), device, same_message=False)
