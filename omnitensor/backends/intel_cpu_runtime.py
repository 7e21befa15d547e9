"""Where Intel's OpenCL CPU runtime (``libintelocl.so``, pip package ``intel-opencl-rt``) is.

Two backends load it: sycl (the SYCL runtime's OpenCL CPU device, ``sycl/env.py``) and
opencl (as the CPU device when PoCL's compiler cannot build for this CPU,
``opencl/icd.py``). The wheel puts the library into ``<prefix>/lib`` and an ICD file into
``<prefix>/etc/OpenCL/vendors`` that the loaders do not scan, so both must find it
themselves; this module is that search, in one place. It imports nothing vendor-specific.
"""
from __future__ import annotations

import glob
import os
import sys

#: the Intel OpenCL CPU runtime (``libintelocl_emu.so`` is the FPGA emulator: not wanted)
LIBRARY = "libintelocl.so"

#: how to get it, for messages
INSTALL_HINT = ("x86-64 CPUs: `pip install intel-opencl-rt` (Intel's OpenCL CPU runtime, "
                "also run on AMD CPUs)")


def _prefixes() -> list[str]:
    """Installation prefixes that may hold ``lib/libintelocl.so``, most specific first."""
    seen: list[str] = []
    for p in (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
              os.environ.get("CONDA_PREFIX")):
        if p and p not in seen:
            seen.append(p)
    return seen


def _from_distribution() -> list[str]:
    """Where pip's record of ``intel-opencl-rt`` says it put the library (covers
    ``--user`` and ``--target`` installs whose prefix is not ``sys.prefix``)."""
    try:
        from importlib import metadata
        dist = metadata.distribution("intel-opencl-rt")
        files = dist.files or ()
    except Exception:  # noqa: BLE001 - metadata is best effort (absent, malformed)
        return []
    return [str(dist.locate_file(f)) for f in files if os.path.basename(str(f)) == LIBRARY]


def _from_icd_files(prefix: str) -> list[str]:
    """Library paths named by ``<prefix>/etc/OpenCL/vendors/*.icd``. The conda-built files
    hold a placeholder prefix (``/opt/anaconda1anaconda2anaconda3``), so a path that does not
    exist is retried as its file name under ``<prefix>/lib``."""
    found = []
    for icd in sorted(glob.glob(os.path.join(prefix, "etc", "OpenCL", "vendors", "*.icd"))):
        try:
            with open(icd) as f:
                target = f.read().strip()
        except OSError:
            continue
        if os.path.basename(target) != LIBRARY:
            continue
        found.append(target)
        found.append(os.path.join(prefix, "lib", LIBRARY))
    return found


def candidates() -> list[str]:
    """Every path where ``libintelocl.so`` may be, in the order they are tried."""
    paths: list[str] = []
    for prefix in _prefixes():
        paths.append(os.path.join(prefix, "lib", LIBRARY))
    paths += _from_distribution()
    for prefix in _prefixes():
        paths += _from_icd_files(prefix)
    root = os.environ.get("ONEAPI_ROOT")
    if root:
        paths.append(os.path.join(root, "compiler", "latest", "lib", LIBRARY))
    unique: list[str] = []
    for p in paths:
        p = os.path.normpath(p)
        if p not in unique:
            unique.append(p)
    return unique


def find_library() -> tuple[str | None, list[str]]:
    """(path of libintelocl.so or None, every path searched)."""
    searched = candidates()
    for p in searched:
        if os.path.isfile(p):
            return os.path.realpath(p), searched
    return None, searched
