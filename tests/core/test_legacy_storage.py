"""Legacy storages (torch.FloatStorage & co., TypedStorage's constructor), Tensor.set_ and
Tensor.storage_type, against torch: aliasing (writes through one seen by the other),
offsets, sizes and strides, and the refusals."""
import warnings

import numpy as np
import pytest
import torch

import omnitensor as ot

warnings.filterwarnings("ignore", message="TypedStorage is deprecated")
NAMES = ["FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "LongStorage",
         "IntStorage", "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage",
         "ComplexFloatStorage", "ComplexDoubleStorage"]


def _same(a, b):
    assert tuple(a.shape) == tuple(b.shape) and a.stride() == b.stride()
    assert a.storage_offset() == b.storage_offset()
    np.testing.assert_array_equal(a.cpu().numpy(), b.numpy())


@pytest.mark.parametrize("name", NAMES)
def test_legacy_classes(name):
    cls, tcls = getattr(ot, name), getattr(torch, name)
    assert cls.dtype.name == str(tcls.dtype).split(".")[1]
    s, ts = cls([1, 0, 1]), tcls([1, 0, 1])
    assert type(s) is ot.TypedStorage and type(ts) is torch.TypedStorage
    assert isinstance(s, cls) and isinstance(ts, tcls)
    assert s.tolist() == ts.tolist() and s.size() == ts.size() == len(s)
    assert s.element_size() == ts.element_size()
    assert cls(4).size() == tcls(4).size() and cls().size() == tcls().size() == 0
    with pytest.raises(RuntimeError, match="'device' cannot be specified"):
        tcls(2, device="cpu")
    with pytest.raises(TypeError, match="'device' cannot be specified"):
        cls(2, device="cpu")
    other = ot.IntStorage if name != "IntStorage" else ot.LongStorage
    assert not isinstance(s, other)


def test_storage_type(device):
    for dt in ("float32", "float64", "int64", "int32", "uint8", "bool", "complex64"):
        x = ot.zeros(2, dtype=getattr(ot, dt), device=device)
        want = torch.zeros(2, dtype=getattr(torch, dt)).storage_type().__name__
        got = x.storage_type()
        if device == "cpu":
            assert got.__name__ == want and got is getattr(ot, want)
        else:  # torch has no legacy storage classes for these devices
            assert got is None


def test_typed_storage_parameters(device):
    s = ot.TypedStorage(3, dtype=ot.int64, device=device)
    ts = torch.TypedStorage(3, dtype=torch.int64)
    assert (s.size(), s.dtype.name) == (ts.size(), str(ts.dtype).split(".")[1])
    assert str(s.device) == str(ot.device(device))
    assert ot.TypedStorage([1, 2]).dtype is ot.float32 and torch.TypedStorage([1, 2]).dtype \
        is torch.float32
    x, tx = ot.arange(3.0, device=device), torch.arange(3.0)
    w = ot.TypedStorage(wrap_storage=x.untyped_storage(), dtype=ot.float32)
    tw = torch.TypedStorage(wrap_storage=tx.untyped_storage(), dtype=torch.float32)
    assert w.tolist() == tw.tolist()
    w[1] = 7.0
    tw[1] = 7.0
    assert x.tolist() == tx.tolist()  # the wrapped storage is the tensor's memory
    pairs = [  # torch's invalid combinations, and the same call here
        (lambda: torch.TypedStorage(wrap_storage=tx.untyped_storage(), dtype=torch.float32,
                                    device="cpu"),
         lambda: ot.TypedStorage(wrap_storage=x.untyped_storage(), dtype=ot.float32,
                                 device=device)),
        (lambda: torch.TypedStorage(wrap_storage=tx.untyped_storage()),
         lambda: ot.TypedStorage(wrap_storage=x.untyped_storage())),
        (lambda: torch.TypedStorage(wrap_storage=tx.storage(), dtype=torch.float32),
         lambda: ot.TypedStorage(wrap_storage=x.storage(), dtype=ot.float32)),
        (lambda: torch.TypedStorage(2, wrap_storage=tx.untyped_storage(), dtype=torch.float32),
         lambda: ot.TypedStorage(2, wrap_storage=x.untyped_storage(), dtype=ot.float32))]
    for theirs, ours in pairs:
        with pytest.raises((TypeError, RuntimeError)):
            theirs()
        with pytest.raises(TypeError):
            ours()
    with pytest.raises(TypeError, match="view\\(dtype\\)"):
        ot.TypedStorage(wrap_storage=x.untyped_storage(), dtype=ot.int32)


