"""Argument rules of convolutions, transposed convolutions and pools: every case is
accepted or rejected exactly as torch does, with the same output shape when accepted, and
the same clear error (ValueError family) on every device (the rules run in one place,
``nn/functional/_windows.py``, before any backend)."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

X2 = (1, 2, 8, 8)
W2 = (2, 2, 3, 3)

# (name, functional, input shape, weight shape or None, kwargs)
CASES = [
    ("conv2d_ok", "conv2d", X2, W2, {}),
    ("conv2d_neg_pad", "conv2d", X2, W2, {"padding": (-1, 0)}),
    ("conv2d_neg_pad_int", "conv2d", X2, W2, {"padding": -1}),
    ("conv2d_dilation0", "conv2d", X2, W2, {"dilation": 0}),
    ("conv2d_dilation_neg", "conv2d", X2, W2, {"dilation": (1, -2)}),
    ("conv2d_stride0", "conv2d", X2, W2, {"stride": 0}),
    ("conv2d_stride_neg", "conv2d", X2, W2, {"stride": (-1, 1)}),
    ("conv2d_kernel_too_big", "conv2d", X2, (2, 2, 9, 9), {}),
    ("conv2d_kernel_fits_with_pad", "conv2d", X2, (2, 2, 9, 9), {"padding": 1}),
    ("conv2d_dilated_too_big", "conv2d", X2, W2, {"dilation": 4}),
    ("conv2d_groups_weight", "conv2d", X2, (3, 2, 3, 3), {"groups": 2}),
    ("conv2d_groups_channels", "conv2d", (1, 3, 8, 8), (2, 1, 3, 3), {"groups": 2}),
    ("conv2d_groups_ok", "conv2d", X2, (2, 1, 3, 3), {"groups": 2}),
    ("conv2d_groups0", "conv2d", X2, (2, 1, 3, 3), {"groups": 0}),
    ("conv2d_channels", "conv2d", (1, 3, 8, 8), W2, {}),
    ("conv2d_rank_low", "conv2d", (8, 8), W2, {}),
    ("conv2d_rank_high", "conv2d", (1, 1, 2, 8, 8), W2, {}),
    ("conv2d_weight_rank", "conv2d", X2, (2, 2, 3), {}),
    ("conv2d_unbatched", "conv2d", (2, 8, 8), W2, {}),
    ("conv2d_same_stride2", "conv2d", X2, W2, {"padding": "same", "stride": 2}),
    ("conv2d_same", "conv2d", X2, (2, 2, 4, 3), {"padding": "same", "dilation": (1, 2)}),
    ("conv2d_valid", "conv2d", X2, W2, {"padding": "valid"}),
    ("conv2d_bad_string", "conv2d", X2, W2, {"padding": "full"}),
    ("conv2d_pad_len3", "conv2d", X2, W2, {"padding": (1, 2, 3)}),
    ("conv2d_stride_len3", "conv2d", X2, W2, {"stride": (1, 1, 1)}),
    ("conv2d_zero_batch", "conv2d", (0, 2, 8, 8), W2, {}),
    ("conv1d_neg_pad", "conv1d", (1, 2, 8), (2, 2, 3), {"padding": -1}),
    ("conv1d_dilation0", "conv1d", (1, 2, 8), (2, 2, 3), {"dilation": 0}),
    ("conv1d_ok", "conv1d", (1, 2, 8), (2, 2, 3), {"stride": 2, "padding": 1}),
    ("conv3d_ok", "conv3d", (1, 2, 5, 5, 5), (2, 2, 3, 3, 3), {"padding": 1, "stride": 2}),
    ("conv3d_neg_pad", "conv3d", (1, 2, 5, 5, 5), (2, 2, 3, 3, 3), {"padding": (0, -1, 0)}),
    ("conv3d_kernel_too_big", "conv3d", (1, 2, 2, 5, 5), (2, 2, 3, 3, 3), {}),
    ("convT2d_ok", "conv_transpose2d", X2, W2, {}),
    ("convT2d_stride2_op1", "conv_transpose2d", X2, W2, {"stride": 2, "output_padding": 1}),
    ("convT2d_op_ge_stride", "conv_transpose2d", X2, W2, {"output_padding": 1}),
    ("convT2d_op2_stride2", "conv_transpose2d", X2, W2, {"stride": 2, "output_padding": 2}),
    ("convT2d_op_lt_dilation", "conv_transpose2d", X2, W2, {"output_padding": 1,
                                                            "dilation": 2}),
    ("convT2d_neg_op", "conv_transpose2d", X2, W2, {"stride": 2, "output_padding": -1}),
    ("convT2d_neg_pad", "conv_transpose2d", X2, W2, {"padding": -1}),
    ("convT2d_big_pad", "conv_transpose2d", X2, W2, {"padding": 5}),
    ("convT2d_pad_shrinks", "conv_transpose2d", X2, W2, {"padding": 2, "stride": 3,
                                                         "output_padding": 2}),
    ("convT2d_stride0", "conv_transpose2d", X2, W2, {"stride": 0}),
    ("convT2d_dilation0", "conv_transpose2d", X2, W2, {"dilation": 0}),
    ("convT2d_groups", "conv_transpose2d", X2, (2, 3, 3, 3), {"groups": 2}),
    ("convT2d_groups_bad", "conv_transpose2d", (1, 3, 8, 8), (3, 1, 3, 3), {"groups": 2}),
    ("convT2d_channels", "conv_transpose2d", (1, 3, 8, 8), W2, {}),
    ("convT1d_ok", "conv_transpose1d", (1, 2, 8), (2, 3, 3), {"stride": 3, "padding": 1,
                                                              "output_padding": 2}),
    ("convT1d_neg_pad", "conv_transpose1d", (1, 2, 8), (2, 3, 3), {"padding": -1}),
    ("convT3d_ok", "conv_transpose3d", (1, 2, 3, 3, 3), (2, 1, 2, 2, 2), {"stride": 2}),
    ("maxpool_ok", "max_pool2d", X2, None, {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("maxpool_pad_gt_half", "max_pool2d", X2, None, {"kernel_size": 3, "padding": 2}),
    ("maxpool_stride0", "max_pool2d", X2, None, {"kernel_size": 3, "stride": 0}),
    ("maxpool_kernel0", "max_pool2d", X2, None, {"kernel_size": 0}),
    ("maxpool_neg_pad", "max_pool2d", X2, None, {"kernel_size": 3, "padding": -1}),
    ("maxpool_dilation0", "max_pool2d", X2, None, {"kernel_size": 2, "dilation": 0}),
    ("maxpool_kernel_too_big", "max_pool2d", X2, None, {"kernel_size": 9}),
    ("maxpool_ceil", "max_pool2d", X2, None, {"kernel_size": 3, "stride": 2,
                                              "ceil_mode": True}),
    ("maxpool_rank", "max_pool2d", (8, 8), None, {"kernel_size": 2}),
    ("maxpool1d_ok", "max_pool1d", (1, 2, 9), None, {"kernel_size": 2, "dilation": 2}),
    ("maxpool3d_ok", "max_pool3d", (1, 2, 4, 4, 4), None, {"kernel_size": 2}),
    ("maxpool3d_neg_pad", "max_pool3d", (1, 2, 4, 4, 4), None, {"kernel_size": 2,
                                                                "padding": -1}),
    ("avgpool_ok", "avg_pool2d", X2, None, {"kernel_size": 3, "padding": 1,
                                            "count_include_pad": False}),
    ("avgpool_pad_gt_half", "avg_pool2d", X2, None, {"kernel_size": 3, "padding": 2}),
    ("avgpool_stride0", "avg_pool2d", X2, None, {"kernel_size": 3, "stride": 0}),
    ("avgpool_kernel_too_big", "avg_pool2d", X2, None, {"kernel_size": 9}),
    ("avgpool3d_ok", "avg_pool3d", (1, 2, 4, 4, 4), None, {"kernel_size": 3, "stride": 1,
                                                           "padding": 1}),
    ("amax_ok", "adaptive_max_pool2d", X2, None, {"output_size": (3, 5)}),
    ("aavg_ok", "adaptive_avg_pool2d", X2, None, {"output_size": (3, None)}),
    ("aavg_rank", "adaptive_avg_pool2d", (8,), None, {"output_size": 2}),
]


def _run(mod, name, x, w, kw):
    fn = getattr(mod.nn.functional if mod is torch else F, name)
    return fn(x, **kw) if w is None else fn(x, w, **kw)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_window_args_like_torch(device, case):
    _, name, xs, ws, kw = case
    rng = np.random.default_rng(0)
    xn = rng.standard_normal(xs).astype(np.float32)
    wn = None if ws is None else rng.standard_normal(ws).astype(np.float32)
    try:
        expect = _run(torch, name, torch.tensor(xn), None if wn is None else torch.tensor(wn),
                      kw)
    except (RuntimeError, ValueError, TypeError, IndexError) as e:
        expect = e
    x = ot.tensor(xn, device=device)
    w = None if wn is None else ot.tensor(wn, device=device)
    if isinstance(expect, Exception):
        with pytest.raises((ValueError, TypeError)) as info:
            _run(ot, name, x, w, kw)
        # a clear message naming the op, never a raw backend error
        assert name.split("_")[0] in str(info.value) or "pool" in str(info.value)
        return
    out = _run(ot, name, x, w, kw)
    out = out[0] if isinstance(out, tuple) else out
    expect = expect[0] if isinstance(expect, tuple) else expect
    assert tuple(out.shape) == tuple(expect.shape)
    np.testing.assert_allclose(out.cpu().numpy(), expect.numpy(), rtol=1e-4, atol=1e-4)


def test_conv_transpose_shapes_agree_across_devices(device):
    """The same transposed convolution has one output shape on every device."""
    x = ot.ones(1, 2, 5, 7, device=device)
    w = ot.ones(2, 3, 3, 2, device=device)
    y = F.conv_transpose2d(x, w, stride=(2, 3), padding=(1, 0), output_padding=(1, 2),
                           dilation=(1, 1))
    t = TF.conv_transpose2d(torch.ones(1, 2, 5, 7), torch.ones(2, 3, 3, 2), stride=(2, 3),
                            padding=(1, 0), output_padding=(1, 2))
    assert tuple(y.shape) == tuple(t.shape)
    np.testing.assert_allclose(y.cpu().numpy(), t.numpy(), rtol=1e-5)


def test_module_arguments_rejected():
    with pytest.raises(ValueError):
        ot.nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError):
        ot.nn.Conv2d(2, 4, 3, padding_mode="mirror")
    with pytest.raises(ValueError):
        ot.nn.ConvTranspose3d(2, 2, 3, padding_mode="reflect")
