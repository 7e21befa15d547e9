"""The torch names bound by one rule per family in omnitensor/core/methods_torch_more.py,
omnitensor/core/ops/copies.py, core/ops/torch_api.py (the special-function methods) and
omnitensor/torch_face_more.py equal real torch's, value by value, on every device."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.torch_face as face
from omnitensor.core import methods_torch_more
from omnitensor import torch_face_more

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(7)
X = RNG.uniform(0.2, 0.8, (2, 3, 4)).astype(np.float32)


def _pair(a, device, requires_grad=False):
    t = torch.tensor(a, requires_grad=requires_grad)
    o = ot.tensor(a, device=device, requires_grad=requires_grad)
    return t, o


def _close(o, t, **kw):
    np.testing.assert_allclose(np.asarray(o.detach().cpu().numpy()),
                               t.detach().numpy(), rtol=kw.get("rtol", 1e-5),
                               atol=kw.get("atol", 1e-6))


# ------------------------------------------------------------ in-place views
VIEW_ARGS = {"squeeze_": (), "unsqueeze_": (1,), "transpose_": (0, 2), "swapaxes_": (1, 2),
             "swapdims_": (0, 1), "t_": (), "as_strided_": ((3, 2), (1, 3), 1)}


def _view_input(name, a):
    if name == "squeeze_":
        return a[:, :1]
    if name == "t_":
        return a[0]
    return a


@pytest.mark.parametrize("name", sorted(methods_torch_more.INPLACE_VIEWS))
def test_inplace_view_equals_torch(name, device):
    a = _view_input(name, X)
    t, o = _pair(a, device)
    rt, ro = getattr(t, name)(*VIEW_ARGS[name]), getattr(o, name)(*VIEW_ARGS[name])
    assert ro is o and rt is t
    assert tuple(o.shape) == tuple(t.shape)
    assert o.stride() == t.stride()
    _close(o, t)


@pytest.mark.parametrize("name", sorted(methods_torch_more.INPLACE_VIEWS))
def test_inplace_view_gradient_equals_torch(name, device):
    a = _view_input(name, X)
    t, o = _pair(a, device, requires_grad=True)
    bt, bo = t * 2, o * 2
    getattr(bt, name)(*VIEW_ARGS[name])
    getattr(bo, name)(*VIEW_ARGS[name])
    w = RNG.standard_normal(tuple(bt.shape)).astype(np.float32)
    (bt * torch.tensor(w)).sum().backward()
    (bo * ot.tensor(w, device=device)).sum().backward()
    _close(o.grad, t.grad)


def test_inplace_view_refuses_a_leaf_that_requires_grad(device):
    o = ot.ones(2, 3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        o.unsqueeze_(0)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        torch.ones(2, 3, requires_grad=True).unsqueeze_(0)


# ------------------------------------------------- special-function methods
SPECIAL = {"digamma": (), "erfinv": (), "i0": (), "lgamma": (), "polygamma": (1,)}


@pytest.mark.parametrize("name", sorted(SPECIAL))
@pytest.mark.parametrize("inplace", [False, True])
def test_special_method_equals_torch(name, inplace, device):
    t, o = _pair(X, device)
    meth = name + ("_" if inplace else "")
    rt, ro = getattr(t, meth)(*SPECIAL[name]), getattr(o, meth)(*SPECIAL[name])
    _close(ro, rt, rtol=1e-4)
    if inplace:
        assert ro is o
        _close(o, t, rtol=1e-4)


def test_top_level_inplace_forms(device):
    t, o = _pair(X, device)
    torch.i0_(t)
    face.i0_(o)
    _close(o, t, rtol=1e-4)
    t, o = _pair(X, device)
    torch.as_strided_(t, (4,), (2,), 1)
    face.as_strided_(o, (4,), (2,), 1)
    _close(o, t)


# ------------------------------------------------------------------ *_copy
COPY_CALLS = {
    "detach_copy": lambda m, x: m.detach_copy(x),
    "select_copy": lambda m, x: m.select_copy(x, 1, 2),
    "slice_copy": lambda m, x: m.slice_copy(x, 2, 1, None, 2),
    "split_copy": lambda m, x: m.split_copy(x, 2, 2)[1],
    "view_as_real_copy": lambda m, x: m.view_as_real_copy(m.view_as_complex(x[..., :2]
                                                                            .contiguous())),
    "view_as_complex_copy": lambda m, x: m.view_as_real(
        m.view_as_complex_copy(x[..., :2].contiguous())),
}


def test_every_new_copy_is_tested():
    assert set(COPY_CALLS) <= set(torch_face_more.COPIES)


@pytest.mark.parametrize("name", sorted(COPY_CALLS))
def test_copy_equals_torch_and_owns_its_memory(name, device):
    t, o = _pair(X, device)
    rt, ro = COPY_CALLS[name](torch, t), COPY_CALLS[name](face, o)
    assert tuple(ro.shape) == tuple(rt.shape)
    _close(ro, rt)
    ro.fill_(0.0)  # a copy: the input keeps its values
    _close(o, torch.tensor(X))


def test_copy_gradient_equals_torch(device):
    t, o = _pair(X, device, requires_grad=True)
    face.slice_copy(o, 1, 0, 2).sum().backward()
    torch.slice_copy(t, 1, 0, 2).sum().backward()
    _close(o.grad, t.grad)


# ---------------------------------------------------------- removed methods
@pytest.mark.parametrize("name", sorted(methods_torch_more.REMOVED))
def test_removed_method_raises_torchs_error(name, device):
    t, o = _pair(np.eye(3, dtype=np.float32), device)
    with pytest.raises(RuntimeError) as theirs:
        getattr(t, name)(t)
    with pytest.raises(RuntimeError) as ours:
        getattr(o, name)(o)
    assert str(theirs.value).splitlines()[0] == str(ours.value).splitlines()[0]


# ------------------------------------------------------------------ queries
def test_queries_equal_torch(device):
    t, o = _pair(X, device)
    for perm in [(0, 1, 2), (2, 0, 1), (1, 2, 0)]:
        assert o.permute(*perm).dim_order() == t.permute(*perm).dim_order()
    assert o.name is t.name is None
    assert o.is_pinned() is t.is_pinned() is False
    assert o.grad_dtype.name == str(t.grad_dtype).split(".")[1]
    with pytest.warns(UserWarning, match="volatile"):
        assert o.volatile is False
    # which output of its grad_fn: one node with several outputs (composites record one
    # node per output, so their outputs answer 0)
    parts_t = torch.linalg.svd(torch.tensor(X[0], requires_grad=True))
    parts_o = face.linalg.svd(ot.tensor(X[0], device=device, requires_grad=True))
    assert [p.output_nr for p in parts_o] == [p.output_nr for p in parts_t] == [0, 1, 2]


def test_resize_and_resize_as_equal_torch(device):
    t, o = _pair(X, device, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rt, ro = t.resize(4, 6), o.resize(4, 6)
        _close(ro, rt)
        _close(o.resize_as(o.reshape(6, 4)), t.resize_as(t.reshape(6, 4)))
        (rt * 3).sum().backward()
        (ro * 3).sum().backward()
        _close(o.grad, t.grad)
        with pytest.raises(RuntimeError, match="preserving the number of elements"):
            o.resize(5)
        with pytest.raises(RuntimeError, match="preserving the number of elements"):
            t.resize(5)


def test_as_subclass_shares_data_and_graph(device):
    class Mine(ot.Tensor):
        pass
    o = ot.tensor(X, device=device, requires_grad=True)
    m = (o * 2).as_subclass(Mine)
    assert type(m) is Mine and m.grad_fn is not None
    m.sum().backward()
    _close(o.grad, torch.full(X.shape, 2.0))


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
@pytest.mark.parametrize("dim", [None, 1, (0, 2)])
def test_hash_tensor_equals_torch(dtype, dim, device):
    a = (X * 100).astype(dtype)
    t, o = torch.tensor(a), ot.tensor(a, device=device)
    kw = {} if dim is None else {"dim": dim}
    rt, ro = torch.hash_tensor(t, **kw), face.hash_tensor(o, **kw)
    np.testing.assert_array_equal(ro.cpu().numpy(), rt.numpy())
    np.testing.assert_array_equal(o.hash_tensor(keepdim=True).cpu().numpy(),
                                  t.hash_tensor(keepdim=True).numpy())


def test_split_takes_torchs_parameter_names(device):
    t, o = _pair(X, device)
    for rt, ro in zip(t.split(split_size=2, dim=2), o.split(split_size=2, dim=2)):
        _close(ro, rt)
    for rt, ro in zip(torch.split(tensor=t, split_size_or_sections=[1, 2], dim=1),
                      face.split(tensor=o, split_size_or_sections=[1, 2], dim=1)):
        _close(ro, rt)


# -------------------------------------------------------- top-level functions
M = RNG.standard_normal((3, 4, 4)).astype(np.float32)
TOP = {
    "norm": lambda m, x: m.norm(input=x, p=3, dim=1, keepdim=True),
    "tensordot": lambda m, x: m.tensordot(x, x, dims=([1, 2], [1, 2])),
    "chain_matmul": lambda m, x: m.chain_matmul(x[0], x[1], x[2]),
    "frobenius_norm": lambda m, x: m.frobenius_norm(x, [1, 2]),
    "nuclear_norm": lambda m, x: m.nuclear_norm(x, (1, 2), True),
    "nuclear_norm_2d": lambda m, x: m.nuclear_norm(x[0]),
    "norm_except_dim": lambda m, x: m.norm_except_dim(x, 2, 1),
    "norm_except_dim_all": lambda m, x: m.norm_except_dim(x, 3, -1),
    "cond": lambda m, x: m.cond(x.sum() > 0, lambda a: a + 1, lambda a: a - 1, (x,)),
    "vmap": lambda m, x: m.vmap(lambda r: r.sum(0))(x),
}


@pytest.mark.parametrize("name", sorted(TOP))
def test_top_level_function_equals_torch(name, device):
    t, o = _pair(M, device)
    _close(TOP[name](face, o), TOP[name](torch, t), rtol=1e-4, atol=1e-5)


def test_out_arguments_equal_torch(device):
    t, o = _pair(M, device)
    out_t, out_o = torch.empty(4, 4), ot.empty(4, 4, device=device)
    torch.chain_matmul(t[0], t[1], out=out_t)
    face.chain_matmul(o[0], o[1], out=out_o)
    _close(out_o, out_t, rtol=1e-4)
    out_t, out_o = torch.empty(()), ot.empty((), device=device)
    torch.norm(t, out=out_t)
    face.norm(o, out=out_o)
    _close(out_o, out_t, rtol=1e-4)


@pytest.mark.parametrize("args,kw", [((1, 4), {}), ((0, 1, 0.3), {}), ((-2, 3, 2), {}),
                                     ((1, 4), {"dtype": "int64"})])
def test_range_equals_torch(args, kw, device):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dt = getattr(torch, kw["dtype"]) if kw else None
        rt = torch.range(*args, **({"dtype": dt} if dt else {}))
        ro = face.range(*args, device=device, **kw)
    assert str(rt.dtype).split(".")[1] == ro.dtype.name
    _close(ro, rt)


def test_range_needs_its_end():
    with pytest.raises(TypeError, match='"end"'):
        torch.range(5)
    with pytest.raises(TypeError, match='"end"'):
        face.range(5)


def test_samplers_have_torchs_distribution(device):
    face.manual_seed(0)
    count = ot.full((20000,), 12.0, device=device)
    prob = ot.full((20000,), 0.3, device=device)
    b = face.binomial(count, prob)
    assert b.dtype.name == "float32" and tuple(b.shape) == (20000,)
    v = b.cpu().numpy()
    assert (v == np.round(v)).all() and v.min() >= 0 and v.max() <= 12
    assert abs(v.mean() - 3.6) < 0.05 and abs(v.var() - 2.52) < 0.1
    rate = ot.full((20000,), 4.0, device=device)
    p = face.poisson(rate).cpu().numpy()
    assert (p == np.round(p)).all() and abs(p.mean() - 4.0) < 0.08
    assert abs(p.var() - 4.0) < 0.25
    np.testing.assert_array_equal(face.binomial(count[:3], ot.ones(3, device=device))
                                  .cpu().numpy(), [12, 12, 12])
    with pytest.raises(NotImplementedError, match="default generator"):
        face.poisson(rate, generator=ot.Generator())


def test_frombuffer_and_from_file_equal_torch(tmp_path):
    buf = bytearray(np.arange(10, dtype=np.int32).tobytes())
    for kw in ({}, {"count": 4}, {"count": 3, "offset": 8}):
        np.testing.assert_array_equal(face.frombuffer(buf, dtype="int32", **kw).numpy(),
                                      torch.frombuffer(buf, dtype=torch.int32, **kw).numpy())
    path = tmp_path / "f.bin"
    np.arange(6, dtype=np.float32).tofile(path)
    np.testing.assert_array_equal(face.from_file(str(path), size=5).numpy(),
                                  torch.from_file(str(path), size=5).numpy())
    shared = face.from_file(str(path), True, 6, dtype="float32")
    shared[0] = 42.0  # shared: the write reaches the file
    assert torch.from_file(str(path), size=6)[0].item() == 42.0


def test_switches_round_trip_as_torchs():
    for mode in ("warn", "error", 0, 1, "default"):
        torch.set_deterministic_debug_mode(mode)
        face.set_deterministic_debug_mode(mode)
        assert face.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
    assert face.are_deterministic_algorithms_enabled() is False
    face.set_anomaly_enabled(True, check_nan=False)
    try:
        assert face.is_anomaly_enabled() and not face.is_anomaly_check_nan_enabled()
    finally:
        face.set_anomaly_enabled(False)
    assert not face.is_anomaly_enabled() and face.is_anomaly_check_nan_enabled()
    face.set_warn_always(True)
    assert face.is_warn_always_enabled()
    face.set_warn_always(False)
    assert not face.is_warn_always_enabled()
    assert face.set_flush_denormal(True) is False and face.init_num_threads() is None
    assert face.thread_safe_generator() is None and not face.is_inference_mode_enabled()
    with face.inference_mode():
        assert face.is_inference_mode_enabled()
    face.set_autocast_cpu_dtype(face.float16)
    try:
        assert face.get_autocast_cpu_dtype() is face.float16
    finally:
        face.set_autocast_cpu_dtype(face.bfloat16)
    face.set_autocast_cpu_enabled(False)
    assert not face.is_autocast_cpu_enabled()
    assert all(isinstance(getattr(face, n), bool) for n in torch_face_more.FLAGS)
    assert issubclass(face.AcceleratorError, RuntimeError)
    assert face.fft.Tensor is face.Tensor


# ----------------------------------------- symbolic helpers on concrete numbers
SYM_CALLS = [
    ("sym_int", (2.7,)), ("sym_int", (-2.7,)), ("sym_float", (3,)), ("sym_max", (2, 3.5)),
    ("sym_min", (2, 3)), ("sym_not", (True,)), ("sym_ite", (False, 1, 2)),
    ("sym_sqrt", (4,)), ("sym_sum", ([1, 2, 3],)), ("sym_fresh_size", (5,)),
]


@pytest.mark.parametrize("name,args", SYM_CALLS)
def test_sym_helper_equals_torch(name, args):
    ours, theirs = getattr(face, name)(*args), getattr(torch, name)(*args)
    assert ours == theirs and type(ours) is type(theirs)


def test_sym_helpers_refuse_what_torch_refuses():
    for fn in ("sym_constrain_range", "sym_constrain_range_for_size"):
        assert getattr(face, fn)(3, min=0, max=5) is None
    with pytest.raises(RuntimeError, match=r"Invalid value range for 9 between \[0, 5\]"):
        face.sym_constrain_range(9, min=0, max=5)
    with pytest.raises(RuntimeError, match=r"Invalid value range for 9 between \[0, 5\]"):
        torch.sym_constrain_range(9, min=0, max=5)
    with pytest.raises(RuntimeError, match="Invalid value range for -1"):
        face.sym_constrain_range_for_size(-1)
    with pytest.raises(RuntimeError, match="Invalid value range for -1"):
        torch.sym_constrain_range_for_size(-1)
    with pytest.raises(AssertionError):
        face.sym_max(face.tensor(2), 3)
    with pytest.raises(AssertionError):
        torch.sym_max(torch.tensor(2), 3)
    assert face.sym_float(face.tensor(2)) == torch.sym_float(torch.tensor(2)) == 2.0
    assert not isinstance(3, face.SymInt)
    with pytest.raises(TypeError, match="SymNode"):
        face.SymInt(None)


# ------------------------------------------------------ absent device types
@pytest.mark.parametrize("name", sorted(methods_torch_more.ABSENT_DEVICES))
def test_moves_to_absent_devices_fail_as_torchs(name):
    with pytest.raises((AssertionError, RuntimeError)) as theirs:
        getattr(torch.ones(2), name)()
    with pytest.raises((AssertionError, RuntimeError)) as ours:
        getattr(ot.ones(2), name)()
    assert type(ours.value) is type(theirs.value)
    assert str(theirs.value).startswith(str(ours.value))


def test_absent_device_queries_equal_torch():
    assert ot.ones(2).is_xla is torch.ones(2).is_xla is False
    assert ot.ones(2).is_maia is torch.ones(2).is_maia is False
    assert face.is_vulkan_available() is torch.is_vulkan_available() is False
    assert face.cudnn_is_acceptable(ot.ones(2)) is torch.cudnn_is_acceptable(torch.ones(2))
    for dev in ("xla", "ipu"):
        default = getattr(torch, f"get_autocast_{dev}_dtype")()
        assert str(default).split(".")[1] == getattr(face, f"get_autocast_{dev}_dtype")().name
        assert getattr(face, f"is_autocast_{dev}_enabled")() is False
        getattr(face, f"set_autocast_{dev}_enabled")(True)
        getattr(face, f"set_autocast_{dev}_dtype")(face.float16)
        try:
            assert getattr(face, f"is_autocast_{dev}_enabled")()
            assert getattr(face, f"get_autocast_{dev}_dtype")() is face.float16
        finally:
            getattr(face, f"set_autocast_{dev}_enabled")(False)
            getattr(face, f"set_autocast_{dev}_dtype")(default.__repr__().split(".")[1])


# ------------------------------------------- aten's flat-weight recurrences
RECURRENCES = {"lstm": (torch.nn.LSTM, {"proj_size": 2}), "gru": (torch.nn.GRU, {}),
               "rnn_tanh": (torch.nn.RNN, {}),
               "rnn_relu": (torch.nn.RNN, {"nonlinearity": "relu"})}


@pytest.mark.parametrize("name", sorted(RECURRENCES))
@pytest.mark.parametrize("batch_first", [False, True])
def test_flat_recurrence_equals_torch(name, batch_first, device):
    cls, kw = RECURRENCES[name]
    torch.manual_seed(1)
    m = cls(4, 3, num_layers=2, bidirectional=True, batch_first=batch_first, **kw)
    params = [p.detach().clone().requires_grad_(True) for p in m._flat_weights]
    x = torch.randn(5, 2, 4)
    b = 5 if batch_first else 2
    states = [torch.randn(4, b, 2), torch.randn(4, b, 3)] if name == "lstm" else \
        torch.randn(4, b, 3)
    mine = [ot.tensor(p.detach().numpy(), device=device, requires_grad=True) for p in params]
    my_states = [ot.tensor(s.numpy(), device=device) for s in states] if name == "lstm" \
        else ot.tensor(states.numpy(), device=device)
    rt = getattr(torch, name)(x, states, params, True, 2, 0.0, False, True, batch_first)
    ro = getattr(face, name)(ot.tensor(x.numpy(), device=device), my_states, mine, True, 2,
                             0.0, False, True, batch_first)
    assert len(ro) == len(rt)
    for a, b in zip(ro, rt):
        _close(a, b, rtol=1e-4, atol=1e-5)
    sum(r.sum() for r in rt).backward()
    sum(r.sum() for r in ro).backward()
    for a, b in zip(mine, params):
        _close(a.grad, b.grad, rtol=1e-4, atol=1e-5)


def test_packed_flat_recurrence_equals_torch(device):
    torch.manual_seed(2)
    m = torch.nn.GRU(3, 2)
    seq = torch.nn.utils.rnn.pack_padded_sequence(torch.randn(4, 3, 3), [4, 3, 1])
    h0 = torch.zeros(1, 3, 2)
    rt = torch.gru(seq.data, seq.batch_sizes, h0, m._flat_weights, True, 1, 0.0, False, False)
    ro = face.gru(ot.tensor(seq.data.numpy(), device=device), ot.tensor(seq.batch_sizes.numpy()),
                  ot.tensor(h0.numpy(), device=device),
                  [ot.tensor(p.detach().numpy(), device=device) for p in m._flat_weights],
                  True, 1, 0.0, False, False)
    for a, b in zip(ro, rt):
        _close(a, b, rtol=1e-4, atol=1e-5)


def test_disable_torch_function_is_a_context_manager():
    with face.DisableTorchFunction(), face.DisableTorchFunctionSubclass():
        assert face.ones(2).sum().item() == 2.0
