"""Finding SYCL devices, and which kind of sycl backend they get.

Imported by both sycl adapters (``kernel_backend``: generated kernels through dpctl, the
default; ``backend``: dpnp's kernels, the fallback) and by the package's ``SyclBackend``
selection. Importing it imports dpctl, after ``env.prepare`` has pointed the OpenCL ICD
loader at Intel's CPU runtime.

Which adapter (``choice``): generated kernels need dpctl to build OpenCL C programs, which
it does only on a device whose SYCL backend is OpenCL (``create_program_from_source``);
Level Zero devices take SPIR-V alone, and no pip-installable OpenCL C -> SPIR-V compiler
exists (``pyclspv`` targets Vulkan shaders; ``dpcpp-llvm-spirv`` needs LLVM IR from a clang
that pip does not ship). So an Intel GPU, which its driver lists under both Level Zero and
OpenCL, is taken through its OpenCL entry; when some device has no OpenCL entry at all
(a Level Zero-only install), every sycl device runs on dpnp instead, and
``OMNITENSOR_SYCL_KERNELS=dpnp`` forces that path (how its tests run on this machine).
"""
from __future__ import annotations

import os
from typing import Any

from . import env as sycl_env

ENV = sycl_env.prepare()  # must run before dpctl enumerates devices

try:
    import dpctl
except ImportError as e:  # the registry turns this into "pip install 'omnitensor[sycl]'"
    sycl_env.restore()
    raise ImportError(f"the sycl backend needs dpctl and dpnp: {e}") from e

#: ``OMNITENSOR_SYCL_KERNELS``: ``generated`` (default where every device builds OpenCL C)
#: or ``dpnp`` (dpnp's own kernels for every op)
KERNELS_VAR = "OMNITENSOR_SYCL_KERNELS"
#: device kinds in the order ``sycl:N`` numbers them (GPUs first, like SYCL's default
#: selector)
_TYPE_RANK = {"gpu": 0, "accelerator": 1, "cpu": 2}


def enum_name(e: Any) -> str:
    return getattr(e, "name", str(e)).split(".")[-1]


def _rank(prefer_opencl: bool) -> dict[str, int]:
    """SYCL backends in order of preference when one device is reachable through several."""
    if prefer_opencl:  # generated kernels: the backend dpctl builds OpenCL C for
        return {"opencl": 0, "level_zero": 1, "cuda": 2, "hip": 3}
    return {"level_zero": 0, "cuda": 1, "hip": 2, "opencl": 3}  # dpnp: Level Zero's


def _enumerate() -> tuple[list[Any], str | None]:
    """(every SYCL device, enumeration error or None). Restores OCL_ICD_FILENAMES
    afterwards: the OpenCL loader has read it by then."""
    try:
        return list(dpctl.get_devices()), None
    except Exception as e:  # noqa: BLE001 - a broken driver must not crash import
        return [], f"{type(e).__name__}: {e}"
    finally:
        sycl_env.restore()


_FOUND, DISCOVERY_ERROR = _enumerate()


def discover(prefer_opencl: bool) -> list[Any]:
    """The ordered, de-duplicated SYCL devices: per (kind, name), only the devices of the
    most preferred SYCL backend."""
    rank = _rank(prefer_opencl)
    best: dict[tuple[str, str], int] = {}
    for d in _FOUND:
        key = (enum_name(d.device_type), d.name)
        best[key] = min(best.get(key, 9), rank.get(enum_name(d.backend), 9))
    kept = [d for d in _FOUND if rank.get(enum_name(d.backend), 9)
            == best[(enum_name(d.device_type), d.name)]]
    kept.sort(key=lambda d: (_TYPE_RANK.get(enum_name(d.device_type), 3),
                             rank.get(enum_name(d.backend), 9)))
    return kept


def builds_opencl_c(device: Any) -> bool:
    """Whether dpctl can build OpenCL C programs for ``device`` and pass their by-value
    parameter structs (``RawKernelArg``)."""
    try:
        return (device.backend == dpctl.backend_type.opencl
                and bool(dpctl.RawKernelArg.is_available()))
    except Exception:  # noqa: BLE001 - an old dpctl without these
        return False


def choice() -> tuple[str, str]:
    """(``"generated"`` or ``"dpnp"``, why) for this process."""
    forced = os.environ.get(KERNELS_VAR, "").strip().lower()
    if forced not in ("", "generated", "dpnp"):
        from ...errors import EnvVarError
        raise EnvVarError(f"environment variable {KERNELS_VAR}={forced!r} is not valid: "
                          f"expected 'generated' or 'dpnp'. Fix or unset it.")
    if forced == "dpnp":
        return "dpnp", f"{KERNELS_VAR}=dpnp"
    devices = discover(prefer_opencl=True)
    lacking = [d.name for d in devices if not builds_opencl_c(d)]
    if lacking:
        why = (f"dpctl cannot build OpenCL C for {', '.join(lacking)} (no OpenCL SYCL "
               f"backend for it)")
        if forced == "generated":
            from ...errors import BackendError
            raise BackendError(f"{KERNELS_VAR}=generated, but {why}; unset it to use dpnp")
        return "dpnp", why
    return "generated", "every SYCL device builds OpenCL C"
