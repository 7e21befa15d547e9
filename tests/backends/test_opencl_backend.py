"""What is particular to the OpenCL backend (the primitives are checked on every backend by
``test_backend_contract*.py``): device enumeration and info, the float16 extension, lazy
import, out-of-memory errors, GEMM paths that agree bit for bit, and DLPack export of
mapped host memory (zero copy on host-memory devices such as PoCL's CPU device)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyopencl", reason="pyopencl is not installed: pip install 'omnitensor[opencl]'")

from omnitensor.backends import registry
from omnitensor.errors import BackendError, UnsupportedDTypeError

from contract_helpers import Probe, rand, wide

CL, WHY = registry.try_backend("opencl")
if CL is None:
    pytest.skip(f"no OpenCL device: {WHY}", allow_module_level=True)

P = Probe("opencl:0")
DTYPES = P.dtypes
dev, host, check = P.dev, P.host, P.check


def test_device_identity_and_info():
    n = CL.device_count()
    assert n >= 1
    import pyopencl as cl

    from omnitensor.backends.opencl import device as D
    plats = D.platforms()  # the loader's order, Intel's CPU runtime last when icd added it
    assert sorted(p.name for p in plats) == sorted(p.name for p in cl.get_platforms())
    assert [p.name for p in plats] == sorted(
        (p.name for p in cl.get_platforms()), key=lambda nm: nm.strip() == "Intel(R) OpenCL")
    listed = [d for p in plats for d in p.get_devices()]
    skipped = D.skipped_devices()  # devices that cannot build a kernel, each with a reason
    expected = [d for d in listed if not any(s.startswith(D.device_label(d)) for s in skipped)]
    assert n == len(expected) == len(listed) - len(skipped)
    info = CL.device_info(0)
    for key in ("name", "platform", "vendor", "compute_units", "memory", "fp16", "fp64",
                "driver"):
        assert key in info
    assert info["name"] == expected[0].name.strip()
    assert "pyopencl" in CL.version()
    assert CL.name == "opencl" and CL.asynchronous is True
    assert CL.unavailable_reason() is None


def test_float16_reason_names_the_extension():
    if CL.supports_dtype(np.dtype("float16"), 0):
        pytest.skip("this device has cl_khr_fp16")
    why = CL.dtype_unsupported_reason(np.dtype("float16"), 0)
    assert "cl_khr_fp16" in why and CL.device_info(0)["name"] in why
    with pytest.raises(UnsupportedDTypeError):
        CL.empty((2,), np.dtype("float16"), 0)


def test_import_omnitensor_does_not_import_pyopencl():
    import subprocess
    import sys
    code = "import sys, omnitensor; print('pyopencl' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_out_of_memory_is_a_clear_error():
    with pytest.raises(BackendError, match=r"opencl:0.*(allocat|memory)"):
        CL.empty((1 << 40,), np.dtype("float32"), 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_slices_are_bitwise_equal(dtype):
    """A product's rows and columns equal the products of the operand's rows and columns
    exactly (the Array API's tensordot/matmul stack checks): the small generic kernel and
    the register-blocked one fuse multiply-adds alike and sum k in one order."""
    from omnitensor.backends.opencl import gemm
    a, b = rand((50, 37), dtype, -1, 1), rand((37, 45), dtype, -1, 1)
    assert a.shape[0] * a.shape[1] * b.shape[1] > gemm._SMALL  # the full product is "fast"
    full = host(CL.matmul(dev(a), dev(b)))
    for i in (0, 7, 49):
        np.testing.assert_array_equal(host(CL.matmul(dev(a[i:i + 1]), dev(b))), full[i:i + 1])
    col = host(CL.matmul(dev(a), dev(np.ascontiguousarray(b[:, 3:4]))))
    np.testing.assert_array_equal(col[:, 0], full[:, 3])
    check(CL.matmul(dev(a), dev(b)), wide(a) @ wide(b), rtol=1e-4 if dtype == "float32"
          else 1e-10, dtype=np.dtype(dtype))




# -------------------------------------------------------------------------- DLPack
def _capsule_name(cap) -> str:
    return repr(cap).split('"')[1]


@pytest.mark.parametrize("dtype", [d for d in DTYPES])
def test_dlpack_export_every_dtype(dtype):
    import omnitensor as ot
    a = rand((3, 4), dtype)
    t = ot.asarray(a, device="opencl:0")
    assert t.__dlpack_device__() == (1, 0)  # PoCL exports host memory
    assert CL.dlpack_device(t._data) == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(t), a)
    for kw in ({}, {"copy": True}, {"copy": False}, {"max_version": (0, 0)},
               {"max_version": (1, 0), "dl_device": (1, 0), "copy": False},
               {"max_version": (2, 0), "dl_device": (1, 0), "copy": True}):
        cap = t.__dlpack__(**kw)
        mv = kw.get("max_version")
        assert _capsule_name(cap) == ("dltensor_versioned" if mv and mv[0] >= 1
                                      else "dltensor")


def test_dlpack_zero_copy_views_and_lifetime():
    import gc

    import omnitensor as ot
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = ot.asarray(a, device="opencl:0")
    shared = np.from_dlpack(t)
    t.add_(100)                      # device writes are seen by the consumer (once done)
    CL.synchronize(0)
    np.testing.assert_array_equal(shared, a + 100)
    shared[0, 0, 0] = -1             # ... and the consumer's writes by the device
    assert t[0, 0, 0].item() == -1
    copied = np.from_dlpack(t, copy=True)
    copied[1, 1, 1] = 7
    assert t[1, 1, 1].item() == a[1, 1, 1] + 100
    # strided, flipped, broadcast, 0-d and empty views
    ref = shared.copy()
    v = t.permute(2, 0, 1).flip(0)[1:, :, ::2]
    np.testing.assert_array_equal(np.from_dlpack(v), ref.transpose(2, 0, 1)[::-1][1:, :, ::2])
    np.testing.assert_array_equal(np.from_dlpack(t[1, 2, 3]), ref[1, 2, 3])
    np.testing.assert_array_equal(np.from_dlpack(t[0, :1].broadcast_to((5, 4))),
                                  np.broadcast_to(ref[0, :1], (5, 4)))
    assert np.from_dlpack(ot.ones((0, 3), device="opencl:0")).shape == (0, 3)
    # the capsule keeps the mapping and the buffer alive: the pool cannot reuse the memory
    u = ot.arange(5, dtype=ot.float64, device="opencl:0") * 2
    cap = u.__dlpack__(max_version=(1, 0))
    del u, t, v
    gc.collect()
    junk = [ot.full((5,), 7.0, dtype=ot.float64, device="opencl:0") for _ in range(20)]

    class Holder:
        def __dlpack__(self, **kw):
            return cap

        def __dlpack_device__(self):
            return (1, 0)

    np.testing.assert_array_equal(np.from_dlpack(Holder()), np.arange(5.0) * 2)
    assert len(junk) == 20 and shared[1, 2, 3] == a[1, 2, 3] + 100


def test_dlpack_errors_and_from_dlpack():
    import omnitensor as ot
    t = ot.arange(4, device="opencl:0")
    with pytest.raises(BufferError, match="kDLCPU"):
        t.__dlpack__(dl_device=(2, 0))

    class Wrapper:  # a foreign producer exporting an opencl tensor
        def __dlpack__(self, **kw):
            return t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return t.__dlpack_device__()

    for kw in ({}, {"device": "opencl:0"}, {"copy": True}):
        y = ot.from_dlpack(Wrapper(), **kw)
        assert y.tolist() == [0, 1, 2, 3]
        assert str(y.device) == kw.get("device", "cpu")


def test_dlpack_device_memory_exports_only_host_copies(monkeypatch):
    """A GPU (not host-memory) device reports kDLOpenCL and exports a host copy only when
    asked for dl_device=(1, 0) with a copy allowed (simulated on PoCL)."""
    import omnitensor as ot
    t = ot.arange(6, dtype=ot.float32, device="opencl:0").reshape(2, 3)
    monkeypatch.setattr(CL.state(0), "dlpack_host", False, raising=False)
    assert t.__dlpack_device__() == (4, 0)
    with pytest.raises(BufferError, match="dl_device=\\(1, 0\\)"):
        t.__dlpack__()
    with pytest.raises(BufferError, match="copy=False"):
        t.__dlpack__(dl_device=(1, 0), copy=False)
    for copy in (None, True):
        cap = t.__dlpack__(dl_device=(1, 0), copy=copy, max_version=(1, 0))
        assert _capsule_name(cap) == "dltensor_versioned"
    np.testing.assert_array_equal(np.from_dlpack(t, device="cpu"),
                                  np.arange(6, dtype=np.float32).reshape(2, 3))


def test_reshape_needs_a_resolved_shape_and_views_share_the_buffer():
    """Views are metadata on one buffer; a shape core has not resolved (or of the wrong
    size) is refused at once, not inside a later kernel launch."""
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    x = dev(a)
    assert CL.reshape(x, (2, 2, 6)).data is x.data
    assert CL.permute(x, (1, 0)).data is x.data
    assert CL.reshape(x, (24,), copy=True).data is not x.data
    for bad in ((-1, 6), (5, 6), (2, -2, -6)):
        with pytest.raises(ValueError, match="resolved shape of 24 elements"):
            CL.reshape(x, bad)
