"""gradcheck (finite differences) of every functional op, on every device, in float64 where
the device has it; the fused single-node ops (linear, conv2d, pools, softmax, losses) also
by gradgradcheck, since their backward formulas are hand-written."""
import numpy as np
import pytest
from nn_helpers import T, check_grad, fdtype, rng

import omnitensor as ot
import omnitensor.nn.functional as F
from omnitensor.autograd import gradgradcheck


def _ins(device, *shapes, lo=-1.0, hi=1.0, seed=0):
    r = rng(seed)
    return [T(r.uniform(lo, hi, s), device, rg=True) for s in shapes]


IDX = np.array([0, 2, -100, 1])
PROBS = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.6, 0.2, 0.2], [1 / 3, 1 / 3, 1 / 3]])
CW = np.array([0.5, 2.0, 1.0])

# name: (fn(device) -> callable, input shapes, (lo, hi))
OPS = {
    "linear": (lambda d: F.linear, [(2, 3), (4, 3), (4,)], None),
    "linear_3d": (lambda d: F.linear, [(2, 1, 3), (2, 3)], None),
    "bilinear": (lambda d: F.bilinear, [(2, 2), (2, 3), (2, 2, 3), (2,)], None),
    "conv2d": (lambda d: lambda x, w, b: F.conv2d(x, w, b, 1, 1), [(1, 2, 3, 3), (2, 2, 2, 2),
                                                                  (2,)], None),
    "conv2d_strided_groups": (lambda d: lambda x, w: F.conv2d(x, w, None, 2, 1, (1, 2), 2),
                              [(1, 2, 4, 4), (2, 1, 2, 2)], None),
    "conv1d": (lambda d: lambda x, w: F.conv1d(x, w, stride=2, padding=1), [(1, 2, 4),
                                                                            (2, 2, 2)], None),
    "conv_transpose2d": (lambda d: lambda x, w, b: F.conv_transpose2d(x, w, b, 2, 1, 1),
                         [(1, 2, 2, 2), (2, 1, 3, 3), (1,)], None),
    "unfold": (lambda d: lambda x: F.unfold(x, 2, padding=1, stride=2), [(1, 2, 3, 3)], None),
    "fold": (lambda d: lambda x: F.fold(x, (3, 3), 2, padding=1, stride=2), [(1, 8, 4)], None),
    "max_pool2d": (lambda d: lambda x: F.max_pool2d(x, 2), [(1, 2, 4, 4)], None),
    "max_pool2d_overlap": (lambda d: lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
                           [(1, 1, 4, 4)], None),
    "avg_pool2d": (lambda d: lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
                   [(1, 1, 4, 4)], None),
    "adaptive_avg_pool2d": (lambda d: lambda x: F.adaptive_avg_pool2d(x, (2, 3)),
                            [(1, 1, 3, 4)], None),
    "batch_norm": (lambda d: lambda x, w, b: F.batch_norm(x, None, None, w, b, True),
                   [(3, 2, 2), (2,), (2,)], None),
    "layer_norm": (lambda d: lambda x, w, b: F.layer_norm(x, (3,), w, b), [(2, 3), (3,), (3,)],
                   None),
    "group_norm": (lambda d: lambda x, w, b: F.group_norm(x, 2, w, b), [(1, 4, 2), (4,), (4,)],
                   None),
    "softmax": (lambda d: lambda x: F.softmax(x, 1), [(2, 3)], None),
    "log_softmax": (lambda d: lambda x: F.log_softmax(x, 0), [(2, 3)], None),
    "relu": (lambda d: F.relu, [(2, 3)], (0.1, 1.0)),
    "leaky_relu": (lambda d: lambda x: F.leaky_relu(x, 0.2), [(2, 3)], None),
    "gelu": (lambda d: F.gelu, [(2, 3)], None),
    "gelu_tanh": (lambda d: lambda x: F.gelu(x, approximate="tanh"), [(2, 3)], None),
    "silu": (lambda d: F.silu, [(2, 3)], None),
    "softplus": (lambda d: F.softplus, [(2, 3)], None),
    "elu": (lambda d: F.elu, [(2, 3)], None),
    "logsigmoid": (lambda d: F.logsigmoid, [(2, 3)], None),
    "dropout_eval": (lambda d: lambda x: F.dropout(x, 0.5, training=False), [(2, 3)], None),
    "pad_reflect": (lambda d: lambda x: F.pad(x, (1, 2), mode="reflect"), [(2, 3)], None),
    "pad_constant": (lambda d: lambda x: F.pad(x, (1, 0, 0, 1), value=2.0), [(2, 3)], None),
    "embedding": (lambda d: lambda w: F.embedding(T(np.array([[0, 2], [2, 2]]), d), w,
                                                  padding_idx=1), [(3, 2)], None),
    "sdpa": (lambda d: F.scaled_dot_product_attention, [(1, 2, 2), (1, 3, 2), (1, 3, 2)], None),
    "sdpa_causal": (lambda d: lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True), [(1, 3, 2), (1, 3, 2), (1, 3, 2)], None),
    "mse_loss": (lambda d: F.mse_loss, [(2, 3), (2, 3)], None),
    "l1_loss": (lambda d: F.l1_loss, [(2, 3), (2, 3)], None),
    "huber_loss": (lambda d: lambda a, b: F.huber_loss(a, b, delta=0.5), [(2, 3), (2, 3)],
                   None),
    "smooth_l1_loss": (lambda d: lambda a, b: F.smooth_l1_loss(a, b, beta=0.5),
                       [(2, 3), (2, 3)], None),
    "cross_entropy": (lambda d: lambda x: F.cross_entropy(x, T(IDX, d)), [(4, 3)], None),
    "cross_entropy_full": (lambda d: lambda x: F.cross_entropy(
        x, T(IDX, d), weight=T(CW, d), label_smoothing=0.2), [(4, 3)], None),
    "cross_entropy_none": (lambda d: lambda x: F.cross_entropy(x, T(IDX, d), reduction="none"),
                           [(4, 3)], None),
    "cross_entropy_probs": (lambda d: lambda x: F.cross_entropy(x, T(PROBS, d),
                                                                label_smoothing=0.1),
                            [(4, 3)], None),
    "nll_loss": (lambda d: lambda x: F.nll_loss(x, T(IDX, d), weight=T(CW, d)), [(4, 3)],
                 None),
    "bce": (lambda d: lambda p: F.binary_cross_entropy(p, T(PROBS, d)), [(4, 3)], (0.1, 0.9)),
    "bce_with_logits": (lambda d: lambda x: F.binary_cross_entropy_with_logits(
        x, T(PROBS, d), pos_weight=T(CW, d)), [(4, 3)], None),
    "kl_div": (lambda d: lambda x: F.kl_div(x, T(PROBS, d), reduction="batchmean"), [(4, 3)],
               None),
}

