"""The --as-torch finder: `import torch` (and every torch.* submodule) is omnitensor."""
import os
import subprocess
import sys

SCRIPT = """
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.nn.modules.loss import _Loss
import torch.distributions as D
import torch.optim.lr_scheduler
import omnitensor
# the torch face: omnitensor's objects under torch's semantics (omnitensor/torch_face.py)
assert torch is sys.modules["omnitensor.torch_face"] and nn is sys.modules["omnitensor.nn"]
assert torch.Tensor is omnitensor.Tensor and torch.zeros is omnitensor.zeros
assert torch.__version__ >= "2.0" and isinstance(torch.randn(2).shape, torch.Size)
assert sys.modules["torch.utils.data"] is sys.modules["omnitensor.utils.data"]
x = torch.randn(8, 3)
ds = TensorDataset(x, torch.arange(8))
(xb, yb), = list(DataLoader(ds, batch_size=8))
assert isinstance(xb, torch.Tensor) and F.relu(xb).shape == (8, 3)
import torch._C  # the few entry points libraries call
torch._C._log_api_usage_once("test")
try:
    import torch._inductor  # torch's internals without an omnitensor counterpart
except ModuleNotFoundError as e:
    assert "torch._inductor" in str(e), e
else:
    raise SystemExit("torch._inductor imported")
try:
    import torchvision  # not aliased: stays what it is (absent here)
except ImportError:
    pass
print("OK", sys.argv[1:])
"""


def _run(cmd, tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    env = dict(os.environ)
    env.pop("OMNITENSOR_DEVICE", None)
    return subprocess.run(cmd + [str(script), "--epochs", "1"], capture_output=True, text=True,
                          timeout=300, env=env, cwd=tmp_path)


def _prints_ok(code):
    """Run ``code`` in a fresh interpreter; it must succeed and print ``ok``."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_module_runner(tmp_path):
    out = _run([sys.executable, "-m", "omnitensor.as_torch"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "OK ['--epochs', '1']"


def test_launcher_flag(tmp_path):
    out = _run([sys.executable, "-m", "omnitensor.distributed.run", "--as-torch"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "OK ['--epochs', '1']"


def test_install_in_process_and_uninstall():
    code = ("import sys, omnitensor.as_torch as a\n"
            "a.install()\n"
            "import torch.nn.functional as F\n"
            "assert F is sys.modules['omnitensor.nn.functional']\n"
            "a.uninstall()\n"
            "assert 'torch' not in sys.modules and 'torch.nn' not in sys.modules\n"
            "print('ok')\n")
    _prints_ok(code)


def test_runner_usage_errors(tmp_path):
    out = subprocess.run([sys.executable, "-m", "omnitensor.as_torch", str(tmp_path / "no.py")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "no such script" in out.stderr
    out = subprocess.run([sys.executable, "-m", "omnitensor.as_torch"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 2 and "usage" in out.stdout


SPAWN_SCRIPT = """
import multiprocessing as mp
def child(q):
    import sys
    import torch
    q.put(f"{torch.__name__} {torch is sys.modules.get('omnitensor.torch_face')}")
if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    print(q.get())
    p.join()
"""


def test_spawned_stdlib_children_get_the_alias(tmp_path):
    """A child started by the standard library's spawn imports torch as omnitensor too."""
    script = tmp_path / "spawn_child.py"
    script.write_text(SPAWN_SCRIPT)
    out = subprocess.run([sys.executable, "-m", "omnitensor.as_torch", str(script)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "torch True"  # the face, named torch as in torch


def test_torch_linalg_is_the_torch_faces():
    """`import torch.linalg` is the torch face's linalg (torch's solve rule), the same
    functions as omnitensor.linalg elsewhere; omnitensor.linalg keeps the standard's."""
    code = ("import sys, omnitensor.as_torch as a\n"
            "a.install()\n"
            "import torch, torch.linalg as L, omnitensor\n"
            "assert L is sys.modules['omnitensor.torch_linalg'] and torch.linalg is L\n"
            "assert L.det is omnitensor.linalg.det and set(omnitensor.linalg.__all__) <= set(dir(L))\n"
            "A, B = torch.eye(3).expand(3, 3, 3), torch.ones(3, 3)\n"
            "assert L.solve(A, B).shape == (3, 3)\n"
            "assert omnitensor.linalg.solve(A, B).shape == (3, 3, 3)\n"
            "print('ok')\n")
    _prints_ok(code)
