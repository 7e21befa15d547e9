"""The `cuda` line: under the torch alias without real CUDA, `cuda` names the accelerator
(OMNITENSOR_ACCELERATOR, else a non-cpu OMNITENSOR_DEVICE), and the program's work lands
there while host data stays on the host. Real programs run in subprocesses, as users run
them (`python -m omnitensor.as_torch script.py`)."""
import json
import os
import subprocess
import sys

import pytest

SCRIPT = r'''
import json, sys
import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
x = torch.randn(64, 8)                       # host data stays on the host, as in torch
y = x.sum(dim=1, keepdim=True)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
model = model.to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for _ in range(20):
    xb, yb = x.to(device), y.to(device)
    loss = ((model(xb) - yb) ** 2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
out = {"device": device, "available": torch.cuda.is_available(),
       "count": torch.cuda.device_count(), "x": str(x.device),
       "param": str(next(model.parameters()).device), "loss": loss.item(),
       "is_cuda": next(model.parameters()).is_cuda}
if torch.cuda.is_available():
    a = torch.ones(3).cuda()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(); b = (a * 2).sum(); end.record(); torch.cuda.synchronize()
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        low = model(x.to(device)).dtype
    out.update(cuda_tensor=str(a.device), elapsed=start.elapsed_time(end),
               name=torch.cuda.get_device_name(0), allocated=torch.cuda.memory_allocated(),
               autocast=str(low), legacy=isinstance(a, torch.cuda.FloatTensor),
               device_obj=str(torch.device("cuda")), current=torch.cuda.current_device())
print("RESULT " + json.dumps(out))
'''


def _run(tmp_path, env_extra, as_torch=True):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMNITENSOR_DEVICE", "OMNITENSOR_ACCELERATOR", "OMNITENSOR_AS_TORCH")}
    env.update(env_extra)
    cmd = [sys.executable, "-m", "omnitensor.as_torch", str(script)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env,
                          cwd=tmp_path)
    return proc


def _result(proc):
    assert proc.returncode == 0, proc.stderr
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def test_no_accelerator_chosen_means_cpu(tmp_path):
    """A cpu-only choice (host OpenCL/SYCL devices are never picked by themselves)."""
    r = _result(_run(tmp_path, {}))
    assert r["device"] == "cpu" and not r["available"] and r["count"] == 0
    assert r["param"] == "cpu" and not r["is_cuda"]


@pytest.mark.parametrize("variable", ["OMNITENSOR_ACCELERATOR", "OMNITENSOR_DEVICE"])
def test_cuda_line_lands_on_the_accelerator(tmp_path, device, variable):
    if device == "cpu":
        pytest.skip("cpu is not an accelerator")
    cpu = _result(_run(tmp_path, {}))
    r = _result(_run(tmp_path, {variable: device}))
    assert r["device"] == "cuda" and r["available"] and r["count"] >= 1
    assert r["param"] == device and r["is_cuda"] and r["cuda_tensor"] == device
    # data made on the host stays on the host unless the default device was set
    assert r["x"] == ("cpu" if variable == "OMNITENSOR_ACCELERATOR" else device)
    assert r["loss"] == pytest.approx(cpu["loss"], rel=1e-4, abs=1e-6)
    assert r["elapsed"] >= 0 and r["name"] and r["allocated"] >= 0
    assert r["autocast"].endswith("bfloat16") or r["autocast"].endswith("float16")
    assert r["legacy"] and r["device_obj"] == device and r["current"] == int(device[-1])


def test_bad_accelerator_name_is_one_clear_error(tmp_path):
    proc = _run(tmp_path, {"OMNITENSOR_ACCELERATOR": "tpu:0"})
    assert proc.returncode != 0
    assert "OMNITENSOR_ACCELERATOR='tpu:0' is not a device" in proc.stderr
    assert proc.stderr.count("Traceback") <= 1 and "RESULT" not in proc.stdout


def test_plain_omnitensor_keeps_cuda_for_cupy():
    """Without the alias `cuda` is CuPy's: no silent redirection for omnitensor's own users."""
    code = ("import os; os.environ.pop('OMNITENSOR_AS_TORCH', None)\n"
            "import omnitensor as ot\n"
            "d = ot.device('cuda')\n"
            "print(d.type, ot.cuda.is_available() == bool(ot.devices('cuda')))\n")
    env = dict(os.environ, OMNITENSOR_ACCELERATOR="opencl")
    env.pop("OMNITENSOR_AS_TORCH", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["cuda", "True"]