# second derivatives of the hand-written backwards, on smaller inputs (gradgradcheck
# differentiates a vector-Jacobian product with respect to every input and grad_output)
DOUBLE = {
    "linear": [(2, 3), (2, 3), (2,)],
    "conv2d": [(1, 1, 3, 3), (1, 1, 2, 2), (1,)],
    "conv2d_strided_groups": [(1, 2, 3, 3), (2, 1, 2, 2)],
    "conv_transpose2d": [(1, 1, 2, 2), (1, 1, 2, 2), (1,)],
    "unfold": [(1, 1, 3, 3)],
    "fold": [(1, 4, 4)],
    "max_pool2d": [(1, 1, 2, 4)],
    "max_pool2d_overlap": [(1, 1, 3, 3)],
    "softmax": None, "log_softmax": None, "cross_entropy": None, "cross_entropy_full": None,
    "embedding": None,
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck(device, name):
    make, shapes, rng_ = OPS[name]
    lo, hi = rng_ or (-1.0, 1.0)
    inputs = _ins(device, *shapes, lo=lo, hi=hi)
    check_grad(make(device), inputs, device)


@pytest.mark.parametrize("name", sorted(DOUBLE))
def test_gradgradcheck(device, name):
    if fdtype(device) is not ot.float64:
        pytest.skip("second derivatives by finite differences need float64")
    make, shapes, rng_ = OPS[name]
    shapes = DOUBLE[name] or shapes
    lo, hi = rng_ or (-1.0, 1.0)
    inputs = _ins(device, *shapes, lo=lo, hi=hi, seed=3)
    assert gradgradcheck(make(device), inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


def test_batch_norm_eval_and_module_grads(device):
    rm, rv = T(rng().uniform(-1, 1, 2), device), T(rng().uniform(0.5, 2, 2), device)
    check_grad(lambda x, w: F.batch_norm(x, rm, rv, w, None, False), _ins(device, (3, 2), (2,)),
               device)
