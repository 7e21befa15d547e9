"""Compiled programs and kernels: cached in memory, and on disk across processes.

Compiling is the dominant cost of an OpenCL backend on PoCL (a program build ~0.2 s, the
first launch of each kernel another ~0.1 s while PoCL generates its work-group function, and
~0.7 s once per process to load PoCL's builtin library). So:

* generators put many related kernels in one program (one build), and each program is
  built once per device and process (``DeviceState.programs``);
* ``cl.Kernel`` objects are created once and reused (``DeviceState.kernels``): creating
  them per call is slow and pyopencl warns about it;
* across processes, PoCL keeps its own kernel cache (``~/.cache/pocl/kcache``: program
  builds *and* compiled work-group functions), and so does NVIDIA's driver; pyopencl
  therefore skips its binary cache for them, and so do we. For every other ICD, or when
  ``POCL_KERNEL_CACHE=0``, we store ``program.binaries`` under the user cache directory
  (``platformdirs.user_cache_dir("omnitensor")/opencl``), and re-store them at exit: a
  PoCL binary then also carries the work-group functions compiled during the run.

``OMNITENSOR_OPENCL_NO_CACHE=1`` disables the on-disk cache (the in-memory one stays).
"""
from __future__ import annotations

import atexit
import hashlib
import os
import tempfile
from typing import Any, Callable

import pyopencl as cl

from ...errors import BackendError

_VERSION = "1"  # bump when generated sources change meaning without changing text
_dirty: dict[str, Any] = {}  # disk path -> program, re-saved at exit


def _icd_caches(dev: Any) -> bool:
    """True when the driver caches builds itself (PoCL with its kcache on, NVIDIA)."""
    plat = dev.platform.name
    if plat == "Portable Computing Language":
        return os.environ.get("POCL_KERNEL_CACHE", "1") != "0"
    return "NVIDIA" in plat


def _cache_dir() -> str | None:
    if os.environ.get("OMNITENSOR_OPENCL_NO_CACHE", "") not in ("", "0"):
        return None
    try:
        import platformdirs
        base = platformdirs.user_cache_dir("omnitensor", "omnitensor")
    except ImportError:  # pragma: no cover - pyopencl depends on platformdirs
        base = os.path.join(os.path.expanduser("~"), ".cache", "omnitensor")
    return os.path.join(base, "opencl")


def _disk_path(dev: Any, source: str, options: tuple[str, ...]) -> str | None:
    root = _cache_dir()
    if root is None or _icd_caches(dev):
        return None
    h = hashlib.sha256()
    for part in (_VERSION, cl.VERSION_TEXT, dev.platform.name, dev.platform.version,
                 dev.name, dev.driver_version, " ".join(options), source):
        h.update(part.encode())
        h.update(b"\0")
    return os.path.join(root, h.hexdigest()[:40] + ".bin")


def _load(ctx: Any, dev: Any, path: str, options: tuple[str, ...]) -> Any | None:
    try:
        with open(path, "rb") as f:
            binary = f.read()
        prg = cl.Program(ctx, [dev], [binary])
        prg.build(options=list(options))
        return prg
    except (OSError, cl.Error):
        return None  # a stale or foreign binary: rebuild from source


def _save(path: str, prg: Any) -> None:
    try:
        binary = prg.binaries[0]
        if not binary:
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
        with os.fdopen(fd, "wb") as f:
            f.write(binary)
        os.replace(tmp, path)  # atomic: concurrent processes never read half a file
    except (OSError, cl.Error):
        pass


@atexit.register
def _save_dirty() -> None:
    for path, prg in list(_dirty.items()):
        _save(path, prg)
    _dirty.clear()


def build(state: Any, key: Any, make_source: Callable[[], str],
          options: tuple[str, ...] = ()) -> Any:
    """The built program ``key`` for this device, generating its source on first use."""
    prg = state.programs.get(key)
    if prg is not None:
        return prg
    source = make_source()
    path = _disk_path(state.dev, source, options)
    prg = _load(state.ctx, state.dev, path, options) if path and os.path.exists(path) else None
    if prg is None:
        try:
            prg = cl.Program(state.ctx, source).build(options=list(options))
        except cl.Error as e:
            raise BackendError(
                f"{state.name} ({state.label}): compiling OpenCL program {key!r} failed. "
                f"This is a bug in omnitensor's OpenCL backend or the driver; please "
                f"report it with this message.\n{_build_log(e)}") from None
        if path:
            _save(path, prg)
    if path:
        _dirty[path] = prg
    state.programs[key] = prg
    return prg


def _build_log(err: Exception) -> str:
    text = str(err)
    return text if len(text) < 6000 else text[:3000] + "\n...\n" + text[-3000:]


def kernel(state: Any, program_key: Any, name: str, make_source: Callable[[], str],
           options: tuple[str, ...] = (), init: Callable[[Any], None] | None = None) -> Any:
    """The cached ``cl.Kernel`` ``name`` of program ``program_key``; ``init(kernel)`` runs
    once when the kernel object is created (to give arguments a launch may leave unset a
    valid value)."""
    kkey = (program_key, name)
    k = state.kernels.get(kkey)
    if k is None:
        prg = build(state, program_key, make_source, options)
        k = cl.Kernel(prg, name)
        if init is not None:
            init(k)
        state.kernels[kkey] = k
    return k
