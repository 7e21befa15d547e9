"""Finding the SYCL device without manual environment (``omnitensor.backends.sycl.env``).

Each scenario runs in a fresh interpreter: the OpenCL loader reads ``OCL_ICD_FILENAMES``
once per process, so only a new process shows what a user would see.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from omnitensor.backends import intel_cpu_runtime
from omnitensor.backends.sycl import env as sycl_env

pytest.importorskip("dpctl", reason="dpctl is not installed: pip install 'omnitensor[sycl]'")

LIB, _SEARCHED = sycl_env.find_library()

_PROBE = r"""
import json, os, sys
import omnitensor as ot
x = ot.ones(3)                      # ordinary use must not load dpctl/dpnp
loaded_early = "dpctl" in sys.modules or "dpnp" in sys.modules
from omnitensor.backends import registry
from omnitensor.backends.sycl import env as sycl_env
be, why = registry.try_backend("sycl")
rep = sycl_env.report()
print(json.dumps({
    "loaded_early": loaded_early, "count": be.device_count() if be else 0, "why": why,
    "library": rep.library if rep else None, "appended": rep.appended if rep else None,
    "env_after": os.environ.get("OCL_ICD_FILENAMES"),
    "cache": os.environ.get("SYCL_CACHE_PERSISTENT"),
}))
"""


def probe(**env: str | None) -> dict:
    full = dict(os.environ)
    for k in ("OCL_ICD_FILENAMES", "ONEAPI_DEVICE_SELECTOR", "SYCL_CACHE_PERSISTENT"):
        full.pop(k, None)
    for k, v in env.items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    r = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                       env=full, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_candidates_cover_the_python_prefixes():
    paths = intel_cpu_runtime.candidates()
    assert os.path.join(sys.prefix, "lib", "libintelocl.so") in paths
    assert os.path.join(sys.base_prefix, "lib", "libintelocl.so") in paths
    assert all(os.path.basename(p) == "libintelocl.so" for p in paths)


def test_icd_file_with_placeholder_prefix_falls_back_to_prefix_lib(tmp_path):
    vendors = tmp_path / "etc" / "OpenCL" / "vendors"
    vendors.mkdir(parents=True)
    (vendors / "intel-cpu.icd").write_text("/opt/anaconda1anaconda2anaconda3/lib/libintelocl.so\n")
    (vendors / "intel-fpga_emu.icd").write_text("/somewhere/libintelocl_emu.so\n")
    found = intel_cpu_runtime._from_icd_files(str(tmp_path))
    assert found == ["/opt/anaconda1anaconda2anaconda3/lib/libintelocl.so",
                     str(tmp_path / "lib" / "libintelocl.so")]


@pytest.mark.skipif(LIB is None, reason="intel-opencl-rt (libintelocl.so) is not installed")
def test_device_found_without_manual_environment():
    out = probe()
    assert not out["loaded_early"], "import omnitensor / cpu ops imported dpctl or dpnp"
    assert out["count"] >= 1, out["why"]
    assert out["library"] == LIB and out["appended"]
    assert out["env_after"] is None  # restored once the loader had read it
    assert out["cache"] == "1"


@pytest.mark.skipif(LIB is None, reason="intel-opencl-rt (libintelocl.so) is not installed")
def test_user_ocl_icd_filenames_is_extended_then_restored():
    mine = "/nonexistent/libsomevendor.so"
    out = probe(OCL_ICD_FILENAMES=mine, SYCL_CACHE_PERSISTENT="0")
    assert out["count"] >= 1, out["why"]
    assert out["appended"] and out["env_after"] == mine
    assert out["cache"] == "0"  # the user's choice wins
    theirs = probe(OCL_ICD_FILENAMES=LIB)  # already pointing at the runtime: left alone
    assert theirs["count"] >= 1 and not theirs["appended"] and theirs["env_after"] == LIB


def test_no_device_explains_what_was_searched():
    # a real configuration that leaves no device: only Level Zero GPUs allowed, none here
    out = probe(ONEAPI_DEVICE_SELECTOR="level_zero:*")
    if out["count"]:
        pytest.skip("this machine has a Level Zero device")
    why = out["why"]
    assert "libintelocl.so" in why and "ONEAPI_DEVICE_SELECTOR" in why
    assert "render" in why and "intel-opencl-rt" in why


def test_missing_dpctl_names_the_pip_extra():
    code = ("import sys; sys.modules['dpctl'] = None\n"
            "from omnitensor.backends import registry\n"
            "print(registry.try_backend('sycl')[1])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert "pip install 'omnitensor[sycl]'" in r.stdout, r.stdout + r.stderr


def test_report_describes_search():
    rep = sycl_env.EnvReport(library=None, searched=["/a/lib/libintelocl.so"])
    text = rep.describe()
    assert "/a/lib/libintelocl.so" in text and "was not found" in text
