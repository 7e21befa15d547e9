"""Creation functions against NumPy, on every device."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor.testing import assert_close


def test_tensor_infers_torch_dtypes(device):
    assert ot.tensor([1, 2], device=device).dtype is ot.int64
    assert ot.tensor([1.0, 2], device=device).dtype is ot.float32
    assert ot.tensor([True, False], device=device).dtype is ot.bool
    assert ot.tensor(3, device=device).shape == ()
    assert ot.tensor([[1, 2], [3, 4]], dtype=ot.float32, device=device).dtype is ot.float32
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    t = ot.tensor(a, device=device)
    assert t.dtype is ot.int16 and t.device is ot.device(device)
    assert_close(t, a)
    a[0, 0] = 99  # tensor() copies
    assert t[0, 0].item() == 0


def test_tensor_rejects_ragged_and_objects(device):
    with pytest.raises(ValueError, match="ragged"):
        ot.tensor([[1, 2], [3]], device=device)
    with pytest.raises((TypeError, ValueError)):
        ot.tensor(["a", "b"], device=device)


def test_from_numpy_shares_memory_on_cpu():
    a = np.zeros(3, dtype=np.float32)
    t = ot.from_numpy(a)
    a[1] = 5
    assert t[1].item() == 5
    t[2] = 7
    assert a[2] == 7


def test_asarray_reuses_and_copies(device):
    t = ot.ones(3, device=device)
    assert ot.asarray(t) is t
    c = ot.asarray(t, copy=True)
    assert c is not t
    c[0] = 5
    assert t[0].item() == 1
    assert ot.asarray([1, 2], dtype=ot.float32, device=device).dtype is ot.float32
    with pytest.raises(ValueError):
        ot.asarray(t, dtype=ot.int32, copy=False)


@pytest.mark.parametrize("fn,np_fn", [(ot.zeros, np.zeros), (ot.ones, np.ones)])
def test_filled(device, fn, np_fn):
    assert_close(fn(2, 3, device=device), np_fn((2, 3), np.float32))
    assert_close(fn((4,), dtype=ot.int32, device=device), np_fn(4, np.int32))
    assert fn((), device=device).shape == ()
    assert fn(0, 3, device=device).shape == (0, 3)


def test_full_and_like(device):
    assert ot.full((2,), 1.5, device=device).dtype is ot.float32
    assert ot.full((2,), 7, device=device).dtype is ot.int64
    assert ot.full((2,), True, device=device).dtype is ot.bool
    x = ot.ones(2, 3, dtype=ot.int16, device=device)
    for f in (ot.zeros_like, ot.ones_like, ot.empty_like):
        y = f(x)
        assert y.shape == (2, 3) and y.dtype is ot.int16 and y.device is x.device
    assert_close(ot.full_like(x, 4), np.full((2, 3), 4, np.int16))
    assert ot.empty(2, 2, device=device).shape == (2, 2)


@pytest.mark.parametrize("args,kw", [((5,), {}), ((2, 9, 3), {}), ((0, 1, 0.1), {}),
                                     ((10, 0, -3), {}), ((1.5, 4.0), {}), ((5,),
                                     {"dtype": "float64"}), ((3, 3), {})])
def test_arange(device, args, kw):
    if kw.get("dtype") == "float64" and not ot.device(device).supports_dtype(ot.float64):
        pytest.skip("no float64")
    t = ot.arange(*args, device=device, **kw)
    ref = np.arange(*args, dtype=kw.get("dtype"))
    if ref.dtype == np.float64 and "dtype" not in kw:
        ref = ref.astype(np.float32)
    assert t.shape == ref.shape
    assert_close(t, ref, check_dtype=False)


def test_linspace_eye_tri_meshgrid(device):
    assert_close(ot.linspace(0, 1, 11, device=device), np.linspace(0, 1, 11, dtype=np.float32))
    assert_close(ot.linspace(-2, 5, 7, endpoint=False, device=device),
                 np.linspace(-2, 5, 7, endpoint=False, dtype=np.float32))
    t = ot.linspace(3, 9, 4, device=device)
    assert t[-1].item() == 9.0 and t[0].item() == 3.0
    assert_close(ot.eye(3, 4, k=1, device=device), np.eye(3, 4, k=1, dtype=np.float32))
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    x = ot.tensor(a, device=device)
    assert_close(ot.tril(x), np.tril(a))
    assert_close(ot.triu(x, 1), np.triu(a, 1))
    gx, gy = ot.meshgrid(ot.arange(3, device=device), ot.arange(2, device=device))
    nx, ny = np.meshgrid(np.arange(3), np.arange(2))
    assert_close(gx, nx)
    assert_close(gy, ny)
    ix, iy = ot.meshgrid(ot.arange(3, device=device), ot.arange(2, device=device),
                         indexing="ij")
    assert ix.shape == (3, 2)


def test_dlpack_roundtrip_cpu():
    a = np.arange(5.0)
    t = ot.from_dlpack(a)
    assert_close(t, a)
    back = np.from_dlpack(ot.arange(4.0))
    assert back.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_from_dlpack_copy_semantics(device):
    n = np.arange(3.0)
    shared = ot.from_dlpack(n)
    shared[0] = 5.0
    assert n[0] == 5.0                      # None: zero-copy when possible
    copied = ot.from_dlpack(n, copy=True)
    copied[0] = 7.0
    assert n[0] == 5.0                      # True: always a copy
    x = ot.arange(4.0, device=device)
    assert ot.from_dlpack(x) is x
    c = ot.from_dlpack(x, copy=True)
    assert c is not x and c.tolist() == x.tolist()
    if device != "cpu":
        with pytest.raises(BufferError, match="copy"):
            ot.from_dlpack(x, device="cpu", copy=False)
        host = ot.from_dlpack(x, device="cpu")
        assert host.device == ot.device("cpu") and host.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_asarray_of_device_arrays_uses_dlpack():
    """dpnp (and CuPy) arrays refuse implicit host conversion: asarray imports them
    through DLPack, on their own device unless told otherwise."""
    if "sycl:0" not in [str(d) for d in ot.devices()]:
        pytest.skip("no sycl device here")
    import dpnp
    a = dpnp.arange(5.0, sycl_queue=ot.device("sycl:0").backend._queues[0])
    t = ot.asarray(a)
    assert t.device == ot.device("sycl:0") and t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    t[1] = 50.0
    assert float(a[1]) == 50.0              # zero-copy
    assert ot.asarray(a, device="cpu").device == ot.device("cpu")
    assert ot.asarray(a, dtype=ot.float32).dtype is ot.float32
    c = ot.from_dlpack(a, copy=True)
    c[0] = 99.0
    assert float(a[0]) == 0.0
    with pytest.raises(BufferError):
        ot.from_dlpack(a, device="cpu", copy=False)
