"""sort/argsort/topk/unique/searchsorted, both conventions."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor.testing import assert_close


def test_sort_conventions(device):
    a = np.array([[3.0, 1.0, 2.0, 1.0], [0.0, np.nan, -1.0, 5.0]], np.float32)
    t = ot.tensor(a, device=device)
    assert_close(ot.sort(t), np.sort(a))                         # standard: a tensor
    assert_close(ot.sort(t, axis=0), np.sort(a, axis=0))
    v, i = ot.sort(t, 1)                                         # torch positional dim
    assert_close(v, np.sort(a))
    assert_close(i, np.argsort(a, kind="stable"))
    v, i = t.sort(descending=True)                               # torch method
    assert v[0].tolist() == [3.0, 2.0, 1.0, 1.0]
    assert i[0].tolist() == [0, 2, 1, 3]                         # stable among equal keys
    assert np.isnan(v[1, 0].item())                              # NaN first when descending
    assert ot.argsort(t, descending=True, stable=True)[0].tolist() == [0, 2, 1, 3]


def test_topk_kthvalue_median(device):
    t = ot.tensor([4.0, 1.0, 3.0, 9.0, 3.0], device=device)
    v, i = t.topk(2)
    assert v.tolist() == [9.0, 4.0] and i.tolist() == [3, 0]
    v, i = t.topk(2, largest=False)
    assert v.tolist() == [1.0, 3.0]
    assert t.kthvalue(2).values.item() == 3.0
    assert t.median().item() == 3.0
    assert ot.median(ot.tensor([[1.0, 4.0], [3.0, 2.0]], device=device), 1).values.tolist() == [
        1.0, 2.0]
    with pytest.raises(ValueError, match="out of range"):
        t.topk(6)


def test_unique_family(device):
    a = np.array([3, 1, 2, 1, 3, 3], np.int64)
    t = ot.tensor(a, device=device)
    vals, inv, counts = np.unique(a, return_inverse=True, return_counts=True)
    assert ot.unique_values(t).tolist() == vals.tolist()
    r = ot.unique_all(t)
    assert r.counts.tolist() == counts.tolist() and r.inverse_indices.tolist() == inv.tolist()
    assert r.indices.tolist() == [1, 2, 0]
    u, c = t.unique(return_counts=True)
    assert c.tolist() == counts.tolist()
    f = ot.tensor([1.0, float("nan"), float("nan")], device=device)
    assert ot.unique_values(f).shape == (3,)  # each NaN is distinct (Array API)


def test_searchsorted(device):
    s = ot.tensor([1.0, 2.0, 2.0, 5.0], device=device)
    v = ot.tensor([0.0, 2.0, 6.0], device=device)
    assert ot.searchsorted(s, v).tolist() == [0, 1, 4]
    assert ot.searchsorted(s, v, side="right").tolist() == [0, 3, 4]
    assert ot.searchsorted(s, v, right=True).tolist() == [0, 3, 4]
    s2 = ot.tensor([[1.0, 3.0], [2.0, 4.0]], device=device)
    assert ot.searchsorted(s2, ot.tensor([[2.0], [5.0]], device=device)).tolist() == [[1], [2]]
    assert ot.bucketize(v, s).tolist() == [0, 1, 4]
