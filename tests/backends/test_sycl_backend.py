"""What is particular to the SYCL backend on generated kernels (the primitives are checked
on every backend by ``test_backend_contract*.py``): the USM pool and its reuse while
kernels are in flight, device aspects, the in-order queue shared with oneMKL (dpnp on views
of our memory), DLPack with dpnp, SYCL and OpenCL side by side in one process, and the
dpnp fallback forced on this machine."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

dpnp = pytest.importorskip("dpnp", reason="dpnp is not installed: pip install 'omnitensor[sycl]'")

import omnitensor as ot  # noqa: E402
from omnitensor.backends import registry  # noqa: E402

SY, WHY = registry.try_backend("sycl")  # first: it prepares the environment for dpctl
if SY is None:
    pytest.skip(f"no SYCL device: {WHY}", allow_module_level=True)
from omnitensor.backends.sycl.kernel_backend import SyclBackend  # noqa: E402

if not isinstance(SY, SyclBackend):
    pytest.skip(f"the sycl backend runs on dpnp here ({WHY or 'fallback'}): "
                f"test_sycl_dpnp_backend.py covers it", allow_module_level=True)

from contract_helpers import Probe  # noqa: E402

P = Probe("sycl:0")
ST = SY.state(0)
RNG = np.random.default_rng(7)
dev, check = P.dev, P.check
HERE = os.path.dirname(os.path.abspath(__file__))


# ------------------------------------------------------------------- memory pool
def test_pool_reuses_blocks_without_corrupting_live_views():
    n = 1 << 16
    host = RNG.standard_normal(n).astype(np.float32)
    x = dev(host)
    y = SY.add(x, 1.0)
    v = SY.index(y, (slice(0, n, 2),))      # a view keeps y's block lent
    addr = y.data.int_ptr
    del y
    z = SY.multiply(x, 3.0)                 # must not land on y's block
    assert z.data.int_ptr != addr
    w = SY.exp(z)
    check(v, (host + 1)[::2])
    check(w, np.exp(host * 3), rtol=1e-5)
    del v, z, w
    chain, want = x, host.copy()
    seen = set()
    for i in range(30):  # blocks come back and are reused while kernels are queued
        chain = SY.subtract(SY.multiply(chain, 0.5), float(i))
        seen.add(chain.data.int_ptr)
        want = want * np.float32(0.5) - np.float32(i)
    check(chain, want, rtol=1e-5)
    assert len(seen) <= 3, "freed blocks were not reused"
    stats = SY.memory_stats(0)
    assert 0 < stats["allocated_bytes"] <= stats["reserved_bytes"]
    SY.empty_cache()
    assert SY.memory_stats(0)["reserved_bytes"] == SY.memory_stats(0)["allocated_bytes"]


def test_small_arrays_reuse_addresses():
    """Tiny results (0-d, 8 elements) come from the pool too: their addresses repeat,
    which starves the Intel runtime's per-address USMFree leak (tests/soak)."""
    x = dev(np.arange(8, dtype=np.float32))
    addrs = set()
    for _ in range(200):
        r = SY.sum(SY.add(x, 1.0), (0,), False)
        addrs.add(r.data.int_ptr)
        del r
    assert len(addrs) <= 4


# ------------------------------------------------------------------------ capability
def test_device_info_and_dtypes():
    info = SY.device_info(0)
    d = SY._devices[0]
    assert info["name"] == d.name and info["memory"] > 0 and info["compute_units"] > 0
    assert info["fp64"] == d.has_aspect_fp64 and info["fp16"] == d.has_aspect_fp16
    assert SY.supports_dtype(np.dtype(np.float64), 0) == d.has_aspect_fp64
    assert SY.supports_dtype(np.dtype(np.float16), 0) == d.has_aspect_fp16
    assert SY.unavailable_reason() is None
    assert "dpctl" in SY.version() and "generated" in SY.version()
    assert ST.queue.is_in_order
    SY.synchronize(0)


def test_devices_without_fp64_refuse_float64_clearly():
    from omnitensor.errors import UnsupportedDTypeError
    lacking = [i for i in range(SY.device_count())
               if not SY.supports_dtype(np.dtype(np.float64), i)]
    if not lacking:
        pytest.skip("every SYCL device here has the fp64 aspect")
    with pytest.raises(UnsupportedDTypeError, match="fp64"):
        ot.zeros(3, dtype=ot.float64, device=f"sycl:{lacking[0]}")


# -------------------------------------------------- oneMKL on the same in-order queue
@pytest.mark.parametrize("shape", [(300, 200, 100), (2, 160, 130, 120)])
def test_onemkl_matmul_ordered_with_generated_kernels(shape):
    """A large matmul (oneMKL through dpnp views) between generated kernels: no host wait
    between them, results in order (the in-order queue)."""
    *batch, m, k, n = shape
    a = RNG.standard_normal((*batch, m, k)).astype(np.float32)
    b = RNG.standard_normal((*batch, k, n)).astype(np.float32)
    da, db = dev(a), dev(b)
    prod = SY.matmul(SY.multiply(da, 2.0), db)   # producer kernel, then oneMKL
    out = SY.add(prod, 1.0)                      # a kernel reading oneMKL's result
    check(out, (2 * a) @ b + 1, rtol=2e-4, atol=2e-4)


