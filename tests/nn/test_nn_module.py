"""nn.Module, Parameter and the containers: registration, traversal, state dicts, modes,
device/dtype moves, hooks, repr, copies."""
import copy
from collections import OrderedDict

import numpy as np
import pytest

import omnitensor as ot
from omnitensor import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.bn = nn.BatchNorm1d(4)
        self.fc2 = nn.Linear(4, 2, bias=False)
        self.scale = nn.Parameter(ot.ones(1))
        self.register_buffer("steps", ot.zeros((), dtype=ot.int64))
        self.register_buffer("cache", ot.zeros(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.bn(self.act(self.fc1(x)))) * self.scale


def test_parameter_is_a_leaf_tensor_sharing_storage():
    t = ot.arange(3.0)
    p = nn.Parameter(t)
    assert isinstance(p, ot.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf
    with ot.no_grad():
        p.mul_(2)
    assert t.tolist() == [0.0, 2.0, 4.0]          # same storage, as torch
    assert type(p * 1) is ot.Tensor               # ops return plain tensors
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert not nn.Parameter(ot.ones(2), requires_grad=False).requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(ot.arange(3))
    assert nn.Parameter().shape == (0,)


def test_registration_order_and_names():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight"]
    assert [n for n, _ in net.named_buffers()] == [
        "steps", "cache", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "bn", "fc2"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "bn", "fc2"]
    assert len(list(net.parameters(recurse=False))) == 1
    assert net.get_submodule("bn") is net.bn and net.get_parameter("fc1.bias") is net.fc1.bias
    assert net.get_buffer("bn.running_var") is net.bn.running_var
    assert "fc1" in dir(net) and "scale" in dir(net)


def test_shared_parameters_counted_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]


def test_setattr_rules():
    m = nn.Module()
    with pytest.raises(AttributeError, match="before Module.__init__"):
        nn.Linear.__new__(nn.Linear).weight = nn.Parameter(ot.ones(1))
    m.p = nn.Parameter(ot.ones(2))
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'p'"):
        m.p = ot.ones(2)
    m.p = None                                   # an absent optional parameter
    assert m.p is None and list(m.parameters()) == []
    m.register_buffer("b", ot.ones(1))
    m.b = ot.zeros(1)                            # buffers take plain tensors
    assert m.b.item() == 0.0
    with pytest.raises(TypeError):
        m.b = 3
    m.child = nn.ReLU()
    m.child = nn.Tanh()                          # replacing a child is fine
    with pytest.raises(TypeError):
        m.child = 3
    del m.child
    assert not hasattr(m, "child")
    with pytest.raises(KeyError, match="contain"):
        m.register_buffer("a.b", ot.ones(1))
    with pytest.raises(AttributeError, match="has no attribute 'missing'"):
        _ = m.missing


def test_state_dict_keys_and_sharing():
    net = Net()
    sd = net.state_dict()
    assert list(sd) == ["scale", "steps", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias",
                        "bn.running_mean", "bn.running_var", "bn.num_batches_tracked",
                        "fc2.weight"]
    assert "cache" not in sd                     # non-persistent buffer
    assert not sd["fc1.weight"].requires_grad     # detached, storage shared
    with ot.no_grad():
        net.fc1.weight.fill_(3.0)
    assert float(sd["fc1.weight"][0, 0]) == 3.0
    assert net.state_dict(keep_vars=True)["fc1.weight"] is net.fc1.weight


def test_load_state_dict_roundtrip_and_strict_errors():
    a, b = Net(), Net()
    b.load_state_dict(a.state_dict())
    for (n1, p1), (n2, p2) in zip(a.state_dict().items(), b.state_dict().items()):
        assert n1 == n2 and np.array_equal(p1.numpy(), p2.numpy())
    sd = a.state_dict()
    del sd["fc1.bias"]
    sd["extra.weight"] = ot.ones(1)
    with pytest.raises(RuntimeError) as e:
        b.load_state_dict(sd)
    msg = str(e.value)
    assert "Error(s) in loading state_dict for Net" in msg
    assert 'Missing key(s) in state_dict: "fc1.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "extra.weight"' in msg
    res = b.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["fc1.bias"] and res.unexpected_keys == ["extra.weight"]
    bad = a.state_dict()
    bad["fc1.weight"] = ot.ones(5, 3)
    with pytest.raises(RuntimeError, match=r"size mismatch for fc1.weight: copying a param "
                                           r"with shape \(5, 3\) from checkpoint, the shape "
                                           r"in current model is \(4, 3\)"):
        b.load_state_dict(bad, strict=False)
    assert repr(b.load_state_dict(a.state_dict())) == "<All keys matched successfully>"


def test_load_state_dict_assign_and_dtype_cast():
    m = nn.Linear(2, 2)
    sd = {"weight": ot.ones(2, 2, dtype=ot.float64), "bias": ot.zeros(2)}
    m.load_state_dict(sd)                         # copy_ casts to the parameter's dtype
    assert m.weight.dtype is ot.float32 and float(m.weight.sum()) == 4.0
    new_w = ot.full((2, 2), 5.0)
    m.load_state_dict({"weight": new_w, "bias": ot.zeros(2)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and float(m.weight[0, 0]) == 5.0


def test_train_eval_propagate():
    net = Net()
    assert net.training and net.bn.training
    net.eval()
    assert not net.training and not net.bn.training and not net.fc1.training
    net.train()
    assert net.bn.training
    with pytest.raises(ValueError):
        net.train("yes")


def test_zero_grad_and_requires_grad(device):
    net = Net().to(device)
    net(ot.randn(5, 3, device=device)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_to_device_keeps_parameter_identity(device):
    net = Net()
    params = list(net.parameters())
    out = net.to(device)
    assert out is net
    assert [id(p) for p in net.parameters()] == [id(p) for p in params]
    assert all(p.device == ot.device(device) for p in net.parameters())
    assert all(b.device == ot.device(device) for b in net.buffers())
    assert all(isinstance(p, nn.Parameter) for p in net.parameters())
    y = net(ot.randn(4, 3, device=device))
    assert y.device == ot.device(device)
    net.cpu()
    assert net.fc1.weight.device == ot.device("cpu")


def test_to_dtype_only_casts_floats(device):
    if not ot.device(device).supports_dtype(ot.float64):
        pytest.skip("no float64")
    net = Net().to(device, ot.float64)
    assert net.fc1.weight.dtype is ot.float64 and net.bn.running_mean.dtype is ot.float64
    assert net.steps.dtype is ot.int64 and net.bn.num_batches_tracked.dtype is ot.int64
    net.float()
    assert net.fc1.weight.dtype is ot.float32
    net.double()
    assert net.fc2.weight.dtype is ot.float64
    with pytest.raises(TypeError, match="floating point"):
        net.to(ot.int32)


def test_apply_children_first():
    seen = []
    seq = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU()))
    seq.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Sequential", "Sequential"]

    def init(m):
        if isinstance(m, nn.Linear):
            nn.init.constant_(m.weight, 0.5)
    seq.apply(init)
    assert float(seq[0].weight.item()) == 0.5


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append(out.shape))
    h3 = lin.register_forward_hook(lambda m, args, out: out + 1)
    y = lin(ot.ones(3, 2))
    np.testing.assert_allclose(y.detach().numpy(), (lin.bias + 1).detach().numpy()[None]
                               .repeat(3, 0), rtol=1e-6)
    assert calls == [(3, 2)]
    h1.remove(), h2.remove(), h3.remove()
    y2 = lin(ot.ones(3, 2))
    assert calls == [(3, 2)] and not np.allclose(y2.detach().numpy(), y.detach().numpy())
    seen = {}
    h = lin.register_forward_hook(lambda m, a, kw, out: seen.update(kw), with_kwargs=True)
    lin(input=ot.ones(1, 2))
    assert "input" in seen
    h.remove()
    order = []
    lin.register_forward_hook(lambda *a: order.append("a"))
    lin.register_forward_hook(lambda *a: order.append("b"), prepend=True)
    lin(ot.ones(1, 2))
    assert order == ["b", "a"]


def test_forward_hook_always_call_on_error():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    m = Boom()
    seen = []
    m.register_forward_hook(lambda mod, a, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(1)
    assert seen == [None]


def test_missing_forward():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


def test_repr_torch_style():
    seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Sequential(nn.Dropout(0.25)))
    assert repr(seq) == (
        "Sequential(\n"
        "  (0): Linear(in_features=4, out_features=8, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Sequential(\n"
        "    (0): Dropout(p=0.25, inplace=False)\n"
        "  )\n"
        ")")
    assert repr(nn.ModuleList([nn.Tanh(), nn.Tanh(), nn.ReLU()])) == (
        "ModuleList(\n  (0-1): 2 x Tanh()\n  (2): ReLU()\n)")


def test_repr_matches_torch():
    torch = pytest.importorskip("torch")

    def build(m):
        return m.Sequential(m.Conv2d(1, 16, 3, padding=1), m.BatchNorm2d(16), m.ReLU(),
                            m.MaxPool2d(2), m.Flatten(), m.Linear(256, 10), m.LayerNorm(10),
                            m.GELU(), m.Dropout(0.1), m.Embedding(5, 3, padding_idx=0))
    assert repr(build(nn)) == repr(build(torch.nn))


def test_deepcopy_is_independent():
    net = Net()
    twin = copy.deepcopy(net)
    assert twin.fc1.weight is not net.fc1.weight
    assert isinstance(twin.fc1.weight, nn.Parameter)
    np.testing.assert_array_equal(twin.fc1.weight.detach().numpy(),
                                  net.fc1.weight.detach().numpy())
    with ot.no_grad():
        twin.fc1.weight.fill_(0)
    assert float(net.fc1.weight.abs().sum()) > 0


def test_sequential_container_ops():
    a, b, c = nn.Linear(1, 1), nn.ReLU(), nn.Tanh()
    s = nn.Sequential(a, b)
    s.append(c)
    assert len(s) == 3 and s[-1] is c and list(s) == [a, b, c]
    assert isinstance(s[1:], nn.Sequential) and list(s[1:]) == [b, c]
    del s[1]
    assert list(s._modules) == ["0", "1"] and s[1] is c
    s.insert(1, b)
    assert list(s) == [a, b, c]
    named = nn.Sequential(OrderedDict([("lin", a), ("act", b)]))
    assert named.lin is a and [n for n, _ in named.named_children()] == ["lin", "act"]
    x = ot.ones(2, 1)
    assert np.allclose(named(x).detach().numpy(), b(a(x)).detach().numpy())


def test_modulelist_and_moduledict():
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(ml) == 3 and len(list(ml.parameters())) == 6
    ml.append(nn.ReLU())
    ml.extend([nn.Tanh()])
    assert isinstance(ml[-1], nn.Tanh) and isinstance(ml[1:3], nn.ModuleList)
    ml.insert(0, nn.Sigmoid())
    assert isinstance(ml[0], nn.Sigmoid) and len(ml) == 6
    del ml[0]
    assert [n for n, _ in ml.named_children()] == ["0", "1", "2", "3", "4"]
    md = nn.ModuleDict({"a": nn.Linear(1, 1)})
    md["b"] = nn.ReLU()
    md.update([("c", nn.Tanh())])
    assert list(md.keys()) == ["a", "b", "c"] and "b" in md and len(md) == 3
    assert md.pop("b").__class__ is nn.ReLU and "b" not in md
    pl = nn.ParameterList([nn.Parameter(ot.ones(1)), ot.zeros(2)])
    assert len(list(pl.parameters())) == 2 and isinstance(pl[1], nn.Parameter)
    pd = nn.ParameterDict({"w": ot.ones(2)})
    assert isinstance(pd["w"], nn.Parameter) and list(pd.state_dict()) == ["w"]
    pd.update([("b", ot.zeros(3))])
    assert list(pd.keys()) == ["w", "b"] and len(pd) == 2 and "b" in pd
    assert [tuple(v.shape) for v in pd.values()] == [(2,), (3,)]
    assert pd.pop("w").shape == (2,) and list(pd) == ["b"]
    pd.clear()
    assert len(pd) == 0 and not list(pd.parameters())
    with pytest.raises(ValueError, match="ModuleDict update sequence element #0 has length 3"):
        md.update([("x", nn.ReLU(), 1)])


def test_full_backward_hooks_match_torch(device):
    torch = pytest.importorskip("torch", reason="compared with PyTorch")
    import numpy as np

    def build(lib_nn):
        class Block(lib_nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib_nn.Linear(3, 2)

            def forward(self, x, scale):
                return (self.lin(x) * scale).tanh(), x.sum()
        return Block()

    w = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], np.float32)
    x_np = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    results = {}
    for lib in ("ot", "torch"):
        mod = build(nn if lib == "ot" else torch.nn)
        t = ot if lib == "ot" else torch
        with (ot.no_grad() if lib == "ot" else torch.no_grad()):
            mod.lin.weight.copy_(t.tensor(w))
            mod.lin.bias.zero_()
        if lib == "ot":
            mod = mod.to(device)
        seen = []

        def hook(m, gi, go):
            seen.append(("hook", [g.tolist() for g in gi], [g.tolist() for g in go]))  # noqa: B023 - runs within this iteration
            return (gi[0] * 3, gi[1])

        def pre(m, go):
            seen.append(("pre", [None if g is None else g.tolist() for g in go]))  # noqa: B023 - runs within this iteration
        h1 = mod.register_full_backward_hook(hook)
        mod.register_full_backward_pre_hook(pre)
        kw = {"device": device} if lib == "ot" else {}
        x = t.tensor(x_np, requires_grad=True, **kw)
        s = t.tensor(2.0, requires_grad=True, **kw)
        a, b = mod(x, s)
        (a.sum() + b * 0.5).backward()
        results[lib] = (list(seen), x.grad.tolist(), s.grad.item())
        h1.remove()
        seen.clear()
        x.grad = None
        a, b = mod(x, s)
        a.sum().backward()
        assert [e[0] for e in seen] == ["pre"]  # the removed hook no longer runs
        assert seen[0][1][1] is None  # b got no gradient: None, as in torch
    (seen_o, gx_o, gs_o), (seen_t, gx_t, gs_t) = results["ot"], results["torch"]
    assert [e[0] for e in seen_o] == [e[0] for e in seen_t] == ["pre", "hook"]
    np.testing.assert_allclose(gx_o, gx_t, rtol=1e-5, atol=1e-6)   # scaled by the hook
    np.testing.assert_allclose(gs_o, gs_t, rtol=1e-5)
    np.testing.assert_allclose(seen_o[1][1][0], seen_t[1][1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(seen_o[1][2][0], seen_t[1][2][0], rtol=1e-5, atol=1e-6)


def test_full_backward_hooks_without_torch(device):
    """The hooks see d(loss)/d(outputs) and d(loss)/d(inputs) and can replace the latter."""
    import numpy as np

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)

        def forward(self, x, scale):
            return (self.lin(x) * scale).tanh(), x.sum()
    mod = Block().to(device)
    x = ot.tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, device=device,
                  requires_grad=True)
    s = ot.tensor(2.0, device=device, requires_grad=True)
    a, b = mod(x, s)
    (a.sum() + b * 0.5).backward()
    plain_x, plain_s = x.grad.tolist(), s.grad.item()
    x.grad = s.grad = None
    seen = {}

    def hook(m, gi, go):
        seen["gi"], seen["go"] = gi, go
        return (gi[0] * 3, gi[1])
    def pre(m, go):
        seen["pre"] = len(go)
    mod.register_full_backward_hook(hook)
    handle = mod.register_full_backward_pre_hook(pre)
    a, b = mod(x, s)
    (a.sum() + b * 0.5).backward()
    assert seen["pre"] == 2 and seen["go"][0].tolist() == [[1.0, 1.0]] * 4
    assert seen["go"][1].item() == 0.5
    np.testing.assert_allclose(seen["gi"][0].tolist(), plain_x, rtol=1e-6)
    np.testing.assert_allclose(x.grad.tolist(), np.array(plain_x) * 3, rtol=1e-6)
    assert abs(s.grad.item() - plain_s) < 1e-5
    handle.remove()
    mod.register_full_backward_pre_hook(lambda m, go: 2)  # not gradients: a clear error
    a, b = mod(x, s)
    with pytest.raises(RuntimeError, match="pre-hook .* must return None or 2 gradients"):
        (a.sum() + b).backward()
