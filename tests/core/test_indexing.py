"""NumPy/torch indexing semantics: basic, advanced, masks, assignment, gather/scatter."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor.testing import assert_close

A = np.arange(60, dtype=np.float32).reshape(3, 4, 5)

KEYS = [
    1, -1, (1, 2), (slice(None), 2), (Ellipsis, 1), (None, 1), (slice(1, None, 2),),
    (slice(None, None, -1),), (slice(3, 0, -2), slice(None), 4), (Ellipsis, None),
    ([0, 2],), ([2, 0], [1, 3]), (slice(None), [0, 3]), (1, [0, 2], slice(1, 3)),
    ([0, 2], slice(None), [1, 1]), ([[0], [2]], [1, 2, 3]), (np.array([True, False, True]),),
    (Ellipsis, [4, 0]), (slice(0, 0),), (None, [1], None, 0), (-1, -1, -1),
]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_getitem_like_numpy(device, key):
    t = ot.tensor(A, device=device)
    k = tuple(ot.tensor(i, device=device) if isinstance(i, np.ndarray) else i for i in key) \
        if isinstance(key, tuple) else key
    assert_close(t[k], A[key])


def test_mask_and_tensor_indices(device):
    t = ot.tensor(A, device=device)
    assert_close(t[t > 30], A[A > 30])
    idx = ot.tensor([2, 0, 2], device=device)
    assert_close(t[idx], A[[2, 0, 2]])
    assert_close(t[:, ot.tensor([-1, 0], device=device)], A[:, [-1, 0]])
    assert_close(t[ot.tensor(1, device=device)], A[1])


def test_index_errors(device):
    t = ot.tensor(A, device=device)
    with pytest.raises(IndexError, match="out of bounds"):
        t[3]
    with pytest.raises(IndexError, match="out of bounds"):
        t[ot.tensor([0, 7], device=device)]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0, 0]
    with pytest.raises(IndexError, match="mask"):
        t[ot.tensor([True, False], device=device)]
    with pytest.raises(IndexError):
        t[ot.tensor([0.5], device=device)]


@pytest.mark.parametrize("key,value", [
    (1, 0.0), ((slice(None), 2), -1.0), ((Ellipsis, slice(0, 2)), "row"),
    (([0, 2], [1, 3]), 9.0), ((slice(None), [0, 3]), "col"), (("mask",), 5.0),
    ((1, [0, 3], slice(1, 3)), "block"),
])
def test_setitem_like_numpy(device, key, value):
    ref = A.copy()
    t = ot.tensor(A, device=device)
    if key == ("mask",):
        ref[ref > 40] = value
        t[t > 40] = value
    else:
        sel_shape = ref[key].shape
        if value == "row" or value == "col" or value == "block":
            value = np.arange(np.prod(sel_shape[-1:]), dtype=np.float32) + 100
        ref[key] = value
        t[key] = ot.tensor(value, device=device) if isinstance(value, np.ndarray) else value
    assert_close(t, ref)


def test_setitem_broadcast_and_cast(device):
    t = ot.zeros(2, 3, dtype=ot.int32, device=device)
    t[:] = ot.tensor([1, 2, 3], device=device)
    t[0] = 7.9  # cast like torch
    assert t.tolist() == [[7, 7, 7], [1, 2, 3]]
    with pytest.raises(ValueError, match="cannot be broadcast"):
        t[0] = ot.ones(2, device=device)


def test_gather_scatter(device):
    x = ot.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)
    idx = ot.tensor([[2, 0], [1, 1]], device=device)
    assert x.gather(1, idx).tolist() == [[3.0, 1.0], [5.0, 5.0]]
    assert ot.take_along_axis(x, ot.tensor([[0], [2]], device=device), axis=1).tolist() == [
        [1.0], [6.0]]
    z = ot.zeros(2, 3, device=device)
    assert z.scatter(1, idx, ot.ones(2, 2, device=device)).tolist() == [
        [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    assert z.scatter_add(1, idx, ot.ones(2, 2, device=device)).tolist() == [
        [1.0, 0.0, 1.0], [0.0, 2.0, 0.0]]
    with pytest.raises(IndexError, match="out of bounds"):
        x.gather(1, ot.tensor([[3]], device=device))
    assert x.index_select(1, ot.tensor([2, 0], device=device)).tolist() == [[3.0, 1.0],
                                                                            [6.0, 4.0]]
    assert ot.take(x, ot.tensor([5, 0], device=device)).tolist() == [6.0, 1.0]
    assert x.masked_fill(x > 3, 0).tolist() == [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]
    assert x.masked_select(x > 4).tolist() == [5.0, 6.0]


def test_nonzero_both_conventions(device):
    x = ot.tensor([[0, 1], [2, 0]], device=device)
    rows, cols = ot.nonzero(x)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]
    assert x.nonzero().tolist() == [[0, 1], [1, 0]]
    assert ot.where(x > 0)[0].tolist() == [0, 1]
    assert ot.count_nonzero(x).item() == 2