def test_linalg_and_fft_hooks_run_on_views():
    a = RNG.standard_normal((6, 6)) + 6 * np.eye(6)
    x = dev(a)
    check(SY.linalg_inv(SY.add(x, 0.0)), np.linalg.inv(a), rtol=1e-9, atol=1e-9)
    s = RNG.standard_normal(16)
    check(SY.fft_rfft(dev(s)), np.fft.rfft(s), rtol=1e-9, atol=1e-9)


# ----------------------------------------------------------------------- DLPack
def test_dlpack_both_ways_with_dpnp():
    import dpctl
    q2 = dpctl.SyclQueue(SY._devices[0])             # a user's own queue
    x = dpnp.arange(5, dtype=np.float32, sycl_queue=q2) * 2   # pending work there
    t = ot.from_dlpack(x)
    assert str(t.device) == "sycl:0"
    assert t._data.data.int_ptr == x.get_array()._pointer  # zero copy
    np.testing.assert_array_equal((t + ot.ones(5, device="sycl:0")).numpy(),
                                  np.arange(5, dtype=np.float32) * 2 + 1)
    u = ot.arange(6, dtype=ot.float32, device="sycl:0") * 3
    back = dpnp.from_dlpack(u)
    np.testing.assert_array_equal(dpnp.asnumpy(back), np.arange(6, dtype=np.float32) * 3)


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
    b = ot.arange(6, dtype=ot.float32, device="opencl:0")  # omnitensor enumerates first
    out["cl_platforms"] = [p.name for p in cl.get_platforms()]
    out["opencl"] = ((b * 2 + 1).sum().item(), str(b.device))

for step in ((run_sycl, run_opencl) if order == "sycl-first" else (run_opencl, run_sycl)):
    step()
out["env"] = os.environ.get("OCL_ICD_FILENAMES") or os.environ.get("OCL_ICD_VENDORS")
print(json.dumps(out))
"""


def _run(code: str, *args: str, env: dict | None = None, timeout: int = 300
         ) -> subprocess.CompletedProcess:
    full = dict(os.environ)
    full.pop("OCL_ICD_FILENAMES", None)
    full.update(env or {})
    return subprocess.run([sys.executable, *(["-c", code] if code else []), *args],
                          capture_output=True, text=True, env=full, timeout=timeout,
                          cwd=HERE)


@pytest.mark.parametrize("order", ["sycl-first", "opencl-first"])
def test_sycl_and_opencl_side_by_side(order):
    if registry.try_backend("opencl")[0] is None:
        pytest.skip("no opencl device")
    base = _run("import json, pyopencl as cl; "
                "import omnitensor.backends.opencl.device as D; D.cl_devices(); "
                "print(json.dumps([p.name for p in cl.get_platforms()]))")
    assert base.returncode == 0, base.stderr[-3000:]
    r = _run(_TWO_BACKENDS, order)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["sycl"] == [36.0, "sycl:0"] and out["opencl"] == [36.0, "opencl:0"]
    assert out["cl_platforms"] == json.loads(base.stdout.strip().splitlines()[-1]), \
        "the sycl backend changed PyOpenCL's platforms"
    assert out["env"] is None, "OCL_ICD_FILENAMES leaked out of the sycl backend's setup"


# --------------------------------------------------------------- the dpnp fallback
def test_dpnp_fallback_forced():
    """Devices dpctl cannot build OpenCL C for (Level Zero GPUs without an OpenCL entry)
    run on dpnp's kernels: forced here with OMNITENSOR_SYCL_KERNELS=dpnp, the fallback's own
    tests and the contract suite's core pass on this machine."""
    probe = _run("import omnitensor as ot; from omnitensor.backends import registry; "
                 "be = registry.get_backend('sycl'); print(type(be).__module__); "
                 "print((ot.arange(4, device='sycl:0') * 2).sum().item())",
                 env={"OMNITENSOR_SYCL_KERNELS": "dpnp"})
    assert probe.returncode == 0, probe.stderr[-3000:]
    assert probe.stdout.split() == ["omnitensor.backends.sycl.backend", "12"]
    r = _run("", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
             "test_sycl_dpnp_backend.py", "test_backend_contract.py",
             env={"OMNITENSOR_SYCL_KERNELS": "dpnp", "OMNITENSOR_TEST_DEVICES": "sycl:0"},
             timeout=1500)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout.splitlines()[-1]


def test_bad_kernels_setting_is_refused():
    r = _run("import omnitensor as ot; ot.zeros(1, device='sycl:0')",
             env={"OMNITENSOR_SYCL_KERNELS": "fast"})
    assert r.returncode != 0 and "OMNITENSOR_SYCL_KERNELS" in r.stderr


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_generated_matmul_slices_are_bitwise_equal(dtype):
    """The generic and register-blocked GEMM kernels fuse every multiply-add alike on
    Intel's compiler too (explicit fma: kernels/gemm.MAC_MACRO), so a product's rows and
    columns equal the products of the operand's rows and columns exactly."""
    a = RNG.uniform(-1, 1, (50, 37)).astype(dtype)
    b = RNG.uniform(-1, 1, (37, 45)).astype(dtype)
    full = P.host(SY.matmul(dev(a), dev(b)))
    for i in (0, 7, 49):
        np.testing.assert_array_equal(P.host(SY.matmul(dev(a[i:i + 1]), dev(b))),
                                      full[i:i + 1])
    col = P.host(SY.matmul(dev(a), dev(np.ascontiguousarray(b[:, 3:4]))))
    np.testing.assert_array_equal(col[:, 0], full[:, 3])
