"""Find the SYCL runtime's OpenCL CPU driver before dpctl looks for devices.

Why this module exists: the ``intel-opencl-rt`` wheel installs Intel's OpenCL CPU runtime
(``libintelocl.so``) into ``<prefix>/lib`` and an ICD file into
``<prefix>/etc/OpenCL/vendors``, but the OpenCL ICD loader that the SYCL runtime uses only
scans ``/etc/OpenCL/vendors``, and the shipped ``.icd`` file still holds the conda build's
placeholder prefix. So ``dpctl.get_devices()`` is empty on a plain pip install unless
``OCL_ICD_FILENAMES`` names the library. We locate it and *append* it to
``OCL_ICD_FILENAMES`` (a user's own entries are kept) right before dpctl enumerates
devices, then :func:`restore` puts the variable back: the loader reads it once, and leaving
it set would leak Intel's platform into other OpenCL loaders in this process (a PyOpenCL
built against the same Khronos loader would then list an extra platform and renumber
``opencl:N``) and into child processes.

We also turn on the SYCL runtime's on-disk kernel cache (``SYCL_CACHE_PERSISTENT=1``,
unless the user set the variable, e.g. to 0): dpnp ships its kernels as SPIR-V that the
driver compiles on first use, 0.1-0.5 s per (kernel, dtype) on the OpenCL CPU device, and
without the cache every new process pays that again. It only concerns SYCL programs, so
it stays set.

Nothing here imports dpctl or dpnp; ``import omnitensor`` never imports this module either.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from ..intel_cpu_runtime import INSTALL_HINT, LIBRARY, find_library

ENV_VAR = "OCL_ICD_FILENAMES"
CACHE_VAR = "SYCL_CACHE_PERSISTENT"

#: what to install when no device is found, by device kind
DRIVER_HINTS = (
    "Intel GPUs (Arc, Data Center GPU Max/Flex, integrated Xe): install the Intel GPU "
    "compute runtime with its Level Zero and OpenCL drivers (Ubuntu/Debian: "
    "`apt install intel-opencl-icd libze-intel-gpu1 libze1`, older releases "
    "`intel-level-zero-gpu level-zero`; see dgpu-docs.intel.com) and add your user to the "
    "`render` group",
    INSTALL_HINT,
)


@dataclass
class EnvReport:
    """What :func:`prepare` searched, found and changed (shown when no device is found)."""

    library: str | None = None           # the libintelocl.so we use, if any
    searched: list[str] = field(default_factory=list)  # every path we looked at
    user_value: str | None = None        # OCL_ICD_FILENAMES before we touched it
    appended: bool = False               # whether we appended ``library`` to it
    dpctl_preloaded: bool = False        # dpctl was imported before us (too late to help?)
    loaders_preloaded: list[str] = field(default_factory=list)  # libOpenCL already mapped
    restored: bool = False
    kernel_cache: bool = False           # whether we turned on the persistent kernel cache

    def describe(self) -> str:
        """A paragraph for ``unavailable_reason``: what was searched and what to do."""
        lines = []
        if self.library:
            how = ("appended to OCL_ICD_FILENAMES" if self.appended
                   else "already listed in OCL_ICD_FILENAMES")
            lines.append(f"Intel's OpenCL CPU runtime was found at {self.library} ({how}), "
                         f"yet the SYCL runtime reported no device.")
        else:
            lines.append(f"{LIBRARY} (Intel's OpenCL CPU runtime, pip package "
                         f"intel-opencl-rt) was not found; searched: "
                         f"{', '.join(self.searched) or 'nothing'}.")
        if self.user_value:
            lines.append(f"OCL_ICD_FILENAMES was set to {self.user_value!r}.")
        selector = os.environ.get("ONEAPI_DEVICE_SELECTOR")
        if selector:
            lines.append(f"ONEAPI_DEVICE_SELECTOR={selector!r} may be filtering every "
                         f"device out.")
        if self.dpctl_preloaded:
            lines.append("dpctl was imported before omnitensor's sycl backend; if it had "
                         "already listed devices, set OCL_ICD_FILENAMES before starting "
                         "Python or import omnitensor's sycl backend first.")
        if self.loaders_preloaded:
            lines.append(f"An OpenCL ICD loader was already loaded "
                         f"({', '.join(self.loaders_preloaded)}); if the SYCL runtime shares "
                         f"it, it may have enumerated drivers before omnitensor could add "
                         f"{LIBRARY}.")
        lines.append("To get a device: " + "; ".join(DRIVER_HINTS) + ". "
                     "Check with `sycl-ls` or `python -m dpctl -f`.")
        return " ".join(lines)


_report: EnvReport | None = None


def _mapped_opencl_loaders() -> list[str]:
    """OpenCL ICD loaders already mapped into this process (Linux only) that the SYCL
    runtime could share: those with the ``libOpenCL.so`` soname. Vendored private copies
    (PyOpenCL's ``libOpenCL-<hash>.so``) are separate loaders and do not matter."""
    try:
        with open("/proc/self/maps") as f:
            names = {line.split()[-1] for line in f if "/libOpenCL.so" in line}
    except OSError:
        return []
    return sorted(names)


def prepare() -> EnvReport:
    """Append libintelocl.so to ``OCL_ICD_FILENAMES`` (once per process) so the SYCL
    runtime sees Intel's OpenCL CPU device. Call before dpctl lists devices."""
    global _report
    if _report is not None:
        return _report
    rep = EnvReport(dpctl_preloaded="dpctl" in sys.modules,
                    loaders_preloaded=_mapped_opencl_loaders())
    rep.user_value = os.environ.get(ENV_VAR)
    entries = [e for e in (rep.user_value or "").split(os.pathsep) if e]
    listed = [e for e in entries if os.path.basename(e).startswith("libintelocl.so")
              and os.path.isfile(e)]
    if listed:  # the user already points the loader at a runtime: keep theirs
        rep.library = listed[0]
        rep.searched = [ENV_VAR]
    else:
        rep.library, rep.searched = find_library()
        if rep.library:
            os.environ[ENV_VAR] = os.pathsep.join(entries + [rep.library])
            rep.appended = True
    if CACHE_VAR not in os.environ:
        os.environ[CACHE_VAR] = "1"
        rep.kernel_cache = True
    _report = rep
    return rep


def restore() -> None:
    """Put ``OCL_ICD_FILENAMES`` back as the user had it, once the SYCL runtime has
    enumerated its devices (the loader has read it by then)."""
    rep = _report
    if rep is None or not rep.appended or rep.restored:
        return
    if rep.user_value is None:
        os.environ.pop(ENV_VAR, None)
    else:
        os.environ[ENV_VAR] = rep.user_value
    rep.restored = True


def report() -> EnvReport | None:
    """The report of :func:`prepare`, if it ran."""
    return _report
