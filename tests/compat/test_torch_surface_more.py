"""The torch surface Hugging Face transformers reaches for, on the torch face (what
``import torch`` is under as_torch), against real torch: saved-tensor hooks, custom
operators and ``torch.ops``, flex attention and ``sdpa_kernel``, ``nn.Buffer``, and the
device and dtype names that exist only to be compared (tensors on them are refused)."""
import math

import numpy as np
import pytest

import omnitensor.torch_face as ot_torch
from omnitensor.errors import BackendUnavailableError, UnsupportedDTypeError

torch = pytest.importorskip("torch")

import omnitensor.autograd.graph  # noqa: E402 - torch.autograd.graph on the face
import omnitensor.library  # noqa: E402,F401 - torch.library on the face
import omnitensor.nn.attention.flex_attention as ot_flex  # noqa: E402
from torch.nn.attention import flex_attention as torch_flex  # noqa: E402

RNG = np.random.default_rng(3)


def _grad(t):
    return t.grad.cpu().numpy() if hasattr(t.grad, "cpu") else t.grad.numpy()


def _numpy(t):
    return t.detach().cpu().numpy()


# -------------------------------------------------------------- saved-tensor hooks
def _program(T, x):
    return ((x * x).sin() * x.exp()).sum()


def _run_with_hooks(T, data, device=None):
    """(the tensors packed, the number of unpacks, the output, x's gradient) of _program
    run under hooks that store a copy of each saved tensor and unpack it doubled."""
    kw = {"device": device} if device is not None else {}
    x = T.tensor(data, dtype=T.float64, requires_grad=True, **kw)
    packed, unpacked = [], []

    def pack(t):
        packed.append(_numpy(t))
        return ("copy", t.detach().clone())

    def unpack(p):
        assert p[0] == "copy"
        unpacked.append(1)
        return p[1] * 2.0

    with T.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = _program(T, x)
    y.backward()
    return packed, len(unpacked), _numpy(y), _grad(x)


def test_saved_tensors_hooks_pack_and_unpack_as_torch(device):
    data = [0.3, -1.2, 2.0]
    ours = _run_with_hooks(ot_torch, data, device)
    theirs = _run_with_hooks(torch, data)
    assert len(ours[0]) >= 3 and ours[1] == len(ours[0])  # every saved tensor came back
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    # the gradient is computed from what unpack returned (doubled saved tensors)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12)
    plain = ot_torch.tensor(data, dtype=ot_torch.float64, requires_grad=True, device=device)
    _program(ot_torch, plain).backward()
    assert not np.allclose(_grad(plain), ours[3])
    # the packed values: the tensors the formulas need (x, and x*x for sin)
    flat = np.concatenate([p.ravel() for p in ours[0]])
    assert np.isclose(flat, 0.3 * 0.3).any() and np.isclose(flat, -1.2).any()


def test_hooks_apply_only_inside_the_block(device):
    calls = []
    x = ot_torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    with ot_torch.autograd.graph.saved_tensors_hooks(lambda t: calls.append(t) or t,
                                                     lambda t: t):
        pass
    (x * x).sum().backward()
    assert calls == []
    np.testing.assert_allclose(_grad(x), [2.0, 4.0])


def test_save_on_cpu_keeps_saved_tensors_on_the_host(device):
    x = ot_torch.tensor([0.5, 1.5, -2.0], dtype=ot_torch.float64, requires_grad=True,
                        device=device)
    seen = []
    hooks = ot_torch.autograd.graph.save_on_cpu(pin_memory=False)
    pack, unpack = hooks.pack_hook, hooks.unpack_hook

    def spy_pack(t):
        packed = pack(t)
        seen.append(str(packed[1].device))
        return packed

    hooks.pack_hook = spy_pack
    with hooks:
        y = (x.exp() * x).tanh().sum()
    y.backward()
    assert seen and set(seen) == {"cpu"}
    tx = torch.tensor([0.5, 1.5, -2.0], dtype=torch.float64, requires_grad=True)
    with torch.autograd.graph.save_on_cpu():
        (tx.exp() * tx).tanh().sum().backward()
    assert str(x.grad.device) == str(x.device)
    np.testing.assert_allclose(_grad(x), tx.grad.numpy(), rtol=1e-10)
    assert unpack((x.device, ot_torch.ones(2))).device == x.device


