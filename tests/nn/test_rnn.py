"""Recurrent layers (RNN, LSTM, GRU, their cells) and nn.utils.rnn packing: forward
outputs, final states and every gradient compared with torch on each device (float32),
float64 gradchecks, state dict layout, dropout, and bad input. The torch comparisons skip
where torch is not installed; the gradchecks and behaviour tests run everywhere."""
import warnings

import numpy as np
import pytest
from nn_helpers import N, check_grad, fdtype

import omnitensor as ot
from omnitensor import nn
from omnitensor.nn.utils import rnn as R

F32 = dict(rtol=2e-4, atol=2e-5)  # float32 results vs torch in float64


def _torch():
    return pytest.importorskip("torch")


def _pair(cls, input_size, device, dtype=ot.float32, **kw):
    """The same layer in torch (float64) and omnitensor (on ``device``), weights copied."""
    torch = _torch()
    tm = getattr(torch.nn, cls)(input_size, **kw).double()
    om = getattr(nn, cls)(input_size, **kw, device=device, dtype=dtype)
    om.load_state_dict({k: ot.tensor(v.detach().numpy(), dtype=dtype, device=device)
                        for k, v in tm.state_dict().items()})
    return tm, om


def _leaf(a, device, dtype=ot.float32):
    torch = _torch()
    return (torch.tensor(a, dtype=torch.float64, requires_grad=True),
            ot.tensor(a, dtype=dtype, device=device, requires_grad=True))


def _as_tuple(s):
    return s if isinstance(s, tuple) else (s,)


def _compare_backward(tm, om, outs_t, outs_o, leaves, seed=1):
    """Back-propagate the same random weighting of all outputs; compare leaf and parameter
    gradients."""
    torch = _torch()
    g = np.random.default_rng(seed)
    lt, lo = 0, 0
    for a, b in zip(outs_t, outs_o):
        w = g.standard_normal(tuple(a.shape))
        lt = lt + (a * torch.tensor(w)).sum()
        lo = lo + (b * ot.tensor(w, dtype=b.dtype, device=b.device)).sum()
    lt.backward()
    lo.backward()
    for i, (a, b) in enumerate(leaves):
        np.testing.assert_allclose(N(b.grad), a.grad.numpy(), **F32, err_msg=f"leaf {i}")
    for (n, pt), (n2, po) in zip(tm.named_parameters(), om.named_parameters()):
        assert n == n2
        np.testing.assert_allclose(N(po.grad), pt.grad.numpy(), **F32, err_msg=n)


