"""The instrument itself: the OpInfo driver flags what differs from torch and passes what
matches, the known-gaps file is well formed, and its command lines work."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import omnitensor as ot

pytest.importorskip("torch")
pytest.importorskip("expecttest")

from omnitensor.conformance import torch_opinfo as T
from omnitensor.conformance.torch_opinfo.compare import Options, compare
from omnitensor.conformance.torch_opinfo.convert import Arr
from omnitensor.conformance.torch_opinfo.driver import forward_sample, samples
from omnitensor.conformance.torch_opinfo.oracle import ops_by_key

GAPS_FILE = Path(__file__).parent / "known_gaps.txt"


def _arr(values, dtype="float32"):
    a = np.asarray(values, dtype=dtype)
    return Arr(a, dtype, a.shape)


def test_compare_names_the_cause():
    assert compare(_arr([1.0, 2.0]), _arr([1.0, 2.0])) is None
    assert compare(_arr([1.0, 2.5]), _arr([1.0, 2.0])).cause == "values"
    assert compare(_arr([1.0, 2.0], "float64"), _arr([1.0, 2.0])).cause == "dtype"
    assert compare(_arr([[1.0, 2.0]]), _arr([1.0, 2.0])).cause == "shape"
    assert compare(_arr(1.0), 1.0).cause == "structure"  # a tensor where torch gives a number
    assert compare([_arr([1.0])], [_arr([1.0]), _arr([2.0])]).cause == "structure"
    assert compare(_arr([np.nan]), _arr([np.nan])) is None
    assert compare(_arr([1, 2], "int64"), _arr([1, 3], "int64")).cause == "values"


def test_tolerance_follows_the_dtype_and_the_float64_reference():
    # float32: within torch.testing's rtol 1.3e-6 / atol 1e-5
    assert compare(_arr([1.0 + 1e-6]), _arr([1.0])) is None
    assert compare(_arr([1.001]), _arr([1.0])) is not None
    # a float32 result further from torch's than the tolerance, but no further from the
    # float64 result than torch's own float32 result is, is right
    ref = _arr([1.0005], "float64")
    assert compare(_arr([1.001]), _arr([1.0]), Options(reference=lambda: ref)) is None
    assert compare(_arr([1.01]), _arr([1.0]), Options(reference=lambda: ref)) is not None


def test_a_wrong_counterpart_is_flagged():
    op = ops_by_key()["neg"]
    sample = samples(op, "forward", "float64")[0]
    right = forward_sample(op, ot.neg, sample, "cpu", 0)
    wrong = forward_sample(op, lambda x: ot.neg(x) + 1, sample, "cpu", 0)
    refused = forward_sample(op, lambda x, y: x, sample, "cpu", 0)
    assert right.status == "pass"
    assert (wrong.status, wrong.cause) == ("fail", "values")
    assert (refused.status, refused.cause) == ("fail", "refused")


def test_resolve_maps_public_objects_and_test_lambdas():
    ops = ops_by_key()
    assert T.resolve(ops["add"]) is ot.add
    assert T.counterpart_paths(ops["mT"]) == ("Tensor.mT",)
    mt = T.resolve(ops["mT"])  # the test's lambda, with the face for torch
    x = ot.arange(6.0).reshape(2, 3)
    assert mt(x).shape == (3, 2)
    assert T.resolve(ops["jiterator_unary"]) is None  # CUDA-only, no public torch path
    assert T.counterpart_paths(ops["nn.functional.conv2d"]) == ("nn.functional.conv2d",)


def test_a_stateless_torch_module_in_a_sample_becomes_the_faces():
    """triplet_margin_with_distance_loss's samples pass torch's nn.PairwiseDistance(): the
    face's call gets the face's module with the same settings; modules with state are
    refused, not silently replaced."""
    import torch

    from omnitensor.conformance.torch_opinfo.convert import Converter, Unconvertible
    conv = Converter(ot, "cpu")
    m = conv({"distance_function": torch.nn.PairwiseDistance(p=3.0, eps=1e-3,
                                                             keepdim=True)})
    f = m["distance_function"]
    assert isinstance(f, ot.nn.PairwiseDistance)
    assert (f.norm, f.eps, f.keepdim) == (3.0, 1e-3, True)
    with pytest.raises(Unconvertible):
        conv(torch.nn.Linear(2, 2))


def test_a_partial_view_sample_keeps_its_storage(device):
    """as_strided.partial_views passes ``base[5:15]``: the face gets the same view of a
    storage holding the same 20 elements (its offset and what as_strided reads match
    torch's, on every device); a plain tensor is still a copy of its own."""
    import torch

    from omnitensor.conformance.torch_opinfo.convert import Converter
    base = torch.arange(20.0)
    conv = Converter(ot, device, grad=True)
    v = conv(base[5:15].requires_grad_(True))
    assert v.storage_offset() == 5 and v.requires_grad and v.is_leaf
    np.testing.assert_array_equal(v.detach().numpy(), base[5:15].numpy())
    got = ot.as_strided(v, (2, 2), (1, 2), 10)
    want = torch.as_strided(base[5:15], (2, 2), (1, 2), 10)
    np.testing.assert_array_equal(got.detach().numpy(), want.numpy())
    assert conv(torch.arange(3.0)).storage_offset() == 0


def test_samples_are_the_same_in_any_order():
    op = ops_by_key()["add"]
    first = samples(op, "forward", "float32")[2].input.clone()
    samples(ops_by_key()["sub"], "forward", "float32")
    assert bool((samples(op, "forward", "float32")[2].input == first).all())


def test_known_gaps_file_is_well_formed():
    gaps = T.read_gaps(GAPS_FILE)
    keys = set(ops_by_key())
    lines = [ln for ln in GAPS_FILE.read_text().splitlines() if ln.split("#")[0].strip()]
    assert len(lines) == len(gaps), "a check is listed twice"
    for (op, dtype, dev_type, kind), reason in gaps.items():
        assert op in keys, f"known_gaps.txt: no OpInfo {op!r}"
        assert dev_type in ("cpu", "opencl", "sycl", "cuda"), dev_type
        if kind == "forward":
            assert dtype in T.forward_dtypes(dev_type), (op, dtype, dev_type)
        elif kind == "grad":
            assert dtype == T.grad_dtype(dev_type), (op, dtype, dev_type)
        else:
            assert dtype == "-", (op, dtype)
        assert reason


def test_a_malformed_gap_line_is_an_error(tmp_path):
    bad = tmp_path / "gaps.txt"
    bad.write_text("addmm float32 cpu  # the kind is missing\n")
    with pytest.raises(ValueError, match="expected 'op dtype device-type kind"):
        T.read_gaps(bad)


def test_cli_prints_each_sample():
    res = subprocess.run([sys.executable, "-m", "omnitensor.conformance.torch_opinfo",
                          "--op", "neg", "--device", "cpu", "--kind", "forward"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS    neg forward float32 cpu" in res.stdout
    assert "[0] pass SampleInput(" in res.stdout


def test_conformance_torch_certificate():
    res = subprocess.run([sys.executable, "-m", "omnitensor", "conformance", "--torch",
                          "--device", "cpu", "--op", "neg", "--json", "-"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    cert = json.loads(res.stdout)
    figs = cert["torch_opinfo"]["figures"]["cpu"]
    assert figs["with_counterpart"] == 1 and figs["forward"]["pass_pct"] == 100.0
    assert cert["passed"] is True and "torch" in cert["versions"]


def test_a_dtype_the_device_lacks_skips_and_one_omnitensor_lacks_fails():
    """float16 on an OpenCL device without cl_khr_fp16 (DeviceDTypeError, raised by the
    device's own dtype check) is no gap of omnitensor's: its samples skip and say why.
    A dtype omnitensor holds on no device (complex32) stays a failure."""
    from omnitensor.conformance.torch_opinfo.driver import face_failure
    from omnitensor.errors import DeviceDTypeError, UnsupportedDTypeError
    lacks = face_failure(3, DeviceDTypeError("opencl:0 (X): float16 needs cl_khr_fp16"))
    assert lacks.status == "skip" and "cl_khr_fp16" in lacks.message
    ours = face_failure(3, UnsupportedDTypeError("chalf(): complex32 is not supported"))
    assert ours.status == "fail" and ours.cause == "refused"


@pytest.mark.parametrize("dev", ["opencl:0", "sycl:0"])
def test_device_dtype_checks_raise_the_device_error(dev):
    """The devices' dtype checks raise DeviceDTypeError (what the driver skips on), and
    only for what the device lacks."""
    from omnitensor.errors import DeviceDTypeError
    try:
        d = ot.device(dev)
        d.backend  # noqa: B018 - an absent backend skips
    except Exception as e:  # an absent or broken backend: nothing to check here
        pytest.skip(f"{dev} unavailable: {e}")
    for dtype in (ot.float16, ot.float64):
        if d.supports_dtype(dtype):
            ot.zeros(2, dtype=dtype, device=dev)
        else:
            with pytest.raises(DeviceDTypeError):
                ot.zeros(2, dtype=dtype, device=dev)


def test_ops_whose_gradcheck_torch_expects_to_fail_are_no_gradient_oracle():
    """as_strided_scatter's backward keeps the gradient inside the scattered window (torch
    marks its own gradcheck an expected failure): a sample differing from it skips and
    says why; an op torch verifies still fails on a difference."""
    from omnitensor.conformance.torch_opinfo.oracle import torch_gradient_unverified
    assert torch_gradient_unverified(ops_by_key()["as_strided_scatter"])
    assert not torch_gradient_unverified(ops_by_key()["add"])
    res = T.check("as_strided_scatter", "grad", "cpu", "float64")
    assert res.count("pass") + len(res.failures()) < len(res.samples)
    assert all("no oracle" in s.message for s in res.samples if s.status == "skip")