def test_disable_saved_tensors_hooks_refuses_hooks_with_its_message(device):
    graph = ot_torch.autograd.graph
    with graph.disable_saved_tensors_hooks("hooks are off in this block"):
        with pytest.raises(RuntimeError, match="hooks are off in this block"):
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # allowed again after it
        x = ot_torch.tensor([3.0], requires_grad=True, device=device)
        (x * x).sum().backward()
    np.testing.assert_allclose(_grad(x), [6.0])


# ------------------------------------------------------------ custom operators, torch.ops
def _define_scaled_sin(T, qualname):
    @T.library.custom_op(qualname, mutates_args=())
    def scaled_sin(x: T.Tensor, k: float) -> T.Tensor:
        return x.sin() * k

    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.save_for_backward(x)
        ctx.k = k

    def backward(ctx, grad):  # deliberately not the true derivative: 10x it
        (x,) = ctx.saved_tensors
        return grad * x.cos() * ctx.k * 10.0, None

    scaled_sin.register_autograd(backward, setup_context=setup_context)
    return scaled_sin


def test_custom_op_with_registered_autograd_and_torch_ops(device):
    tag = device.replace(":", "_")
    ns = f"otsurf_{tag}"
    ours_op = _define_scaled_sin(ot_torch, f"{ns}::scaled_sin")
    _define_scaled_sin(torch, f"{ns}::scaled_sin")
    data = [0.1, 0.5, 2.0]
    x = ot_torch.tensor(data, dtype=ot_torch.float64, requires_grad=True, device=device)
    tx = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    y = getattr(ot_torch.ops, ns).scaled_sin(x, 3.0)
    ty = getattr(torch.ops, ns).scaled_sin(tx, 3.0)
    np.testing.assert_allclose(_numpy(y), 3.0 * np.sin(data), rtol=1e-12)
    np.testing.assert_allclose(_numpy(y), ty.detach().numpy(), rtol=1e-12)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(_grad(x), 30.0 * np.cos(data), rtol=1e-12)  # the registered one
    np.testing.assert_allclose(_grad(x), tx.grad.numpy(), rtol=1e-12)
    assert str(x.grad.device) == str(x.device)
    assert ours_op(x.detach(), 2.0).requires_grad is False
    with pytest.raises(AttributeError, match="no_such_op"):
        _ = getattr(ot_torch.ops, ns).no_such_op


def test_custom_op_without_autograd_differentiates_through_its_ops(device):
    ns = f"otsurf_plain_{device.replace(':', '_')}"

    @ot_torch.library.custom_op(f"{ns}::cube_plus", mutates_args=())
    def cube_plus(x: ot_torch.Tensor, c: float) -> ot_torch.Tensor:
        return x * x * x + c

    x = ot_torch.tensor([1.0, -2.0], dtype=ot_torch.float64, requires_grad=True, device=device)
    getattr(ot_torch.ops, ns).cube_plus(x, 1.5).sum().backward()
    np.testing.assert_allclose(_grad(x), [3.0, 12.0])
    with pytest.raises(ValueError, match="mylib::my_op"):
        ot_torch.library.custom_op("no_namespace", lambda x: x)


# ---------------------------------------------------------------- attention
B, H, L, E = 2, 3, 12, 8


def _qkv():
    return [RNG.normal(size=(B, H, L, E)) for _ in range(3)]


def _score_mod(score, b, h, q_idx, kv_idx):
    # binary fractions: the bias is exact in float32, where torch computes index products
    return score + (q_idx - kv_idx) * 0.125 * (h + 1) - 0.25 * b