CONFIGS = {
    "1layer": dict(hidden_size=6),
    "2layer_bidir": dict(hidden_size=5, num_layers=2, bidirectional=True),
    "batch_first_nobias": dict(hidden_size=4, batch_first=True, bias=False),
    "2layer_batch_first_bidir": dict(hidden_size=3, num_layers=2, batch_first=True,
                                     bidirectional=True),
}
LAYERS = [("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}), ("GRU", {})]
LSTM_PROJ = {"proj": dict(hidden_size=6, proj_size=3),
             "proj_2layer_bidir_nobias": dict(hidden_size=5, proj_size=2, num_layers=2,
                                              bidirectional=True, bias=False)}


def _cases():
    for cls, extra in LAYERS:
        for name, kw in CONFIGS.items():
            tag = cls + ("_relu" if extra else "")
            yield pytest.param(cls, {**kw, **extra}, id=f"{tag}-{name}")
    for name, kw in LSTM_PROJ.items():
        yield pytest.param("LSTM", kw, id=f"LSTM-{name}")


def _initial_state(cls, kw, batch, device, rng):
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    h = kw["hidden_size"]
    h0 = _leaf(rng.standard_normal((layers, batch, kw.get("proj_size") or h)), device)
    if cls != "LSTM":
        return h0[0], h0[1], [h0]
    c0 = _leaf(rng.standard_normal((layers, batch, h)), device)
    return (h0[0], c0[0]), (h0[1], c0[1]), [h0, c0]


@pytest.mark.parametrize("with_state", [False, True], ids=["zero_state", "h0"])
@pytest.mark.parametrize("cls,kw", list(_cases()))
def test_layer_matches_torch(device, cls, kw, with_state):
    rng = np.random.default_rng(0)
    steps, batch, n_in = 4, 3, 5
    tm, om = _pair(cls, n_in, device, **kw)
    shape = (batch, steps, n_in) if kw.get("batch_first") else (steps, batch, n_in)
    xt, xo = _leaf(rng.standard_normal(shape), device)
    leaves = [(xt, xo)]
    args_t, args_o = (), ()
    if with_state:
        st, so, more = _initial_state(cls, kw, batch, device, rng)
        args_t, args_o, leaves = (st,), (so,), leaves + more
    yt, st = tm(xt, *args_t)
    yo, so = om(xo, *args_o)
    assert yo.device == ot.device(device) and tuple(yo.shape) == tuple(yt.shape)
    np.testing.assert_allclose(N(yo), yt.detach().numpy(), **F32)
    for a, b in zip(_as_tuple(st), _as_tuple(so)):
        assert tuple(b.shape) == tuple(a.shape)
        np.testing.assert_allclose(N(b), a.detach().numpy(), **F32)
    _compare_backward(tm, om, (yt,) + _as_tuple(st), (yo,) + _as_tuple(so), leaves)


PACKED = [("RNN", dict(hidden_size=4)),
          ("LSTM", dict(hidden_size=4, num_layers=2, bidirectional=True)),
          ("LSTM", dict(hidden_size=5, proj_size=2, bidirectional=True)),
          ("GRU", dict(hidden_size=4, num_layers=2, bidirectional=True, batch_first=True))]


@pytest.mark.parametrize("enforce_sorted", [False, True], ids=["unsorted", "sorted"])
@pytest.mark.parametrize("cls,kw", PACKED, ids=[f"{c}-{i}" for i, (c, _) in enumerate(PACKED)])
def test_packed_input_matches_torch(device, cls, kw, enforce_sorted):
    torch = _torch()
    rng = np.random.default_rng(2)
    lengths = [6, 4, 4, 2, 1] if enforce_sorted else [3, 6, 1, 4, 2]
    steps, batch, n_in = 6, 5, 3
    bf = kw.get("batch_first", False)
    tm, om = _pair(cls, n_in, device, **kw)
    xt, xo = _leaf(rng.standard_normal((batch, steps, n_in) if bf else (steps, batch, n_in)),
                   device)
    st, so, more = _initial_state(cls, kw, batch, device, rng)
    pt = torch.nn.utils.rnn.pack_padded_sequence(xt, lengths, batch_first=bf,
                                                 enforce_sorted=enforce_sorted)
    po = R.pack_padded_sequence(xo, lengths, batch_first=bf, enforce_sorted=enforce_sorted)
    yt, ht = tm(pt, st)
    yo, ho = om(po, so)
    assert isinstance(yo, R.PackedSequence)
    assert yo.batch_sizes.tolist() == yt.batch_sizes.tolist()
    np.testing.assert_allclose(N(yo.data), yt.data.detach().numpy(), **F32)
    pad_t, len_t = torch.nn.utils.rnn.pad_packed_sequence(yt, batch_first=bf)
    pad_o, len_o = R.pad_packed_sequence(yo, batch_first=bf)
    assert len_o.tolist() == len_t.tolist() == lengths
    np.testing.assert_allclose(N(pad_o), pad_t.detach().numpy(), **F32)
    for a, b in zip(_as_tuple(ht), _as_tuple(ho)):
        np.testing.assert_allclose(N(b), a.detach().numpy(), **F32)
    _compare_backward(tm, om, (pad_t,) + _as_tuple(ht), (pad_o,) + _as_tuple(ho),
                      [(xt, xo)] + more)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_unbatched_input_matches_torch(device, cls):
    rng = np.random.default_rng(3)
    for batch_first in (False, True):
        kw = dict(hidden_size=4, num_layers=2, bidirectional=True, batch_first=batch_first)
        tm, om = _pair(cls, 3, device, **kw)
        xt, xo = _leaf(rng.standard_normal((5, 3)), device)
        st, so, more = _initial_state(cls, kw, 1, device, rng)
        squeeze = (lambda s, f: tuple(f(t) for t in s) if isinstance(s, tuple) else f(s))
        st = squeeze(st, lambda t: t[:, 0])
        so = squeeze(so, lambda t: t[:, 0])
        yt, ht = tm(xt, st)
        yo, ho = om(xo, so)
        assert tuple(yo.shape) == tuple(yt.shape) == (5, 8)
        np.testing.assert_allclose(N(yo), yt.detach().numpy(), **F32)
        for a, b in zip(_as_tuple(ht), _as_tuple(ho)):
            assert tuple(b.shape) == tuple(a.shape) == (4, 4)
            np.testing.assert_allclose(N(b), a.detach().numpy(), **F32)
        _compare_backward(tm, om, (yt,) + _as_tuple(ht), (yo,) + _as_tuple(ho),
                          [(xt, xo)] + more)
        yo2, _ = om(xo)  # no state: zeros
        yt2, _ = tm(xt)
        np.testing.assert_allclose(N(yo2), yt2.detach().numpy(), **F32)


CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}),
         ("GRUCell", {}), ("LSTMCell", {"bias": False}), ("GRUCell", {"bias": False})]


