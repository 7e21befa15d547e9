"""``omnitensor info`` (console script and ``python -m omnitensor``)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import omnitensor as ot


def _info(env: dict | None = None) -> str:
    out = subprocess.run([sys.executable, "-m", "omnitensor", "info"], capture_output=True,
                         text=True, timeout=300, env={**os.environ, **(env or {})})
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_info_lists_every_backend_and_device():
    text = _info()
    assert text.startswith("omnitensor ") and "numpy" in text
    for dev in ot.devices():
        line = next((ln for ln in text.splitlines() if ln.startswith(f"  {dev} ")), None)
        assert line is not None, f"{dev} missing from:\n{text}"
        assert "fp16" in line and "fp64" in line
    for type_ in ("cpu", "opencl", "sycl", "cuda"):
        assert any(ln.startswith(type_) for ln in text.splitlines()), type_
    if importlib.util.find_spec("cupy") is None:
        assert "pip install 'omnitensor[cuda]'" in text


def test_info_explains_installed_backends_without_devices():
    if importlib.util.find_spec("pyopencl") is None:
        return
    text = _info({"OCL_ICD_VENDORS": "/nonexistent", "OCL_ICD_FILENAMES": "",
                  "ONEAPI_DEVICE_SELECTOR": "level_zero:gpu"})
    ocl = next(ln for ln in text.splitlines() if ln.startswith("opencl"))
    assert "absent (pyopencl " in ocl and "installed)" in ocl and "ICD" in ocl


def test_info_into_a_closed_pipe_is_quiet():
    out = subprocess.run(f"'{sys.executable}' -m omnitensor info | head -1", shell=True,
                         capture_output=True, text=True, timeout=300)
    assert out.stdout.startswith("omnitensor ") and "Traceback" not in out.stderr


def test_info_shows_each_backends_declared_extra_and_transport():
    """What a backend declares (registry.BACKENDS: pip extra, collective transport) is
    what ``omnitensor info`` prints for it; nothing is listed by device type in cli.py."""
    from omnitensor.backends import registry
    text = _info()
    for dev in {d.type for d in ot.devices()}:
        spec = registry.spec(dev)
        install = f"pip install 'omnitensor[{spec.extra}]'" if spec.extra else "built in"
        assert f"{install}; collectives: {spec.transport}" in text, (dev, text)
