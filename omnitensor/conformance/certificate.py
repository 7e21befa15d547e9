"""A machine-readable conformance certificate (``omnitensor conformance --json PATH``):
what was checked, on which device, with which software, and what passed, so a user can
attach it to a bug report or keep it with a cluster's acceptance tests."""
from __future__ import annotations

import datetime as _dt
import json
import platform
import sys
from importlib import metadata
from typing import Any

#: packages whose versions decide the numbers (the vendor stacks and their runtimes)
PACKAGES = ("omnitensor", "numpy", "scipy", "pyopencl", "pocl-binary-distribution", "dpctl",
            "dpnp", "intel-opencl-rt", "cupy-cuda12x", "cupy-cuda13x", "mpi4py", "torch")


def versions() -> dict[str, str]:
    """Python, the platform, and each installed package of :data:`PACKAGES`."""
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float) and obj != obj:
        return "nan"
    if isinstance(obj, float) and obj in (float("inf"), float("-inf")):
        return str(obj)
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    return str(obj)


def build(devices: list[Any], names: list[str] | None = None,
          consistency: bool = False, progress: Any = None) -> dict[str, Any]:
    """The certificate for ``devices``: versions, each device's description and its
    per-op results, and optionally the cross-device consistency report (``progress``:
    see :func:`~omnitensor.conformance.runner.evaluate`)."""
    import omnitensor as ot
    from .runner import evaluate
    cert: dict[str, Any] = {
        "format": "omnitensor-conformance/1",
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": versions(),
        "devices": [],
    }
    for d in devices:
        dev = ot.device(d)
        entry = {"device": str(dev), "info": dev.info()}
        entry.update(evaluate(dev, names, progress=progress))
        cert["devices"].append(entry)
    cert["passed"] = all(e["failed"] == 0 for e in cert["devices"])
    if consistency:
        from .consistency import measure
        cert["consistency"] = measure(devices)
    return _jsonable(cert)


def build_torch(devices: list[Any], patterns: list[str] | None = None,
                progress: Any = None) -> dict[str, Any]:
    """The certificate of torch's OpInfo checks (``omnitensor conformance --torch``):
    versions, each device's figures, every failing sample and every check's status."""
    import omnitensor as ot
    from .torch_opinfo import as_json, evaluate
    results = evaluate([str(ot.device(d)) for d in devices], patterns, progress=progress)
    body = as_json(results)
    cert: dict[str, Any] = {
        "format": "omnitensor-conformance/1",
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": versions(),
        "devices": [{"device": str(ot.device(d)), "info": ot.device(d).info()}
                    for d in devices],
        "torch_opinfo": body,
        "passed": not body["failures"],
    }
    return _jsonable(cert)


def write(cert: dict[str, Any], path: str) -> None:
    """Write ``cert`` as indented JSON to ``path`` (``-``: standard output)."""
    text = json.dumps(cert, indent=1, sort_keys=False)
    if path == "-":
        print(text)
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")
