"""What is particular to the SYCL backend's dpnp fallback (``sycl/backend.py``: devices
dpctl cannot build OpenCL C for, or ``OMNITENSOR_SYCL_KERNELS=dpnp``; the primitives are
checked on every backend by ``test_backend_contract*.py``): the caching pool for large
results, device aspects, one queue per device (dpnp refuses arrays of one device on
different queues), foreign dpnp arrays joining that queue, and SYCL and OpenCL side by side
in one process. These run where the fallback is the sycl backend of the process;
``test_sycl_backend.py::test_dpnp_fallback_forced`` runs them on this machine by forcing
it."""
from __future__ import annotations

import numpy as np
import pytest

dpnp = pytest.importorskip("dpnp", reason="dpnp is not installed: pip install 'omnitensor[sycl]'")

from omnitensor.backends import registry  # noqa: E402

SY, WHY = registry.try_backend("sycl")  # first: it prepares the environment for dpctl
if SY is None:
    pytest.skip(f"no SYCL device: {WHY}", allow_module_level=True)
from omnitensor.backends.sycl.backend import SyclBackend as DpnpSyclBackend  # noqa: E402

if not isinstance(SY, DpnpSyclBackend):
    pytest.skip("the sycl backend runs generated kernels here (OMNITENSOR_SYCL_KERNELS=dpnp "
                "selects the dpnp fallback these tests are for)", allow_module_level=True)

from omnitensor.backends.sycl.pool import MIN_BYTES  # noqa: E402

from contract_helpers import Probe  # noqa: E402

P = Probe("sycl:0")
Q = SY._queues[0]
DTYPES = P.dtypes
RNG = np.random.default_rng(7)
dev, check = P.dev, P.check


