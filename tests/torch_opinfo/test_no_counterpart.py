"""OpInfos that can have no omnitensor counterpart say why (CUDA-only jiterator, the ATen
private kernels omnitensor does not have), the private kernels omnitensor/aten implements
resolve like public ops, and public ops keep resolving: the rule of
``omnitensor.conformance.torch_opinfo.resolve.no_counterpart_reason``."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")

from omnitensor.conformance import torch_opinfo as T
import importlib

R = importlib.import_module("omnitensor.conformance.torch_opinfo.resolve")
from omnitensor.conformance.torch_opinfo.oracle import ops_by_key  # noqa: E402

#: ATen's private kernels omnitensor/aten writes over public ops: found through the face's
#: torch.ops.aten (or torch._x), run, and compared like any op
IMPLEMENTED = ("_softmax_backward_data", "_native_batch_norm_legit", "_batch_norm_with_update",
               "_upsample_bilinear2d_aa", "max_pool2d_with_indices_backward",
               "torch.ops.aten._safe_softmax.default", "slice", "_unsafe_masked_index",
               "_unsafe_masked_index_put_accumulate", "_chunk_cat", "native_dropout_backward",
               "_segment_reduce.lengths", "_segment_reduce.offsets")
#: the fused attention and scaled-fp8 kernels behind public ops, which omnitensor lacks
PRIVATE = ("torch.ops.aten._flash_attention_forward",
           "torch.ops.aten._efficient_attention_forward", "torch._scaled_mm",
           "torch._scaled_mm_v2")


@pytest.mark.parametrize("key", IMPLEMENTED)
def test_implemented_private_kernels_resolve(key):
    op = ops_by_key()[key]
    assert R.no_counterpart_reason(op) is None
    assert T.resolve(op) is not None
    kind, dtype = ("errors", "") if key == "_chunk_cat" else ("forward", "float32")
    res = T.check(key, kind, "cpu", dtype)
    assert res.status == "pass", res.reason


@pytest.mark.parametrize("key", PRIVATE)
def test_private_aten_kernels_name_themselves(key):
    op = ops_by_key()[key]
    why = R.no_counterpart_reason(op)
    assert why is not None and why.startswith("a private ATen kernel (torch.")
    assert T.resolve(op) is None
    res = T.check(key, "forward", "cpu", "float32")
    assert res.status in ("missing", "skip")
    if res.status == "missing":
        assert res.reason.startswith("no counterpart by design")


def test_jiterator_is_cuda_only():
    for key in ("jiterator_unary", "jiterator_binary", "jiterator_2inputs_2outputs"):
        op = ops_by_key()[key]
        assert "CUDA-only" in R.no_counterpart_reason(op)
        assert T.resolve(op) is None


@pytest.mark.parametrize("key", ["add", "nn.functional.conv2d", "mT", "__radd__",
                                 "linalg.det", "max_pool2d_with_indices_backward"])
def test_public_ops_are_not_private(key):
    """(max_pool2d_with_indices_backward's lambda calls torch.ops.aten: the face has it)"""
    op = ops_by_key()[key]
    assert R.no_counterpart_reason(op) is None
    assert T.resolve(op) is not None


def test_dist_resolves_to_torchs_function_not_the_distributed_module():
    """omnitensor.dist is the distributed module; the face's torch.dist must be torch's
    function (the OpInfo resolved to the module before, and reported no counterpart)."""
    op = ops_by_key()["dist"]
    assert callable(R.lookup(R.face(), "dist"))
    assert T.resolve(op) is not None