@pytest.mark.parametrize("cls,kw", CELLS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CELLS)])
def test_cell_matches_torch(device, cls, kw):
    torch = _torch()
    rng = np.random.default_rng(4)
    tm, om = _pair(cls, 3, device, hidden_size=5, **kw)
    assert list(om.state_dict()) == list(tm.state_dict())
    for batched in (True, False):
        lead = (4,) if batched else ()
        xt, xo = _leaf(rng.standard_normal(lead + (3,)), device)
        hs = [_leaf(rng.standard_normal(lead + (5,)), device)
              for _ in range(2 if cls == "LSTMCell" else 1)]
        st = tuple(h[0] for h in hs) if cls == "LSTMCell" else hs[0][0]
        so = tuple(h[1] for h in hs) if cls == "LSTMCell" else hs[0][1]
        # two steps, the second from the first's state: exercises the state gradient path
        at = tm(xt, tm(xt * 2, st))
        ao = om(xo, om(xo * 2, so))
        for a, b in zip(_as_tuple(at), _as_tuple(ao)):
            assert tuple(b.shape) == tuple(a.shape)
            np.testing.assert_allclose(N(b), a.detach().numpy(), **F32)
        tm.zero_grad()
        om.zero_grad()
        _compare_backward(tm, om, _as_tuple(at), _as_tuple(ao), [(xt, xo)] + hs)
        bt, bo = tm(xt), om(xo)  # hx None: zeros
        for a, b in zip(_as_tuple(bt), _as_tuple(bo)):
            np.testing.assert_allclose(N(b), a.detach().numpy(), **F32)
        assert isinstance(torch.zeros(1), torch.Tensor)


# -------------------------------------------------------------------- gradchecks (float64)
def _needs_fp64(device):
    if fdtype(device) is not ot.float64:
        pytest.skip(f"{device} has no float64")


