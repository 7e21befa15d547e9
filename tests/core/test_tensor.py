"""The Tensor object: metadata, conversion, repr, in-place ops, views sharing memory."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor.testing import assert_close


def test_metadata(device):
    x = ot.zeros(2, 3, 4, device=device)
    assert x.shape == (2, 3, 4) and x.ndim == 3 and x.dim() == 3
    assert x.numel() == 24 and x.size == 24 and x.size() == (2, 3, 4) and x.size(-1) == 4
    assert x.dtype is ot.float32 and x.device is ot.device(device)
    assert x.T.shape == (4, 3, 2) if False else x.mT.shape == (2, 4, 3)
    assert ot.zeros(2, 3, device=device).T.shape == (3, 2)
    assert x.is_contiguous() and not x.transpose(0, 2).is_contiguous()
    assert x.element_size() == 4 and x.nbytes == 96


def test_python_conversions(device):
    x = ot.tensor([[1.5, 2.0]], device=device)
    assert x.tolist() == [[1.5, 2.0]]
    assert x[0, 0].item() == 1.5 and float(x[0, 1]) == 2.0
    assert int(ot.tensor(7, device=device)) == 7
    assert list(range(10))[ot.tensor(3, device=device)] == 3
    assert bool(ot.tensor(True, device=device))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(x)
    with pytest.raises(ValueError):
        x.item()
    assert len(x) == 1 and [t.shape for t in x] == [(2,)]
    assert np.asarray(x).shape == (1, 2)


def test_to_and_casts(device):
    x = ot.tensor([1.7, -2.2], device=device)
    assert x.to(ot.int32).tolist() == [1, -2]
    assert x.int().dtype is ot.int32 and x.long().dtype is ot.int64 and x.bool().tolist() == [
        True, True]
    assert x.to("cpu").device is ot.device("cpu")
    assert x.cpu().to(device).device is ot.device(device)
    assert x.to(x) is x
    assert ot.astype(x, ot.float32) is not x
    assert ot.astype(x, ot.float32, copy=False) is x
    y = ot.ones(2, dtype=ot.int16, device=device)
    assert x.type_as(y).dtype is ot.int16


def test_repr_like_torch():
    assert repr(ot.tensor([1.0, 2.0, 3.0])) == "tensor([1., 2., 3.])"
    assert repr(ot.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(ot.tensor(1.5)) == "tensor(1.5000)"
    assert repr(ot.tensor([True, False])) == "tensor([ True, False])"
    assert repr(ot.tensor([0.25, 2.0])) == "tensor([0.2500, 2.0000])"
    assert repr(ot.tensor([1.0], dtype=ot.float64)) == "tensor([1.], dtype=omnitensor.float64)"
    assert repr(ot.tensor([1.0], requires_grad=True)) == "tensor([1.], requires_grad=True)"
    assert "grad_fn=<MulBackward0>" in repr(ot.tensor([1.0], requires_grad=True) * 2)
    assert repr(ot.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert "1.0000e-05" in repr(ot.tensor([1e-5, 100.0]))


def test_repr_shows_device(device):
    if device != "cpu":
        assert f"device='{ot.device(device)}'" in repr(ot.ones(2, device=device))


def test_inplace_ops_and_version(device):
    x = ot.ones(3, device=device)
    v = x._version
    x += 2
    x.mul_(2)
    x.sub_(1, alpha=2)
    assert x.tolist() == [4.0, 4.0, 4.0] and x._version == v + 3
    x.clamp_(max=3)
    assert x.tolist() == [3.0] * 3
    x.zero_()
    assert x.tolist() == [0.0] * 3
    x.fill_(2.5)
    x.exp_()
    assert_close(x, np.full(3, np.exp(2.5), np.float32))
    i = ot.ones(2, dtype=ot.int32, device=device)
    with pytest.raises(TypeError, match="can't be cast"):
        i += 1.5
    with pytest.raises(ValueError, match="doesn't match the broadcast shape"):
        ot.ones(3, device=device).add_(ot.ones(2, 3, device=device))


def test_views_share_memory(device):
    x = ot.zeros(3, 4, device=device)
    v = x[1]
    v += 1
    assert x.sum().item() == 4
    t = x.t()
    t[0, 0] = 5
    assert x[0, 0].item() == 5
    r = x.view(12)
    r[11] = 9
    assert x[2, 3].item() == 9
    with pytest.raises(ValueError, match="view"):
        x.t().view(12)
    assert x.t().reshape(12).shape == (12,)
    d = x.diagonal()
    d.fill_(-1)
    assert x[1, 1].item() == -1


def test_copy_and_clone(device):
    x = ot.arange(4.0, device=device)
    c = x.clone()
    c[0] = 10
    assert x[0].item() == 0
    y = ot.zeros(2, 4, device=device)
    y.copy_(x)
    assert y.tolist() == [[0.0, 1.0, 2.0, 3.0]] * 2
    y.copy_(ot.ones(4, dtype=ot.int64))
    assert y.sum().item() == 8


def test_new_factories(device):
    x = ot.ones(2, dtype=ot.int16, device=device)
    assert x.new_zeros(3).dtype is ot.int16 and x.new_zeros(3).device is x.device
    assert x.new_full((2,), 5).tolist() == [5, 5]
    assert x.new_tensor([1, 2]).dtype is ot.int16


def test_pickle_is_refused():
    import pickle
    with pytest.raises(TypeError, match="omnitensor.save"):
        pickle.dumps(ot.ones(2))


def test_array_namespace(device):
    x = ot.ones(2, device=device)
    assert x.__array_namespace__() is ot
    assert ot.__array_api_version__ == "2024.12"
    info = ot.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] is ot.float32
    assert "float32" in info.dtypes(device=device)
    assert x.to_device("cpu").device is ot.device("cpu")


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_pow_negative_exponents_like_torch(device, dtype):
    """torch's values on every backend (NumPy raises, dpnp gives 0 for every base)."""
    base = [2, 3, 1, -1, 0, -1, 5, -2]
    exp = [-1, 2, -3, -3, -1, -2, 0, 3]
    dt = getattr(ot, dtype)
    b, e = ot.tensor(base, dtype=dt, device=device), ot.tensor(exp, dtype=dt, device=device)
    assert (b ** e).tolist() == [0, 9, 1, -1, 0, 1, 1, -8]
    assert (b ** e).dtype is dt
    assert (1 ** e).tolist() == [1] * 8
    assert ((-1) ** e).tolist() == [-1, 1, -1, -1, -1, 1, 1, -1]
    assert (2 ** e).tolist() == [0, 4, 0, 0, 0, 0, 1, 8]
    with pytest.raises(ot.DTypeError, match="negative integer powers"):
        b ** -1
    assert (b ** 2).tolist() == [v * v for v in base]


def test_numpy_scalars_and_arrays_as_operands(device):
    """NumPy scalars are weak Python scalars (torch); a NumPy array on either side is a
    cpu tensor, never a silent conversion of the Tensor to NumPy."""
    t = ot.tensor([1, 2], dtype=ot.int32, device=device)
    for r in (t + np.int64(3), np.int64(3) + t):
        assert isinstance(r, ot.Tensor) and r.dtype is ot.int32 and r.tolist() == [4, 5]
    h = ot.ones(2, dtype=ot.float32, device=device)
    r = np.float64(2.0) * h
    assert isinstance(r, ot.Tensor) and r.dtype is ot.float32 and r.device == h.device
    assert (t == np.int64(2)).tolist() == [False, True]
    t += np.int64(1)
    assert t.tolist() == [2, 3]
    c = np.ones(2) + ot.ones(2)
    assert isinstance(c, ot.Tensor) and c.dtype is ot.float64
    if device != "cpu":
        with pytest.raises(ot.DeviceMismatchError):
            np.ones(2) + h
