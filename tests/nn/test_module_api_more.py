"""torch's nn.Module API beyond the basics, as libraries use it (gpytorch, pyro, timm...):
state-dict pre/post hooks in public and private forms, per-module ``_metadata`` versions,
extra state, load pre hooks, set_submodule, to_empty, in-place compile, the deprecated
backward hook and the private call entry points. Each behaviour is checked against real
torch running the same code."""
from __future__ import annotations

import pytest

import omnitensor as ot
from omnitensor import nn

torch = pytest.importorskip("torch")


def _both(build):
    """The same program over omnitensor and over torch: their results."""
    return build(ot, nn), build(torch, torch.nn)


def _hooks_program(lib, lnn):
    calls = []

    class Net(lnn.Module):
        _version = 3

        def __init__(self):
            super().__init__()
            self.lin = lnn.Linear(2, 2)
            self.counter = 0

        def get_extra_state(self):
            return {"counter": self.counter}

        def set_extra_state(self, state):
            self.counter = state["counter"]

    net = Net()
    net.counter = 7
    net.register_state_dict_pre_hook(lambda m, prefix, keep_vars: calls.append(("pre", prefix)))
    net.lin.register_state_dict_post_hook(
        lambda m, sd, prefix, meta: calls.append(("post", prefix, sorted(sd), meta["version"])))

    def rename(m, sd, prefix, meta):  # the private form may return the dict
        sd[prefix + "extra_key"] = lib.zeros(1)
        return sd
    handle = net._register_state_dict_hook(rename)
    sd = net.state_dict()
    handle.remove()
    versions = {k: v["version"] for k, v in sd._metadata.items()}
    seen = []

    def pre_load(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        seen.append((type(module).__name__, prefix, local_metadata.get("version")))
        state_dict.pop(prefix + "extra_key", None)
    net.register_load_state_dict_pre_hook(pre_load)
    net.lin._register_load_state_dict_pre_hook(
        lambda sd, prefix, meta, *rest: seen.append(("lin", prefix, meta.get("version"))))
    posts = []
    net.lin.register_load_state_dict_post_hook(lambda m, keys: posts.append(type(m).__name__))
    fresh = Net()
    fresh.register_load_state_dict_pre_hook(pre_load)
    result = fresh.load_state_dict(sd)
    return dict(keys=sorted(sd), extra=sd["_extra_state"], versions=versions, calls=calls,
                counter=fresh.counter, seen=seen, result=(result.missing_keys,
                                                          result.unexpected_keys))


def test_state_dict_hooks_metadata_and_extra_state_as_torch():
    mine, theirs = _both(_hooks_program)
    assert mine == theirs


def test_public_post_hook_must_not_return_a_value():
    for lnn in (nn, torch.nn):
        m = lnn.Linear(1, 1)
        m.register_state_dict_post_hook(lambda *a: {})
        with pytest.raises(RuntimeError, match="must return None"):
            m.state_dict()


def test_missing_extra_state_is_a_missing_key():
    class WithExtra(nn.Module):
        def get_extra_state(self):
            return 1

        def set_extra_state(self, s):
            pass
    with pytest.raises(RuntimeError, match="_extra_state"):
        WithExtra().load_state_dict({})


def test_set_submodule_to_empty_compile_and_call_entry_points(device):
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    net.set_submodule("1", nn.Tanh())
    assert isinstance(net[1], nn.Tanh)
    with pytest.raises(AttributeError):
        net.set_submodule("7", nn.Tanh(), strict=True)
    with pytest.raises(ValueError, match="not an nn.Module"):
        net.set_submodule("1", 3)
    moved = nn.Linear(3, 2).to_empty(device=device)
    assert moved.weight.device == ot.device(device) and moved.weight.shape == (2, 3)
    net = net.to(device)
    x = ot.randn(5, 3, device=device)
    eager = net(x)
    assert ot.allclose(net._call_impl(x), eager) and ot.allclose(net._slow_forward(x), eager)
    net.compile()
    assert ot.allclose(net(x), eager, atol=1e-6)


def test_deprecated_backward_hook_sees_the_input_gradient():
    lin = nn.Linear(3, 1, bias=False)
    got = []
    with pytest.warns(FutureWarning):
        lin.register_backward_hook(lambda m, gi, go: got.append(gi[0]))
    x = ot.ones(2, 3, requires_grad=True)
    lin(x).sum().backward()
    assert got and ot.allclose(got[0], x.grad)


def test_softplus_gradient_at_zero_is_one_half(device):
    """softplus' slope is sigmoid(beta x) everywhere, 1/2 at 0 (the split stable form gave 1
    there: gpytorch's Positive constraint at its default raw value 0 doubled every
    hyperparameter gradient)."""
    x = ot.tensor([0.0, -3.0, 2.0, -800.0, 30.0], device=device, requires_grad=True)
    nn.functional.softplus(x).sum().backward()
    t = torch.tensor([0.0, -3.0, 2.0, -800.0, 30.0], requires_grad=True)
    torch.nn.functional.softplus(t).sum().backward()
    assert ot.allclose(x.grad.cpu(), ot.tensor(t.grad.numpy()), atol=1e-6)