def _functional(module, fn, names=None):
    """``fn(*inputs)`` run with the module's parameters ``names`` (default: all) replaced
    by the trailing inputs (gradcheck passes perturbed copies; torch's functional_call does
    the same swap)."""
    names = names or [n for n, _ in module.named_parameters()]

    def call(*args):
        k = len(args) - len(names)
        saved = dict(module._parameters)
        module._parameters.update(zip(names, args[k:]))
        try:
            return fn(*args[:k])
        finally:
            module._parameters.clear()
            module._parameters.update(saved)
    return call


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_gradcheck(device, cls):
    _needs_fp64(device)
    rng = np.random.default_rng(5)
    cell = getattr(nn, cls)(3, 2, device=device, dtype=ot.float64)
    x, h, c = (ot.tensor(rng.standard_normal(s), device=device, requires_grad=True)
               for s in ((2, 3), (2, 2), (2, 2)))
    params = list(cell.parameters())
    if cls == "LSTMCell":
        check_grad(_functional(cell, lambda x, h, c: cell(x, (h, c))), [x, h, c] + params,
                   device)
    else:
        check_grad(_functional(cell, cell), [x, h] + params, device)
    check_grad(_functional(cell, lambda x: cell(x)), [x[0].detach().requires_grad_()] +
               params, device)  # unbatched, zero state


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_layer_gradcheck_packed_bidirectional(device, cls):
    _needs_fp64(device)
    rng = np.random.default_rng(6)
    kw = dict(num_layers=2, bidirectional=True)
    if cls == "LSTM":
        kw["proj_size"] = 1
    layer = getattr(nn, cls)(2, 2, device=device, dtype=ot.float64, **kw)
    x = ot.tensor(rng.standard_normal((3, 3, 2)), device=device, requires_grad=True)

    full = device == "cpu"
    weights = {}  # a fixed random projection per output shape

    def project(t):
        if t.shape not in weights:
            weights[t.shape] = ot.tensor(rng.standard_normal(t.shape), device=device)
        return (t * weights[t.shape]).sum()

    def fn(x):
        out, state = layer(R.pack_padded_sequence(x, [2, 3, 1], enforce_sorted=False))
        h = state[0] if isinstance(state, tuple) else state
        out = R.pad_packed_sequence(out)[0]
        if full:
            return out, h
        return project(out) + project(h)

    # cpu: the whole Jacobian, every parameter. Elsewhere (each input element costs two
    # forwards and each output element a backward on a slower device) a random projection
    # of the outputs, for the input, a recurrent weight of layer 0 and layer 1 reverse's
    # input weight and bias
    names = [n for n, _ in layer.named_parameters()] if full else \
        ["weight_hh_l0", "weight_ih_l1_reverse", "bias_hh_l1_reverse"]
    check_grad(_functional(layer, fn, names), [x] + [getattr(layer, n) for n in names],
               device)


# ------------------------------------------------------------ parameters and state dicts
STATE_CONFIGS = [("RNN", dict(hidden_size=4, num_layers=3, bidirectional=True)),
                 ("RNN", dict(hidden_size=4, nonlinearity="relu", bias=False)),
                 ("LSTM", dict(hidden_size=4, num_layers=2, proj_size=2, bidirectional=True)),
                 ("LSTM", dict(hidden_size=4, proj_size=3, bias=False)),
                 ("GRU", dict(hidden_size=4, num_layers=2, bidirectional=True)),
                 ("RNNCell", dict(hidden_size=4)), ("LSTMCell", dict(hidden_size=4, bias=False)),
                 ("GRUCell", dict(hidden_size=4))]


@pytest.mark.parametrize("cls,kw", STATE_CONFIGS,
                         ids=[f"{c}-{i}" for i, (c, _) in enumerate(STATE_CONFIGS)])
