"""Which OpenCL drivers pyopencl sees, decided before the ICD loader first looks.

Why this module exists: the PoCL that pip installs (``pocl-binary-distribution`` 3.0, and
the copy inside pyopencl's wheels) compiles kernels with LLVM 14, which does not know CPUs
newer than itself (AMD Zen 5, family 26): it names the host CPU ``generic``, which its own
clang then refuses (``unknown target CPU 'generic'``), so no kernel builds and the CPU
device is dead. Intel's OpenCL CPU runtime (``intel-opencl-rt``, part of
``omnitensor[sycl]`` and ``[all]``) does run there.

The loader reads its list of drivers once per process, so whether to add Intel's runtime
must be known before pyopencl's first ``get_platforms()``. A child process tries a one-line
kernel on every PoCL CPU device (about 0.3 s); its answer is cached on disk, keyed by what
it depends on (the CPU, the registered drivers, pyopencl's bundled ones, PoCL's environment
variables). Only when such a device fails, Intel's runtime is installed and the user has not
set ``OCL_ICD_VENDORS`` do we point the loader, for that one enumeration, at a temporary
vendors directory holding the system's ICD files plus Intel's; its platform is ordered last.
Devices that cannot build a kernel are left out of ``opencl:N`` (:func:`build_error`), so
on such a machine ``opencl:0`` is Intel's CPU device, and on every other machine nothing
changes.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

from .. import intel_cpu_runtime

ENV_VAR = "OCL_ICD_VENDORS"
SYSTEM_VENDORS = "/etc/OpenCL/vendors"
POCL_PLATFORM = "Portable Computing Language"
INTEL_CPU_PLATFORM = "Intel(R) OpenCL"
#: the smallest program: it builds only if the device's compiler can target the device
PROBE_SOURCE = "__kernel void omnitensor_probe(__global float *a) { a[0] += 1.0f; }"

_CHILD = r"""
import json, sys
import pyopencl as cl
failed = []
for p in cl.get_platforms():
    if p.name.strip() != %(pocl)r:
        continue
    for d in p.get_devices(device_type=cl.device_type.CPU):
        try:
            cl.Program(cl.Context([d]), %(src)r).build()
        except cl.Error as e:
            failed.append({"device": d.name.strip(), "error": str(e)})
print(json.dumps(failed))
""" % {"pocl": POCL_PLATFORM, "src": PROBE_SOURCE}


@dataclass
class Plan:
    """What :func:`prepare` decided, for ``omnitensor info`` and error messages."""

    pocl_failures: list[dict[str, str]] = field(default_factory=list)
    intel_library: str | None = None      # Intel's runtime, when we added it
    user_vendors: str | None = None       # OCL_ICD_VENDORS as the user set it


def _cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "omnitensor")


def _cpu_identity() -> list[str]:
    """The lines of /proc/cpuinfo that name the CPU (what LLVM's host detection reads)."""
    keys = ("vendor_id", "cpu family", "model", "model name", "stepping")
    try:
        with open("/proc/cpuinfo") as f:
            head = f.read(8192).split("\n\n")[0]
    except OSError:
        return []
    return [ln for ln in head.splitlines() if ln.split(":")[0].strip() in keys]


def _drivers() -> list[str]:
    """Every ICD file the loader may read, with its content, and pyopencl's own drivers."""
    found = []
    import importlib.util
    spec = importlib.util.find_spec("pyopencl")
    libs = (os.path.join(os.path.dirname(spec.origin), ".libs")
            if spec and spec.origin else "")
    for d in (SYSTEM_VENDORS, libs):
        for icd in sorted(glob.glob(os.path.join(d, "*.icd"))):
            try:
                with open(icd) as f:
                    found.append(f"{icd}={f.read().strip()}@{os.path.getmtime(icd)}")
            except OSError:
                continue
    return found


def _cache_key() -> str:
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("POCL_"))
    parts = {"cpu": _cpu_identity(), "drivers": _drivers(), "env": env,
             "python": sys.executable}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:20]


def _probe_pocl() -> list[dict[str, str]]:
    """PoCL CPU devices whose compiler fails on a one-line kernel, from a child process
    (cached). A child that fails itself (no pyopencl, a crash) reports nothing."""
    path = os.path.join(_cache_dir(), f"opencl-pocl-probe-{_cache_key()}.json")
    try:
        with open(path) as f:
            return list(json.load(f))
    except (OSError, ValueError):
        pass
    try:
        r = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                           timeout=120)
        failures = json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else []
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return []
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=os.path.dirname(path), delete=False) as tmp:
            json.dump(failures, tmp)
        os.replace(tmp.name, path)
    except OSError:  # a read-only home: probe again next time
        pass
    return failures


def _vendors_with(library: str, into: str) -> None:
    """Fill the directory ``into`` with the system's ICD files and one naming ``library``
    (the file name sorts last, so the loader lists it after the system's drivers)."""
    for icd in glob.glob(os.path.join(SYSTEM_VENDORS, "*.icd")):
        try:
            with open(icd) as f:
                target = f.read()
        except OSError:
            continue
        with open(os.path.join(into, os.path.basename(icd)), "w") as out:
            out.write(target)
    with open(os.path.join(into, "zz-omnitensor-intel-cpu.icd"), "w") as out:
        out.write(library + "\n")


def _system_names_intel() -> bool:
    for icd in glob.glob(os.path.join(SYSTEM_VENDORS, "*.icd")):
        try:
            with open(icd) as f:
                if os.path.basename(f.read().strip()).startswith(intel_cpu_runtime.LIBRARY):
                    return True
        except OSError:
            continue
    return False


def get_platforms(cl: Any) -> tuple[list[Any], Plan]:
    """``cl.get_platforms()`` with Intel's CPU runtime added where PoCL cannot build
    (see the module docstring), and the plan that was followed."""
    plan = Plan(user_vendors=os.environ.get(ENV_VAR))
    library = None
    if plan.user_vendors is None and not _system_names_intel():
        library, _ = intel_cpu_runtime.find_library()
    if library is None:
        return cl.get_platforms(), plan
    plan.pocl_failures = _probe_pocl()
    if not plan.pocl_failures:
        return cl.get_platforms(), plan
    plan.intel_library = library
    with tempfile.TemporaryDirectory(prefix="omnitensor-icd-") as vendors:
        _vendors_with(library, vendors)
        os.environ[ENV_VAR] = vendors
        try:
            platforms = cl.get_platforms()  # the loader reads the directory here, once
        finally:
            del os.environ[ENV_VAR]
    platforms.sort(key=lambda p: p.name.strip() == INTEL_CPU_PLATFORM)
    return platforms, plan


def build_error(cl: Any, dev: Any) -> str | None:
    """Why ``dev`` cannot build a kernel, for PoCL's CPU devices (None: it can, or it is
    another driver's device, which is not probed: a GPU build costs far more)."""
    if dev.platform.name.strip() != POCL_PLATFORM or not dev.type & cl.device_type.CPU:
        return None
    try:
        cl.Program(cl.Context([dev]), PROBE_SOURCE).build()
    except cl.Error as e:
        text = str(e)
        if "unknown target CPU" in text:
            return ("PoCL's compiler (LLVM 14 in pip's PoCL) does not know this CPU and "
                    "builds no kernel ('unknown target CPU'). Fix: `pip install "
                    "intel-opencl-rt` (omnitensor then offers Intel's OpenCL CPU runtime as "
                    "this CPU's device), or install a PoCL built on a newer LLVM "
                    "(e.g. conda-forge's pocl)")
        return f"it cannot build a one-line kernel: {text.strip().splitlines()[-1]}"
    return None
