"""``omnitensor info`` (console script and ``python -m omnitensor``)."""
from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys

import pytest

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


# --------------------------------------------------------------------------- the front door
def _cmd(*args: str, env: dict | None = None, module: str = "omnitensor",
         timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def _one_line_error(p: subprocess.CompletedProcess, prog: str) -> str:
    """The single stderr line of a failed command (asserts there is exactly one)."""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert lines[0].startswith(f"{prog}: error: "), lines[0]
    return lines[0]


def test_demo_matches_cpu_on_every_device():
    """Each device is seeded as cpu is, so its inputs are cpu's bit for bit and its loss
    and gradient agree to float32 rounding (the demo once seeded only before the loop and
    printed DIFFERS for every accelerator)."""
    p = _cmd("demo")
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.strip().splitlines()
    assert [ln.split()[0] for ln in lines] == [str(d) for d in ot.devices()]
    assert "DIFFERS" not in p.stdout
    assert all("matches cpu (same inputs bit for bit" in ln for ln in lines[1:]), p.stdout


def test_demo_inputs_and_results_equal_cpus(device):
    from omnitensor.demos import device_demo
    ref, row = device_demo.run_one("cpu"), device_demo.run_one(device)
    c = device_demo.compare(row, ref)
    assert c["same_inputs"] and c["ok"], c
    other = device_demo.run_one(device, seed=1)  # the check can fail: another seed differs
    assert not device_demo.compare(other, ref)["same_inputs"]


def test_conformance_takes_comma_lists_and_covers_nn_ops(tmp_path):
    devs = ",".join(str(d) for d in ot.devices())
    path = tmp_path / "cert.json"
    p = _cmd("conformance", "--device", devs, "--op", "add,matmul",
             "--op", "conv2d,cross_entropy", "--json", str(path))
    assert p.returncode == 0, p.stdout + p.stderr
    cert = json.loads(path.read_text())
    assert [e["device"] for e in cert["devices"]] == devs.split(",") and cert["passed"]
    for entry in cert["devices"]:
        ops = {r["op"] for r in entry["results"] if r["status"] == "pass"}
        assert ops == {"add", "matmul", "conv2d", "cross_entropy"}, entry["device"]


def test_conformance_progress_has_an_eta_on_stderr():
    from omnitensor.conformance.runner import pair_count
    ops = ["add", "subtract", "multiply", "equal", "exp"]
    total = pair_count(ops)
    assert total > 50
    p = _cmd("conformance", "--device", "cpu", "--op", ",".join(ops[:3]), "--op",
             ",".join(ops[3:]))
    assert p.returncode == 0, p.stderr
    lines = p.stderr.strip().splitlines()  # not a terminal: a line per 50 pairs, and the end
    assert len(lines) == total // 50 + (total % 50 > 0), p.stderr
    assert "ETA" in lines[0] and f"50/{total}" in lines[0]
    assert lines[-1].startswith(f"conformance: {total}/{total} (100%)")
    assert "match NumPy" in p.stdout and "conformance:" not in p.stdout
    quiet = _cmd("conformance", "--device", "cpu", "--op", "add", "--no-progress")
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_progress_rewrites_one_line_on_a_terminal():
    from omnitensor.cli_support import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True
    out = Terminal()
    bar = Progress(3, "job", stream=out)
    for _ in range(3):
        bar.step("x")
    bar.close()
    text = out.getvalue()
    assert "\n" not in text and text.count("\r") == 4
    assert "job: 1/3 (33%)" in text and "ETA" in text and "job: 3/3 (100%)" in text


@pytest.mark.parametrize("args, words", [
    (("--device", "cpu", "--op", "add,nope"), "unknown op(s) nope"),
    (("--device", "cpu,opencl:9"), "no device opencl:9"),
])
def test_conformance_bad_lists_are_one_line(args, words):
    p = _cmd("conformance", *args)
    assert p.returncode == 2 and words in _one_line_error(p, "omnitensor conformance")


def test_an_unexpected_error_is_one_line_and_debug_shows_the_traceback(tmp_path):
    target = str(tmp_path / "no" / "such" / "dir" / "cert.json")
    args = ("conformance", "--device", "cpu", "--op", "add", "--no-progress", "--json", target)
    p = _cmd(*args)
    line = _one_line_error(p, "omnitensor conformance")
    assert p.returncode == 1 and "FileNotFoundError" in line and "--debug" in line
    for debug in (_cmd(*args, "--debug"), _cmd(*args, env={"OMNITENSOR_DEBUG": "1"})):
        assert debug.returncode == 1 and "Traceback" in debug.stderr, debug.stderr


@pytest.mark.parametrize("name, words", [
    ("foo:0", "bad --device 'foo:0': DeviceError: unknown device type"),
    ("opencl:9" if ot.devices("opencl") else "opencl", "no device opencl"),
    ("sycl:9" if ot.devices("sycl") else "sycl", "no device sycl"),
])
def test_train_digits_bad_device_is_one_line_naming_the_fix(name, words):
    p = _cmd("train-digits", "--device", name, "--no-progress", timeout=120)
    line = _one_line_error(p, "omnitensor train-digits")
    assert p.returncode == 2 and words in line and "Devices on this machine: cpu" in line
    assert p.stdout == ""  # refused before any data is loaded or any table printed


def test_train_digits_missing_backend_says_what_to_install():
    if ot.devices("cuda"):
        pytest.skip("CuPy and a GPU are here")
    p = _cmd("train-digits", "--device", "cpu,cuda:0", "--no-progress", timeout=120)
    line = _one_line_error(p, "omnitensor train-digits")
    assert "no device cuda:0" in line and "pip install 'omnitensor[cuda]'" in line


def test_train_digits_bad_device_from_the_environment():
    p = _cmd("train-digits", "--no-progress", env={"OMNITENSOR_DEVICE": "bogus"}, timeout=120)
    assert "bad OMNITENSOR_DEVICE 'bogus'" in _one_line_error(p, "omnitensor train-digits")


@pytest.mark.parametrize("option, value", [("--epochs-mlp", "-3"), ("--epochs-cnn", "0"),
                                           ("--batch-size", "0")])
def test_train_digits_nonpositive_counts_are_one_line(option, value):
    p = _cmd("train-digits", "--device", "cpu", option, value, "--no-progress", timeout=120)
    line = _one_line_error(p, "omnitensor train-digits")
    assert f"{option} {value}: give a whole number of at least 1" in line, line
    assert p.stdout == ""  # refused before any training or table


def test_train_digits_unknown_model_is_one_line():
    p = _cmd("train-digits", "--device", "cpu", "--models", "mlp,rnn", timeout=120)
    assert "unknown model(s) rnn" in _one_line_error(p, "omnitensor train-digits")


def test_main_job_on_cpu_reaches_its_target():
    """The README's first command, narrowed to cpu and the MLP (the CNN and the other
    devices: tests/nn/test_train_digits_smoke.py)."""
    pytest.importorskip("sklearn")
    p = _cmd("train-digits", "--device", "cpu", "--models", "mlp", "--no-progress")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "OK: the MLP reached >= 97% test accuracy on every device" in p.stdout


def test_help_has_usage_options_and_examples():
    top = _cmd("--help")
    assert top.returncode == 0 and top.stdout.startswith("usage: omnitensor")
    assert "--debug" in top.stdout and "examples:" in top.stdout
    run = _cmd("--help", module="omnitensor.distributed.run")
    assert run.returncode == 0 and run.stdout.startswith("usage: omnitensor-run -n N")
    for words in ("options:", "examples:", "--hostfile FILE", "--mpiexec PATH", "--dry-run",
                  "--as-torch", "-m MODULE", "RANK, LOCAL_RANK"):
        assert words in run.stdout, words
    assert '"""' not in run.stdout and "``" not in run.stdout  # not the raw docstring