def test_state_dict_layout_and_names_match_torch(cls, kw):
    torch = _torch()
    tm, om = getattr(torch.nn, cls)(3, **kw), getattr(nn, cls)(3, **kw)
    sd_t, sd_o = tm.state_dict(), om.state_dict()
    assert list(sd_o) == list(sd_t)
    for k in sd_t:
        assert tuple(sd_o[k].shape) == tuple(sd_t[k].shape), k
    assert [n for n, _ in om.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert repr(om) == repr(tm)
    if not cls.endswith("Cell"):
        assert om._flat_weights_names == tm._flat_weights_names
        assert om._all_weights == tm._all_weights
        assert [[tuple(w.shape) for w in ws] for ws in om.all_weights] == \
            [[tuple(w.shape) for w in ws] for ws in tm.all_weights]
        assert all(a is b for a, b in zip(om._flat_weights, om.parameters()))
    # torch checkpoint -> omnitensor: the loaded values are the ones used
    om.load_state_dict({k: ot.tensor(v.numpy()) for k, v in sd_t.items()})
    for k, v in om.state_dict().items():
        np.testing.assert_array_equal(N(v), sd_t[k].numpy())


def test_default_init_is_uniform_in_inverse_sqrt_hidden():
    ot.manual_seed(0)
    for layer in (nn.LSTM(30, 64, 2), nn.GRUCell(8, 64), nn.RNN(5, 64, bidirectional=True)):
        vals = np.concatenate([N(p).ravel() for p in layer.parameters()])
        bound = 1 / np.sqrt(64)
        assert np.abs(vals).max() <= bound
        assert abs(vals.std() - bound / np.sqrt(3)) < 0.05 * bound  # U(-b, b) has std b/√3
        assert abs(vals.mean()) < 0.02 * bound


def test_flatten_parameters_is_a_noop_and_module_moves(device):
    layer = nn.LSTM(3, 4, 2)
    x = ot.tensor(np.random.default_rng(7).standard_normal((5, 2, 3)), dtype=ot.float32)
    before = N(layer(x)[0])
    assert layer.flatten_parameters() is None
    np.testing.assert_array_equal(N(layer(x)[0]), before)
    layer.to(device)
    layer.flatten_parameters()
    assert all(p.device == ot.device(device) for p in layer.parameters())
    assert all(p.device == ot.device(device) for p in layer._flat_weights)
    np.testing.assert_allclose(N(layer(x.to(device))[0]), before, rtol=1e-5, atol=1e-6)


def test_modules_rnn_import_path():
    pytest.importorskip("omnitensor.nn.modules")
    from omnitensor.nn.modules import rnn as mod
    for name in ("RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell",
                 "GRUCell"):
        assert getattr(mod, name) is getattr(nn, name)


# ------------------------------------------------------------------------------ dropout
def test_dropout_between_layers_seeded_and_eval_deterministic(device):
    layer = nn.LSTM(4, 8, num_layers=3, dropout=0.5, device=device)
    plain = nn.LSTM(4, 8, num_layers=3, device=device)
    plain.load_state_dict(layer.state_dict())
    x = ot.tensor(np.random.default_rng(8).standard_normal((6, 2, 4)), dtype=ot.float32,
                  device=device)
    layer.train()
    ot.manual_seed(123)
    a = N(layer(x)[0])
    ot.manual_seed(123)
    b = N(layer(x)[0])
    np.testing.assert_array_equal(a, b)  # same seed, same masks
    c = N(layer(x)[0])
    assert not np.allclose(a, c)  # a new draw
    ref = N(plain(x)[0])
    assert not np.allclose(a, ref)
    layer.eval()
    e1, e2 = N(layer(x)[0]), N(layer(x)[0])
    np.testing.assert_array_equal(e1, e2)
    np.testing.assert_allclose(e1, ref, rtol=1e-6, atol=1e-7)  # eval: no dropout at all
    # the last layer's output is not dropped: dropout=1 zeroes the inputs of layers 2, 3
    one = nn.GRU(4, 8, num_layers=2, dropout=1.0, device=device).train()
    out = N(one(x)[0])
    assert np.abs(out).sum() > 0


def test_single_layer_dropout_warns_like_torch():
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.GRU(3, 4, num_layers=2, dropout=0.2)


# ---------------------------------------------------------------------------- bad input
def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.RNN(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNNCell(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match="dropout"):
        nn.LSTM(3, 4, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.LSTM(3, 0)
    with pytest.raises(TypeError, match="hidden_size should be of type int"):
        nn.LSTM(3, 4.0)
    with pytest.raises(ValueError, match="num_layers"):
        nn.GRU(3, 4, num_layers=0)


def test_bad_forward_input_raises_clear_errors(device):
    lstm = nn.LSTM(3, 4, num_layers=2, device=device)
    x = ot.zeros((5, 2, 3), device=device)
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D, got 4D"):
        lstm(ot.zeros((1, 5, 2, 3), device=device))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        lstm(ot.zeros((5, 2, 4), device=device))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(2, 2, 4\), got"):
        lstm(x, (ot.zeros((1, 2, 4), device=device), ot.zeros((2, 2, 4), device=device)))
    with pytest.raises(RuntimeError, match="hx and cx should also be 3-D"):
        lstm(x, (ot.zeros((2, 4), device=device), ot.zeros((2, 4), device=device)))
    with pytest.raises(TypeError, match="tuple"):
        lstm(x, ot.zeros((2, 2, 4), device=device))
    with pytest.raises(ValueError, match="dtype"):
        lstm(ot.zeros((5, 2, 3), dtype=ot.int64, device=device))
    gru = nn.GRU(3, 4, device=device)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"):
        gru(x, ot.zeros((1, 3, 4), device=device))
    with pytest.raises(RuntimeError, match="unbatched 2-D input, hx should also be 2-D"):
        gru(x[:, 0], ot.zeros((1, 2, 4), device=device))
    cell = nn.LSTMCell(3, 4, device=device)
    with pytest.raises(ValueError, match="Expected input to be 1D or 2D, got 3D"):
        cell(x)
    with pytest.raises(RuntimeError, match="inconsistent input_size"):
        cell(ot.zeros((2, 5), device=device))
    with pytest.raises(RuntimeError, match="batch size"):
        cell(x[0], (ot.zeros((3, 4), device=device), ot.zeros((3, 4), device=device)))


def test_bad_packing_raises_clear_errors():
    x = ot.zeros((4, 3, 2))
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        R.pack_padded_sequence(x, [1, 3, 2])
    with pytest.raises(RuntimeError, match="greater than 0"):
        R.pack_padded_sequence(x, [3, 2, 0])
    with pytest.raises(ValueError, match="equal to batch_size"):
        R.pack_padded_sequence(x, [3, 2])
    with pytest.raises(ValueError, match="exceeds the padded sequence length"):
        R.pack_padded_sequence(x, [5, 2, 1])
    packed = R.pack_padded_sequence(x, [4, 2, 1])
    with pytest.raises(ValueError, match="total_length to be at least"):
        R.pad_packed_sequence(packed, total_length=3)
    with pytest.raises(ValueError, match="padding_side"):
        R.pad_sequence([ot.zeros(2)], padding_side="middle")
    with pytest.raises(ValueError, match="trailing shape"):
        R.pad_sequence([ot.zeros((2, 3)), ot.zeros((2, 4))])
    with pytest.raises(ValueError, match="CPU tensor"):
        R.PackedSequence(x, [3, 2])


# ---------------------------------------------------------------- nn.utils.rnn vs torch
@pytest.mark.parametrize("batch_first", [False, True])
def test_packing_utilities_match_torch(device, batch_first):
    torch = _torch()
    tr = torch.nn.utils.rnn
    rng = np.random.default_rng(9)
    lengths = [2, 5, 1, 4]
    a = rng.standard_normal((4, 5, 3) if batch_first else (5, 4, 3))
    xt, xo = _leaf(a, device)
    for sort in (False, True):
        lens = sorted(lengths, reverse=True) if sort else lengths
        pt = tr.pack_padded_sequence(xt, lens, batch_first=batch_first, enforce_sorted=sort)
        po = R.pack_padded_sequence(xo, ot.tensor(lens), batch_first=batch_first,
                                    enforce_sorted=sort)
        np.testing.assert_allclose(N(po.data), pt.data.detach().numpy(), **F32)
        assert po.batch_sizes.tolist() == pt.batch_sizes.tolist()
        assert po.batch_sizes.device == ot.device("cpu")
        assert po.batch_sizes.dtype == ot.int64
        for name in ("sorted_indices", "unsorted_indices"):
            t, o = getattr(pt, name), getattr(po, name)
            assert (o is None) == (t is None)
            if o is not None:
                assert o.tolist() == t.tolist() and o.device == ot.device(device)
        for kw in (dict(), dict(padding_value=-7.0, total_length=7)):
            pad_t, len_t = tr.pad_packed_sequence(pt, batch_first=batch_first, **kw)
            pad_o, len_o = R.pad_packed_sequence(po, batch_first=batch_first, **kw)
            np.testing.assert_allclose(N(pad_o), pad_t.detach().numpy(), **F32)
            assert len_o.tolist() == len_t.tolist()
    seqs = [rng.standard_normal((n, 2)) for n in lengths]
    st = [torch.tensor(s, requires_grad=True) for s in seqs]
    so = [ot.tensor(s, dtype=ot.float32, device=device, requires_grad=True) for s in seqs]
    for side in ("right", "left"):
        pt = tr.pad_sequence(st, batch_first=batch_first, padding_value=3.0, padding_side=side)
        po = R.pad_sequence(so, batch_first=batch_first, padding_value=3.0, padding_side=side)
        np.testing.assert_allclose(N(po), pt.detach().numpy(), **F32)
    w = rng.standard_normal(tuple(pt.shape))
    (pt * torch.tensor(w)).sum().backward()
    (po * ot.tensor(w, dtype=ot.float32, device=device)).sum().backward()
    for a_, b_ in zip(st, so):
        np.testing.assert_allclose(N(b_.grad), a_.grad.numpy(), **F32)
    pk_t = tr.pack_sequence(st, enforce_sorted=False)
    pk_o = R.pack_sequence(so, enforce_sorted=False)
    np.testing.assert_allclose(N(pk_o.data), pk_t.data.detach().numpy(), **F32)
    for a_, b_ in zip(tr.unpack_sequence(pk_t), R.unpack_sequence(pk_o)):
        np.testing.assert_allclose(N(b_), a_.detach().numpy(), **F32)
    padded_t = tr.pad_sequence(st, batch_first=batch_first)
    padded_o = R.pad_sequence(so, batch_first=batch_first)
    for a_, b_ in zip(tr.unpad_sequence(padded_t, torch.tensor(lengths), batch_first),
                      R.unpad_sequence(padded_o, ot.tensor(lengths), batch_first)):
        np.testing.assert_allclose(N(b_), a_.detach().numpy(), **F32)


def test_packed_sequence_is_a_namedtuple_that_moves(device):
    seqs = [ot.ones((3, 2)), ot.ones((1, 2)), ot.ones((2, 2))]
    packed = R.pack_sequence(seqs, enforce_sorted=False)
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert batch_sizes.tolist() == [3, 2, 1] and sorted_indices.tolist() == [0, 2, 1]
    assert unsorted_indices.tolist() == [0, 2, 1]
    assert packed._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    moved = packed.to(device)
    assert moved.data.device == ot.device(device)
    assert moved.sorted_indices.device == ot.device(device)
    assert moved.batch_sizes.device == ot.device("cpu")
    assert packed.double().data.dtype == ot.float64 or not ot.device("cpu").supports_dtype(
        ot.float64)
    assert not packed.is_cuda
    assert R.invert_permutation(None) is None
    assert R.invert_permutation(ot.tensor([2, 0, 1])).tolist() == [1, 2, 0]
