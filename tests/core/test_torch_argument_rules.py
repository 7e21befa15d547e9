"""Argument rules checked once in core, the same on every device, as torch (issue 21 items
6 and 7): calls torch refuses are refused with a clear error, calls torch accepts work."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.nn.functional as F

ZERO_D_BAD = [
    ("transpose", lambda x: x.transpose(0, 1)), ("squeeze", lambda x: x.squeeze(5)),
    ("cumsum", lambda x: x.cumsum(dim=3)), ("sort", lambda x: x.sort(1)),
    ("argsort", lambda x: x.argsort(2)), ("softmax", lambda x: x.softmax(1)),
    ("argmax", lambda x: x.argmax(1)), ("flatten", lambda x: x.flatten(-3, 0)),
    ("topk", lambda x: x.topk(1, 1)), ("max", lambda x: x.max(1)),
    ("sum", lambda x: x.sum(1)), ("unsqueeze", lambda x: x.unsqueeze(2)),
]
ZERO_D_OK = [
    ("transpose", lambda x: x.transpose(0, -1)), ("squeeze", lambda x: x.squeeze(0)),
    ("cumsum", lambda x: x.cumsum(0)), ("sort", lambda x: x.sort(-1)[0]),
    ("softmax", lambda x: x.softmax(0)), ("argmax", lambda x: x.argmax(0)),
    ("flatten", lambda x: x.flatten(0, -1)), ("topk", lambda x: x.topk(1, 0)[0]),
]


@pytest.mark.parametrize("name,call", ZERO_D_BAD, ids=[c[0] for c in ZERO_D_BAD])
def test_zero_d_dims_out_of_range_raise_like_torch(device, name, call):
    torch = pytest.importorskip("torch")
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                         r"of \[-1, 0\]"):
        call(ot.tensor(1.5, device=device))
    with pytest.raises(IndexError):
        call(torch.tensor(1.5))


@pytest.mark.parametrize("name,call", ZERO_D_OK, ids=[c[0] for c in ZERO_D_OK])
def test_zero_d_dims_in_range_work_like_torch(device, name, call):
    torch = pytest.importorskip("torch")
    got = call(ot.tensor(1.5, device=device))
    want = call(torch.tensor(1.5))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy())


def test_size_of_zero_d_tensor(device):
    x = ot.tensor(2.0, device=device)
    assert tuple(x.size()) == ()
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no "
                                         "dimensions"):
        x.size(0)


@pytest.mark.parametrize("value,dtype", [(300, "uint8"), (-256, "uint8"), (128, "int8"),
                                         (-129, "int8"), (2 ** 31, "int32"),
                                         (300.5, "uint8")])
def test_python_ints_out_of_range_raise_like_torch(device, value, dtype):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match=f"cannot be converted to type {dtype} without "
                                           f"overflow"):
        ot.tensor([value], dtype=getattr(ot, dtype), device=device)
    with pytest.raises(RuntimeError, match="without overflow"):
        torch.tensor([value], dtype=getattr(torch, dtype))


@pytest.mark.parametrize("value,dtype", [(-1, "uint8"), (-255, "uint8"), (255, "uint8"),
                                         (-128, "int8"), (7.9, "int16")])
def test_python_ints_in_torchs_range_convert_like_torch(device, value, dtype):
    torch = pytest.importorskip("torch")
    got = ot.tensor([value], dtype=getattr(ot, dtype), device=device).tolist()
    assert got == torch.tensor([value], dtype=getattr(torch, dtype)).tolist()


def test_numpy_arrays_cast_like_torch(device):
    # torch casts NumPy data with C semantics: only Python numbers are range-checked
    got = ot.tensor(np.array([300]), dtype=ot.uint8, device=device).tolist()
    assert got == [44]


@pytest.mark.parametrize("args", [(-1,), (3, -1), (2.5,)])
def test_eye_rejects_negative_sizes(device, args):
    with pytest.raises((ValueError, TypeError), match="eye"):
        ot.eye(*args, device=device)


def test_embedding_rejects_negative_and_too_large_indices(device):
    w = ot.ones(3, 2, device=device)
    for bad in (-1, 3):
        with pytest.raises(IndexError, match=f"index {bad} is out of range for 3 embeddings"):
            F.embedding(ot.tensor([0, bad], device=device), w)
    assert F.embedding(ot.tensor([2, 0], device=device), w).shape == (2, 2)


@pytest.mark.parametrize("bad", [None, 3, "x", [1.0]])
def test_cat_and_stack_name_a_non_tensor(device, bad):
    x = ot.ones(2, device=device)
    for fn in (ot.cat, ot.stack):
        with pytest.raises(TypeError, match=f"expected a sequence of Tensors, got "
                                            f"{type(bad).__name__} at position 1"):
            fn([x, bad])
    with pytest.raises(TypeError, match="at position 0"):
        ot.cat([bad, x], dim=None)


@pytest.mark.parametrize("chunks", [0, -1, 1.5])
def test_chunk_needs_a_positive_count(device, chunks):
    with pytest.raises(ValueError, match="chunk: chunks must be a positive integer"):
        ot.ones(4, device=device).chunk(chunks)


def test_sum_over_empty_dims_is_a_full_reduction_like_torch(device):
    torch = pytest.importorskip("torch")
    x = ot.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    assert x.sum(dim=()).item() == torch.tensor([[1.0, 2.0], [3.0, 4.0]]).sum(dim=()).item()


@pytest.mark.parametrize("xs,ws", [((0, 3), (4, 3)), ((2, 0), (4, 0)), ((5, 0, 3), (2, 3))])
def test_linear_on_zero_size_inputs_works_like_torch(device, xs, ws):
    torch = pytest.importorskip("torch")
    got = F.linear(ot.ones(*xs, device=device), ot.ones(*ws, device=device),
                   ot.ones(ws[0], device=device))
    want = torch.nn.functional.linear(torch.ones(*xs), torch.ones(*ws), torch.ones(ws[0]))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy())


def test_einsum_unknown_output_subscript_is_clear(device):
    with pytest.raises(ValueError, match="'j'"):
        ot.einsum("ii->ij", ot.ones(2, 2, device=device))
