"""torch.accelerator over omnitensor's default device, on every device."""
import pytest

import omnitensor as ot


def test_accelerator_follows_the_default_device(device):
    dev = ot.device(device)
    with dev:
        if dev.type == "cpu":
            assert not ot.accelerator.is_available()
            assert ot.accelerator.current_accelerator() is None
            assert ot.accelerator.device_count() == 0
            with pytest.raises(RuntimeError, match="no accelerator"):
                ot.accelerator.set_device_index(0)
            ot.accelerator.synchronize()
            return
        assert ot.accelerator.is_available()
        acc = ot.accelerator.current_accelerator()
        assert acc.type == dev.type and acc == dev
        assert ot.accelerator.device_count() >= 1
        assert ot.accelerator.current_device_index() == dev.index
        # the torch idiom: tensors made "on the accelerator" land on this device
        x = ot.ones(3, device=acc) * 2
        assert x.device == dev
        ot.accelerator.synchronize()
        ot.accelerator.synchronize(dev.index)
        with ot.accelerator.device_index(dev.index):
            assert ot.get_default_device() == dev
        with pytest.raises(ValueError, match="out of range"):
            ot.accelerator.set_device_index(ot.accelerator.device_count())
        with pytest.raises(TypeError, match="device index"):
            ot.accelerator.set_device_index(1.5)
        with pytest.raises(ot.DeviceError, match="unknown device type"):
            ot.accelerator.set_device_index("zero")


def test_accelerator_set_device_index_moves_the_default(device):
    dev = ot.device(device)
    if dev.type == "cpu":
        pytest.skip("no accelerator index on cpu")
    ot.set_default_device(dev)
    try:
        ot.accelerator.set_device_index(dev.index)
        assert ot.get_default_device() == dev
        ot.accelerator.set_device_index(-1)  # torch: a no-op
        assert ot.get_default_device() == dev
    finally:
        ot.set_default_device(None)


def test_accelerator_script_idiom_runs_under_omnitensor_device(device, tmp_path):
    import subprocess
    import sys
    script = tmp_path / "acc.py"
    script.write_text(
        "import torch\n"
        "device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() "
        "else torch.device('cpu')\n"
        "x = torch.ones(4, device=device) + 1\n"
        "print(device.type, x.device, float(x.sum()))\n")
    env = dict(__import__("os").environ, OMNITENSOR_DEVICE=device)
    out = subprocess.run([sys.executable, "-m", "omnitensor.as_torch", str(script)],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    kind, where, total = out.stdout.split()
    assert kind == ot.device(device).type and where == str(ot.device(device))
    assert float(total) == 8.0
