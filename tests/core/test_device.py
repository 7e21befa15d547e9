"""Devices: parsing, interning, defaults, environment, errors, lazy imports."""
import os
import subprocess
import sys

import pytest

import omnitensor as ot
from omnitensor.core import device as devmod


def test_device_strings_roundtrip_and_intern():
    assert ot.device("cpu") is ot.device("cpu")
    d = ot.device("opencl:1")
    assert str(d) == "opencl:1" and d.type == "opencl" and d.index == 1
    assert ot.device(str(d)) is d
    assert ot.device("opencl") is ot.device("opencl:0")
    assert ot.device("cuda", 1) is ot.device("cuda:1")
    assert d == "opencl:1" and d != ot.device("opencl:0")


@pytest.mark.parametrize("bad", ["gpu", "opencl:x", "cpu:1", "cuda:-1"])
def test_bad_device_strings(bad):
    with pytest.raises(ot.DeviceError):
        ot.device(bad)


def test_devices_lists_cpu():
    assert ot.device("cpu") in ot.devices()


def test_context_manager_and_set_default(device):
    assert ot.get_default_device() is ot.device("cpu")
    with ot.device(device):
        assert ot.ones(2).device is ot.device(device)
        with ot.device("cpu"):
            assert ot.ones(2).device is ot.device("cpu")
        assert ot.zeros(1).device is ot.device(device)
    try:
        ot.set_default_device(device)
        assert ot.arange(3).device is ot.device(device)
    finally:
        ot.set_default_device(None)
    assert ot.ones(1).device is ot.device("cpu")


def test_missing_device_index_is_a_clear_error():
    types = [d.type for d in ot.devices() if d.type != "cpu"]
    if not types:
        pytest.skip("needs an accelerator backend")
    with pytest.raises(ot.DeviceError, match="does not exist"):
        ot.ones(2, device=f"{types[0]}:99")


def test_environment_variable_read_lazily(monkeypatch):
    monkeypatch.setenv("OMNITENSOR_DEVICE", "cpu")
    devmod._reset_environment_cache()
    assert ot.get_default_device() is ot.device("cpu")
    monkeypatch.setenv("OMNITENSOR_DEVICE", "gpu:3")
    devmod._reset_environment_cache()
    with pytest.raises(ot.DeviceError, match="OMNITENSOR_DEVICE='gpu:3'.*Devices on this"):
        ot.get_default_device()
    monkeypatch.delenv("OMNITENSOR_DEVICE")
    devmod._reset_environment_cache()
    assert ot.get_default_device() is ot.device("cpu")


def test_environment_variable_selects_device(device):
    code = ("import omnitensor as ot; print(ot.ones(2).device)")
    env = dict(os.environ, OMNITENSOR_DEVICE=device)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(ot.device(device))


def test_import_loads_no_backend_library():
    code = ("import sys, omnitensor, omnitensor.nn, omnitensor.autograd; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('cupy', 'pyopencl', 'dpnp', 'dpctl', 'mpi4py', 'torch')]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_mixing_devices_raises_with_fix(device):
    if device == "cpu":
        pytest.skip("needs a second device")
    a = ot.ones(3, device=device)
    b = ot.ones(3)
    with pytest.raises(ot.DeviceMismatchError, match=r"\.to\("):
        a + b
    # a 0-d cpu tensor is a value, not a device operand (torch)
    assert (a + ot.tensor(2.0)).device is ot.device(device)


def test_backend_unavailable_message_names_extra():
    from omnitensor.backends import registry
    be, why = registry.try_backend("cuda")
    if be is None:
        assert "cuda" in why.lower()
