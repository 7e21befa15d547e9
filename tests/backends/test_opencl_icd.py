"""Which OpenCL devices are offered (``omnitensor.backends.opencl.icd``).

PoCL's pip builds cannot compile for CPUs newer than their LLVM 14 (AMD Zen 5); there,
Intel's OpenCL CPU runtime is added to pyopencl's drivers and PoCL's device is left out.
Each scenario runs in a fresh interpreter (the ICD loader reads its drivers once per
process) with its own cache directory. The forced scenario makes PoCL's compiler fail for
real (an ``-include`` of a missing header through ``POCL_EXTRA_BUILD_FLAGS``), so it runs
the same on machines where PoCL works.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("pyopencl", reason="pyopencl is not installed: pip install 'omnitensor[opencl]'")

from omnitensor.backends import intel_cpu_runtime

_SCENARIO = r"""
import json, os
import omnitensor as ot
from omnitensor.backends import registry
from omnitensor.backends.opencl import device as D
be, why = registry.try_backend("opencl")
out = {"why": why, "skipped": D.skipped_devices(),
       "platforms": [p.name.strip() for p in D.platforms()],
       "vendors_env": os.environ.get("OCL_ICD_VENDORS")}
if be is not None:
    x = ot.arange(5, dtype=ot.float32, device="opencl:0")
    out["sum"] = (x * 2 + 1).sum().item()
    out["platform0"] = be.device_info(0)["platform"]
print(json.dumps(out))
"""

BROKEN_POCL = {"POCL_EXTRA_BUILD_FLAGS": "-include /nonexistent/omnitensor-probe.h"}
INTEL, _ = intel_cpu_runtime.find_library()


def _scenario(tmp_path, env: dict[str, str]) -> dict:
    full = {k: v for k, v in os.environ.items() if k != "OCL_ICD_VENDORS"}
    full.update({"XDG_CACHE_HOME": str(tmp_path)}, **env)
    r = subprocess.run([sys.executable, "-c", _SCENARIO], capture_output=True, text=True,
                       env=full, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_every_offered_device_builds_and_runs(tmp_path):
    out = _scenario(tmp_path, {})
    if "sum" not in out:
        pytest.skip(f"no usable opencl device here: {out['why']}")
    assert out["sum"] == 25.0
    assert out["vendors_env"] is None, "OCL_ICD_VENDORS leaked out of the enumeration"
    for s in out["skipped"]:  # a left-out device says why and what to do
        assert "PoCL" in s and ("Fix:" in s or "cannot build" in s), s


@pytest.mark.skipif(INTEL is None, reason="Intel's OpenCL CPU runtime is not installed "
                    "(pip install intel-opencl-rt)")
def test_pocl_that_cannot_build_gives_way_to_intels_cpu_runtime(tmp_path):
    out = _scenario(tmp_path, BROKEN_POCL)
    assert any("pthread" in s or "PoCL" in s for s in out["skipped"]), out
    assert out["platforms"][-1] == "Intel(R) OpenCL", out["platforms"]
    assert out["platform0"] == "Intel(R) OpenCL" and out["sum"] == 25.0
    assert out["vendors_env"] is None
    probes = list((tmp_path / "omnitensor").glob("opencl-pocl-probe-*.json"))
    assert len(probes) == 1 and json.loads(probes[0].read_text()), \
        "the child probe's failure list was not cached"
    again = _scenario(tmp_path, BROKEN_POCL)  # from the cache: the same devices
    assert again["platform0"] == out["platform0"] and again["sum"] == 25.0


def test_users_own_vendors_directory_is_left_alone(tmp_path):
    """With OCL_ICD_VENDORS set, omnitensor adds no driver; a PoCL that cannot build is
    still left out, with a reason that names the fix instead of a raw build log."""
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    out = _scenario(tmp_path, {**BROKEN_POCL, "OCL_ICD_VENDORS": str(vendors)})
    assert "Intel(R) OpenCL" not in out["platforms"]
    if out["platforms"] == ["Portable Computing Language"]:  # only pyopencl's own PoCL
        assert "sum" not in out and "no usable OpenCL device" in out["why"], out
        assert "cannot build a one-line kernel" in out["why"] or "Fix:" in out["why"]