def test_set_to_a_tensor_aliases(device):
    tx = torch.arange(12.0).reshape(3, 4)
    x = ot.arange(12.0, device=device).reshape(3, 4)
    for f in (lambda a: a, lambda a: a[:, 1:], lambda a: a.t(), lambda a: a[1]):
        ty, y = torch.empty(0).set_(f(tx)), ot.empty(0, device=device).set_(f(x))
        _same(y, ty)
        assert y.is_set_to(f(x)) and ty.is_set_to(f(tx))
    ty, y = torch.empty(0).set_(tx, 2, (2, 3), (1, 2)), \
        ot.empty(0, device=device).set_(x, 2, (2, 3), (1, 2))
    _same(y, ty)
    ty[1, 1] = -5.0
    y[1, 1] = -5.0
    _same(x, tx)  # the write went through to the source
    tx[0, 2] = 50.0
    x[0, 2] = 50.0
    _same(y, ty)  # and the source's write is seen


def test_set_to_a_storage_aliases(device):
    tx, x = torch.arange(6.0), ot.arange(6.0, device=device)
    cases = [((), {}), ((1, (2, 2), (1, 2)), {}), ((2, (2, 2)), {})]
    for kind in ("untyped_storage", "storage"):
        for args, kw in cases:
            ty = torch.empty(0).set_(getattr(tx, kind)(), *args, **kw)
            y = ot.empty(0, device=device).set_(getattr(x, kind)(), *args, **kw)
            _same(y, ty)
            first = (0,) * ty.ndim
            ty[first] = ty[first] + 100
            y[first] = y[first] + 100
            _same(x, tx)
    ts, s = torch.FloatStorage([1, 2, 3]), ot.FloatStorage([1, 2, 3])
    ta, a = torch.tensor([]).set_(ts), ot.tensor([]).set_(s)
    ta[1] = 9
    a[1] = 9
    assert s.tolist() == ts.tolist() == [1.0, 9.0, 3.0]


def test_set_empty_and_refusals(device):
    y = ot.ones(3, device=device).set_()
    assert tuple(y.shape) == tuple(torch.ones(3).set_().shape) == (0,)
    x, tx = ot.arange(6.0, device=device), torch.arange(6.0)
    with pytest.raises(RuntimeError, match="Could not set tensor of type"):
        torch.zeros(2, dtype=torch.float64).set_(tx)
    with pytest.raises(RuntimeError, match="Could not set tensor of type"):
        ot.zeros(2, dtype=ot.float64, device=device).set_(x)
    with pytest.raises(RuntimeError, match="Expected a Storage of type"):
        torch.zeros(2, dtype=torch.float64).set_(tx.storage())
    with pytest.raises(RuntimeError, match="Expected a Storage of type"):
        ot.zeros(2, dtype=ot.float64, device=device).set_(x.storage())
    with pytest.raises(TypeError):
        torch.empty(0).set_(tx, 2)
    with pytest.raises(TypeError):
        ot.empty(0, device=device).set_(x, 2)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        torch.zeros(2, requires_grad=True).set_(tx)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ot.zeros(2, requires_grad=True, device=device).set_(x)
    with pytest.raises(ot.ShapeError):  # torch would grow the storage
        ot.empty(0, device=device).set_(x.storage(), 0, (7,))


def test_untyped_storage(device):
    s, ts = ot.UntypedStorage(5, device=device), torch.UntypedStorage(5)
    assert s.nbytes() == ts.nbytes() == s.size() == 5
    assert ot.UntypedStorage([1, 2, 255]).tolist() == torch.UntypedStorage([1, 2, 255]).tolist()
    x, tx = ot.arange(3, dtype=ot.int32, device=device), torch.arange(3, dtype=torch.int32)
    assert x.untyped_storage().tolist() == tx.untyped_storage().tolist()
    assert x.untyped_storage()[4] == tx.untyped_storage()[4]
    assert ot.Storage is ot.FloatStorage and torch.Storage is torch.FloatStorage