# ------------------------------------------------------------------- memory pool
def test_pool_recycles_without_corrupting_live_views():
    n = MIN_BYTES // 4 * 2
    host = RNG.standard_normal(n).astype(np.float32)
    x = dev(host)
    y = SY.add(x, 1.0)                      # pooled
    v = SY.index(y, (slice(0, n, 2),))      # a view keeps y's block leased
    del y
    z = SY.multiply(x, 3.0)                 # must not land on y's block
    w = SY.exp(z)
    check(v, (host + 1)[::2])
    check(w, np.exp(host * 3), rtol=1e-5)
    del v, z, w
    chain = x
    want = host.copy()
    for i in range(30):  # blocks recycled every step while kernels are in flight
        chain = SY.subtract(SY.multiply(chain, 0.5), float(i))
        want = want * np.float32(0.5) - np.float32(i)
    check(chain, want, rtol=1e-5)
    for d in ("float32", "int64", "bool"):
        check(SY.full((n,), 1, np.dtype(d), 0), np.ones(n, d))
    e = SY.empty((n,), np.dtype(np.float32), 0)
    SY.assign(e, 2.0)
    check(SY.copy(SY.permute(SY.reshape(e, (n // 4, 4)), (1, 0))), np.full((4, n // 4), 2, "f"))
    stats = SY.memory_stats(0)
    assert 0 <= stats["pool_cached_bytes"] <= stats["pool_limit_bytes"]
    SY.empty_cache()
    assert SY.memory_stats(0)["pool_cached_bytes"] == 0


# ------------------------------------------------------------------------ capability
def test_device_info_and_dtypes():
    info = SY.device_info(0)
    d = SY._devices[0]
    assert info["name"] == d.name and info["memory"] > 0 and info["compute_units"] > 0
    assert info["fp64"] == d.has_aspect_fp64 and info["fp16"] == d.has_aspect_fp16
    assert SY.supports_dtype(np.dtype(np.float64), 0) == d.has_aspect_fp64
    assert SY.supports_dtype(np.dtype(np.float16), 0) == d.has_aspect_fp16
    for dt in DTYPES:
        assert SY.dtype_unsupported_reason(dt, 0) is None
    assert SY.unavailable_reason() is None
    assert "dpnp" in SY.version()
    SY.synchronize(0)


def test_every_array_shares_the_device_queue():
    """dpnp raises ExecutionPlacementError when arrays on one device carry different
    queues: everything we make must use the device's one queue."""
    made = [SY.empty((2,), np.dtype(np.float32), 0), SY.full((2,), 1, np.dtype(np.int8), 0),
            SY.arange(0, 1, 3, np.dtype(np.int64), 0), dev(np.ones(2)),
            SY.random_bits((4,), (1, 1), 0, 0),
            SY.searchsorted(dev(np.ones((2, 3))), dev(np.ones((2, 2))), "left")]
    for m in made:
        assert m.sycl_queue == Q
    import dpctl
    assert dpnp.ones(2, device=SY._devices[0]).sycl_queue == Q  # plain dpnp arrays mix
    assert Q == dpctl.get_device_cached_queue(SY._devices[0])


# ------------------------------------------------- sycl and opencl in one process
# Both orders must work: the SYCL backend appends libintelocl.so to OCL_ICD_FILENAMES for
# its own OpenCL loader and restores the variable, and must neither hide PoCL from
# PyOpenCL nor add Intel's platform to PyOpenCL's list (that would renumber opencl:N).
_TWO_BACKENDS = r"""
import json, os, sys
order = sys.argv[1]
import omnitensor as ot
from omnitensor.backends import registry
assert "dpctl" not in sys.modules and "dpnp" not in sys.modules, "import omnitensor pulled dpnp"
out = {}

def run_sycl():
    a = ot.arange(6, dtype=ot.float32, device="sycl:0")
    out["sycl"] = ((a * 2 + 1).sum().item(), str((a + a).device))

def run_opencl():
    import pyopencl as cl
    be, why = registry.try_backend("opencl")  # omnitensor enumerates first (opencl/icd.py)
    out["cl_platforms"] = [p.name for p in cl.get_platforms()]
    if be is not None:  # omnitensor's own OpenCL backend
        b = ot.arange(6, dtype=ot.float32, device="opencl:0")
        out["opencl"] = ((b * 2 + 1).sum().item(), str(b.device))
    else:  # the backend is not usable here: still prove PoCL computes in this process
        ctx = cl.Context(cl.get_platforms()[0].get_devices()[:1])
        q = cl.CommandQueue(ctx)
        import numpy as np, pyopencl.array as cla
        b = cla.to_device(q, np.arange(6, dtype=np.float32))
        out["opencl"] = (float((b * 2 + 1).get().sum()), "pyopencl:" + why[:60])

for step in ((run_sycl, run_opencl) if order == "sycl-first" else (run_opencl, run_sycl)):
    step()
out["env"] = os.environ.get("OCL_ICD_FILENAMES") or os.environ.get("OCL_ICD_VENDORS")
print(json.dumps(out))
"""


def _run(code: str, *args: str, env: dict | None = None) -> str:
    import os
    import subprocess
    import sys
    full = dict(os.environ)
    full.pop("OCL_ICD_FILENAMES", None)
    full.update(env or {})
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                       env=full, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("order", ["sycl-first", "opencl-first"])
def test_sycl_and_opencl_side_by_side(order):
    import json
    pytest.importorskip("pyopencl", reason="pyopencl is not installed: no opencl half")
    baseline = json.loads(_run("import json, pyopencl as cl; "
                               "import omnitensor.backends.opencl.device as D; D.cl_devices(); "
                "print(json.dumps([p.name for p in cl.get_platforms()]))"))
    out = json.loads(_run(_TWO_BACKENDS, order))
    assert out["sycl"] == [36.0, "sycl:0"]
    assert out["opencl"][0] == 36.0
    assert out["cl_platforms"] == baseline, "the sycl backend changed PyOpenCL's platforms"
    assert out["env"] is None, "OCL_ICD_FILENAMES leaked out of the sycl backend's setup"


def test_foreign_dpnp_queue_joins_the_device_queue():
    """A dpnp array made on another queue of the same device (a user's
    ``dpctl.SyclQueue(dev)``) is re-associated with the device's queue without a copy, so
    it combines with omnitensor's arrays instead of raising ExecutionPlacementError."""
    import dpctl

    import omnitensor as ot
    x = dpnp.arange(5, dtype=np.float32, sycl_queue=dpctl.SyclQueue(SY._devices[0]))
    assert x.sycl_queue != Q
    t = ot.from_dlpack(x)
    assert str(t.device) == "sycl:0" and t._data.sycl_queue == Q
    assert t._data.get_array()._pointer == x.get_array()._pointer  # zero copy
    np.testing.assert_array_equal((t + ot.ones(5, device="sycl:0")).numpy(),
                                  np.arange(1, 6, dtype=np.float32))


def test_devices_without_fp64_refuse_float64_clearly():
    import omnitensor as ot
    from omnitensor.errors import UnsupportedDTypeError
    lacking = [i for i in range(SY.device_count()) if not SY._fp64[i]]
    if not lacking:
        pytest.skip("every SYCL device here has the fp64 aspect")
    i = lacking[0]
    with pytest.raises(UnsupportedDTypeError, match="fp64"):
        ot.zeros(3, dtype=ot.float64, device=f"sycl:{i}")
    x = ot.zeros(3, device=f"sycl:{i}")
    with pytest.raises(UnsupportedDTypeError, match="fp64"):
        x.to(ot.float64)


def test_transfer_from_a_foreign_queue_copies_onto_the_device_queue():
    """sycl -> sycl across queues (here: a user's queue on the same device; another
    device works the same way): a USM copy on the device's queue, never a shared buffer
    and never through NumPy."""
    import dpctl
    q2 = dpctl.SyclQueue(SY._devices[0])
    x = dpnp.arange(6, dtype=np.float32, sycl_queue=q2).reshape(2, 3)
    x = x * 2  # pending work on the foreign queue
    y = SY.transfer_from(x.T, SY, 0)
    assert y.sycl_queue == Q and y.flags.c_contiguous
    assert y.get_array()._pointer != x.get_array()._pointer
    np.testing.assert_array_equal(SY.to_numpy(y), (np.arange(6.0).reshape(2, 3) * 2).T)
    x[...] = 0
    np.testing.assert_array_equal(SY.to_numpy(y), (np.arange(6.0).reshape(2, 3) * 2).T)