def _causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def _dense_reference(q, k, v):
    """torch's sdpa with the score_mod's bias and the causal mask as an additive mask."""
    qi = torch.arange(L).view(1, 1, L, 1)
    ki = torch.arange(L).view(1, 1, 1, L)
    h = torch.arange(H).view(1, H, 1, 1)
    b = torch.arange(B).view(B, 1, 1, 1)
    bias = ((qi - ki) * 0.125 * (h + 1) - 0.25 * b).to(torch.float64)
    bias = bias.masked_fill(~(qi >= ki), -math.inf)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)


@pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")
def test_flex_attention_with_score_mod_and_block_mask_matches_torch(device):
    q, k, v = _qkv()
    ours = [ot_torch.tensor(a, requires_grad=True, device=device) for a in (q, k, v)]
    mask = ot_flex.create_block_mask(_causal, B, H, L, L, device=device)
    out = ot_flex.flex_attention(*ours, score_mod=_score_mod, block_mask=mask)
    # real torch's own flex_attention (forward; its CPU path has no backward)
    tmask = torch_flex.create_block_mask(_causal, B, H, L, L, device="cpu")
    want = torch_flex.flex_attention(*(torch.tensor(a) for a in (q, k, v)),
                                     score_mod=_score_mod, block_mask=tmask)
    np.testing.assert_allclose(_numpy(out), want.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(mask.to_dense().cpu().numpy(),
                                  torch_flex.create_mask(_causal, B, H, L, L).numpy())
    # gradients against a dense sdpa with the same bias and mask
    theirs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    ref = _dense_reference(*theirs)
    np.testing.assert_allclose(_numpy(out), ref.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = RNG.normal(size=(B, H, L, E))
    (out * ot_torch.tensor(w, device=device)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(_grad(o), t.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")
def test_flex_attention_lse_and_fully_masked_rows(device):
    q, k, v = _qkv()
    ours = [ot_torch.tensor(a, device=device) for a in (q, k, v)]

    def late_keys(b, h, q_idx, kv_idx):  # query row 0 sees no key
        return (kv_idx < q_idx) | (q_idx > 0) & (kv_idx == 0)

    mask = ot_flex.create_block_mask(late_keys, None, None, L, L, device=device)
    out, lse = ot_flex.flex_attention(*ours, block_mask=mask, return_lse=True)
    tmask = torch_flex.create_block_mask(late_keys, None, None, L, L, device="cpu")
    want, aux = torch_flex.flex_attention(*(torch.tensor(a) for a in (q, k, v)),
                                          block_mask=tmask,
                                          return_aux=torch_flex.AuxRequest(lse=True))
    want_lse = aux.lse
    out_aux, our_aux = ot_flex.flex_attention(*ours, block_mask=mask,
                                              return_aux=ot_flex.AuxRequest(lse=True))
    np.testing.assert_array_equal(_numpy(out_aux), _numpy(out))
    np.testing.assert_array_equal(_numpy(our_aux.lse), _numpy(lse))
    np.testing.assert_allclose(_numpy(out), want.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(_numpy(out)[:, :, 0], 0.0)
    got_lse = _numpy(lse)
    assert np.isneginf(got_lse[:, :, 0]).all()
    np.testing.assert_allclose(got_lse[:, :, 1:], want_lse.numpy()[:, :, 1:], rtol=1e-10)


def test_sdpa_kernel_selects_without_changing_results(device):
    from omnitensor.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = (ot_torch.tensor(a, device=device) for a in _qkv())
    F = ot_torch.nn.functional
    plain = _numpy(F.scaled_dot_product_attention(q, k, v, is_causal=True))
    for choice in (SDPBackend.MATH, [SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
        with sdpa_kernel(choice):
            inside = _numpy(F.scaled_dot_product_attention(q, k, v, is_causal=True))
        np.testing.assert_array_equal(inside, plain)
    tq, tk, tv = (torch.tensor(_numpy(t)) for t in (q, k, v))
    want = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    np.testing.assert_allclose(plain, want.numpy(), rtol=1e-10, atol=1e-12)
    assert {b.name: b.value for b in SDPBackend} == {
        n: int(b) for n, b in torch.nn.attention.SDPBackend.__members__.items()}
    with pytest.raises(TypeError, match="SDPBackend"):
        with sdpa_kernel("math"):
            pass


# ------------------------------------------------------------------ nn.Buffer
def _buffered_module(T):
    class WithBuffers(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = T.nn.Linear(2, 2)
            self.scale = T.nn.Buffer(T.ones(2) * 3.0)
            self.scratch = T.nn.Buffer(T.zeros(3), persistent=False)

        def forward(self, x):
            return self.lin(x) * self.scale

    return WithBuffers()


def test_nn_buffer_registers_a_buffer_as_torch(device):
    ours = _buffered_module(ot_torch)
    theirs = _buffered_module(torch)
    assert list(dict(ours.named_buffers())) == list(dict(theirs.named_buffers()))
    assert list(ours.state_dict()) == list(theirs.state_dict())  # scratch: not persistent
    assert "scale" not in dict(ours.named_parameters())
    assert isinstance(ours.scale, ot_torch.nn.Buffer) and isinstance(theirs.scale, torch.nn.Buffer)
    assert not isinstance(ot_torch.ones(2), ot_torch.nn.Buffer)
    ours.to(device)  # buffers move with the module (the moved copy is a plain tensor, as torch's)
    assert str(ours.scale.device) == str(ot_torch.device(device))
    assert ours.scale.requires_grad is False
    np.testing.assert_array_equal(_numpy(ours.scale), [3.0, 3.0])
    x = ot_torch.ones(1, 2, device=device)
    np.testing.assert_allclose(_numpy(ours(x)), _numpy(ours.lin(x)) * 3.0, rtol=1e-6)
    with pytest.raises(TypeError, match="expected a Tensor"):
        ot_torch.nn.Buffer([1.0, 2.0])


# ------------------------------------------------------- names that refuse tensors
@pytest.mark.parametrize("name", ["meta", "mps", "xpu"])
def test_named_only_devices_compare_and_refuse_tensors(name, device):
    d = ot_torch.device(name)
    assert d.type == name == torch.device(name).type
    assert d == ot_torch.device(name) and d != ot_torch.device("cpu")
    assert d != ot_torch.device(device)
    for make in (lambda: ot_torch.zeros(2, device=name),
                 lambda: ot_torch.tensor([1.0], device=d),
                 lambda: ot_torch.ones(2, device=device).to(name)):
        with pytest.raises(BackendUnavailableError, match=name) as info:
            make()
        assert isinstance(info.value, RuntimeError)
    hint = {"meta": "cpu", "mps": "cpu", "xpu": "sycl"}[name]
    with pytest.raises(RuntimeError, match=hint):
        ot_torch.empty(1, device=name)


FLOAT8 = ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
          "float8_e8m0fnu"]


@pytest.mark.parametrize("name", FLOAT8)
def test_float8_dtypes_are_named_and_tensors_refused(name, device):
    dt = getattr(ot_torch, name)
    assert hasattr(torch, name)
    assert dt == getattr(ot_torch, name) and dt.itemsize == getattr(torch, name).itemsize == 1
    assert all(dt != getattr(ot_torch, other) for other in FLOAT8 if other != name)
    assert dt != ot_torch.float16 and dt != ot_torch.bfloat16
    assert name in str(dt)
    for make in (lambda: ot_torch.zeros(2, dtype=dt, device=device),
                 lambda: ot_torch.tensor([1.0, 2.0], dtype=dt, device=device),
                 lambda: ot_torch.ones(2, device=device).to(dt)):
        with pytest.raises(UnsupportedDTypeError, match=name) as info:
            make()
        assert "bfloat16" in str(info.value)  # the alternative is named
        assert isinstance(info.value, TypeError)
