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


def test_multi_operand_ops_check_devices(device):
    """Ops outside the elementwise path name both devices too, instead of computing on
    the first operand's device or leaking a backend's error."""
    if device == "cpu":
        pytest.skip("needs a second device")
    here = ot.ones(3, 3, dtype=ot.float32, device=device) + ot.eye(3, device=device)
    cpu = ot.ones(3, 3, dtype=ot.float32)
    cases = {"einsum": lambda a, b: ot.einsum("ij,jk->ik", a, b),
             "searchsorted": lambda a, b: ot.searchsorted(a[0], b[0]),
             "linalg.solve": lambda a, b: ot.linalg.solve(a, b),
             "stack": lambda a, b: ot.stack([a, b]),
             "matmul": lambda a, b: a @ b,
             # an index of another device (torch refuses these too)
             "index_select": lambda a, b: a.index_select(0, b[0].long()),
             "embedding": lambda a, b: ot.nn.functional.embedding(b[0].long(), a)}
    for name, f in cases.items():
        for a, b in ((here, cpu), (cpu, here)):
            with pytest.raises(ot.DeviceMismatchError, match=rf"{name}: .*{device}.*\.to\("):
                f(a, b)
    with pytest.raises(ot.DeviceMismatchError, match="index tensors must be on"):
        cpu[ot.tensor([0, 1], device=device)]
    with pytest.raises(ot.DeviceMismatchError, match="repeat"):
        ot.repeat(cpu, ot.tensor([1, 2, 1], device=device), axis=0)
    # cpu index tensors (and repeats) are accepted for device tensors, as in torch
    assert here[ot.tensor([0, 2])].shape == (2, 3)
    assert ot.repeat(here, ot.tensor([1, 0, 2]), axis=0).shape == (3, 3)


def test_einsum_and_repeat_argument_errors(device):
    x = ot.ones(2, 3, device=device)
    with pytest.raises(ot.ShapeError, match="einsum: size of 'j' differs: 3 vs 2"):
        ot.einsum("ij,jk->ik", x, x)  # before any backend's own einsum sees it
    with pytest.raises(TypeError, match="subscripts string"):
        ot.einsum(x, "ij")
    with pytest.raises(ot.DTypeError, match="repeats must be an integer tensor"):
        ot.repeat(x, ot.tensor([1.0, 2.0]), axis=0)
    with pytest.raises(ot.DTypeError, match="pass its .dtype"):
        ot.promote_types(x, ot.int64)
    assert ot.promote_types("float32", ot.int64) is ot.float32


def test_backend_unavailable_message_names_extra():
    from omnitensor.backends import registry
    be, why = registry.try_backend("cuda")
    if be is None:
        assert "cuda" in why.lower()


def test_empty_cache_on_every_device(device):
    x = ot.ones(1 << 16, device=device)
    del x
    ot.empty_cache(device)
    ot.empty_cache()
    assert ot.ones(4, device=device).sum().item() == 4.0  # the pools still work
