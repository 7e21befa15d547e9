"""torch paths and behaviours that third-party libraries (pytorch-lightning, accelerate...)
reach at import or in their loops, answered as real torch answers them: the private
helpers of ``torch.nn.modules.module``, ``torch.distributed.constants``,
``ReduceOp.RedOpType``, ``torch._C._nn._parse_to``, ``torch.PyTorchFileReader``, the
DataLoader's iterator types, ``Module.cpu`` going through ``_apply`` and the legacy
``torch.autograd.profiler``."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import omnitensor as ot
from omnitensor.nn.module import parse_to

torch = pytest.importorskip("torch")

# one script, run under real torch and under as_torch: every line's facts must agree
_SCRIPT = r"""
import json, torch
from torch.nn.modules.module import _IncompatibleKeys, _addindent, Module
from torch.nn.parallel.distributed import DistributedDataParallel
from torch.distributed.constants import default_pg_timeout
from torch.overrides import TorchFunctionMode
from torch._C import _TensorMeta
from torch._dynamo import OptimizedModule
from torch.utils.data.dataloader import _BaseDataLoaderIter, _MultiProcessingDataLoaderIter
from torch.utils._pytree import _get_node_type, SUPPORTED_NODES
from torch.autograd.profiler import EventList, record_function, profile, emit_nvtx
from torch.distributed.fsdp.fully_sharded_data_parallel import FullyShardedDataParallel
from torch.distributed.algorithms.join import Join, Joinable, JoinHook
from torch.nn.utils import clip_grads_with_norm_, get_total_norm
R = torch.distributed.ReduceOp
print(json.dumps({
    "keys": list(_IncompatibleKeys(["a"], ["b"])._fields),
    "indent": _addindent("x\ny", 2),
    "ddp": DistributedDataParallel is torch.nn.parallel.DistributedDataParallel,
    "timeout": default_pg_timeout.total_seconds(),
    "redop": isinstance(R.SUM, R.RedOpType),
    "meta": isinstance(torch.Tensor, _TensorMeta),
    "compiled": isinstance(torch.compile(torch.nn.Linear(2, 2)), OptimizedModule),
    "pytree": [_get_node_type(v) in SUPPORTED_NODES for v in ([1], {"a": 1}, (1,), 3)],
    "script": isinstance(torch.ScriptModule, type),
    "mode": issubclass(TorchFunctionMode, object),
    "reader": callable(torch.PyTorchFileReader),
    "eval_frame": torch._dynamo.eval_frame.OptimizedModule is OptimizedModule,
    "fsdp": isinstance(torch.nn.Linear(2, 2), FullyShardedDataParallel),
}))
"""


def test_library_paths_answer_as_torch(tmp_path):
    script = tmp_path / "paths.py"
    script.write_text(_SCRIPT)

    def run(*pre):
        out = subprocess.run([sys.executable, *pre, str(script)], capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.splitlines()[-1])
    assert run("-m", "omnitensor.as_torch") == run()


@pytest.mark.parametrize("args,kwargs", [
    (("cpu",), {}), (("float64",), {}), (("cpu", "float16"), {"non_blocking": True}),
    ((), {"dtype": "int32"}), ((), {"device": "cpu", "memory_format": "channels_last"}),
])
def test_parse_to_matches_torch(args, kwargs):
    def conv(mod, a):
        return getattr(mod, a) if a in ("float64", "float16", "int32", "channels_last") else a
    ours = parse_to(*[conv(ot, a) for a in args], **{k: conv(ot, v) for k, v in kwargs.items()})
    theirs = torch._C._nn._parse_to(*[conv(torch, a) for a in args],
                                    **{k: conv(torch, v) for k, v in kwargs.items()})
    assert (None if ours[0] is None else ours[0].type) == \
        (None if theirs[0] is None else theirs[0].type)
    assert str(ours[1]).split(".")[-1] == str(theirs[1]).split(".")[-1]
    assert ours[2] == theirs[2]
    assert (ours[3] is None) == (theirs[3] is None)


def test_module_cpu_does_not_call_an_overridden_to(device):
    """torch's Module.cpu() moves through _apply: a subclass's ``to`` is not called."""
    for lib in (torch, ot):
        calls = []

        class M(lib.nn.Linear):
            def to(self, *a, _calls=calls, **k):
                _calls.append(a)
                return super().to(*a, **k)

        m = M(2, 2)
        if lib is ot:
            m = m.to(device)
        calls.clear()
        m.cpu()
        assert calls == [] and m.weight.device.type == "cpu"


def test_dataloader_iterators_have_torch_types():
    for lib, mod in ((torch, torch.utils.data.dataloader), (ot, ot.utils.data.dataloader)):
        ds = lib.utils.data.TensorDataset(lib.arange(10.0))
        loader = lib.utils.data.DataLoader(ds, batch_size=3)
        it = iter(loader)
        assert isinstance(it, mod._BaseDataLoaderIter)
        assert isinstance(it, mod._SingleProcessDataLoaderIter)
        assert len(it) == len(loader) == 4
        assert [b[0].tolist() for b in it][-1] == [9.0]
        assert issubclass(mod._MultiProcessingDataLoaderIter, mod._BaseDataLoaderIter)


def test_file_reader_reads_a_torch_checkpoint(tmp_path):
    path = tmp_path / "ck.pt"
    torch.save({"w": torch.arange(6, dtype=torch.float32)}, path)
    ours, theirs = ot.PyTorchFileReader(str(path)), torch.PyTorchFileReader(str(path))
    assert sorted(ours.get_all_records()) == sorted(theirs.get_all_records())
    assert ours.get_record("data.pkl") == theirs.get_record("data.pkl")
    assert ours.get_record_size("data/0") == theirs.get_record_size("data/0") == 24
    assert ours.serialization_id() == theirs.serialization_id()
    assert ours.get_storage_from_record("data/0", 6, ot.float32).tolist() == \
        [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    with open(path, "rb") as f:
        assert ot.PyTorchFileReader(f).get_record("version") == theirs.get_record("version")


def test_torch_function_mode_is_subclassable_but_not_enterable():
    from omnitensor.overrides import TorchFunctionMode

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with pytest.raises(NotImplementedError, match="not supported"):
        with Mode():
            pass


def test_legacy_autograd_profiler():
    from omnitensor.profiler import autograd_profiler as ap
    x = ot.ones(4)
    with ap.profile() as p:
        with ap.record_function("step"):
            (x + 1).sum()
    assert "step" in [e.name for e in p.events()]
    with ap.profile(enabled=False) as off:
        (x + 1).sum()
    assert off.enabled is False
    with pytest.raises(RuntimeError, match="NVTX"):
        with ap.emit_nvtx():
            pass


def test_clip_grads_with_norm_matches_torch(device):
    import numpy as np
    g = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    pt = torch.nn.Parameter(torch.zeros(2, 3))
    pt.grad = torch.tensor(g)
    po = ot.nn.Parameter(ot.zeros(2, 3, device=device))
    po.grad = ot.tensor(g, device=device)
    nt = torch.nn.utils.get_total_norm([pt.grad], 3.0, foreach=None)
    no = ot.nn.utils.get_total_norm([po.grad], 3.0, foreach=None)
    torch.nn.utils.clip_grads_with_norm_([pt], 1.5, nt)
    ot.nn.utils.clip_grads_with_norm_([po], 1.5, no)
    np.testing.assert_allclose(po.grad.cpu().numpy(), pt.grad.numpy(), rtol=1e-6)
    with pytest.warns(FutureWarning):
        ot.nn.utils.clip_grad_norm([po], 1.0)


def test_accelerator_agrees_with_cuda_under_the_alias(device, tmp_path):
    """torch.cuda.is_available() implies torch.accelerator names the device (accelerate
    picks its device through torch.accelerator); set_device_index moves what ``cuda``
    names, not the default device."""
    script = tmp_path / "acc.py"
    script.write_text(
        "import torch\n"
        "acc = torch.accelerator.current_accelerator()\n"
        "if torch.accelerator.is_available():\n    torch.accelerator.set_device_index(0)\n"
        "print(torch.cuda.is_available(), torch.accelerator.is_available(), acc,\n"
        "      torch.zeros(1).device.type,\n"
        "      torch.zeros(1, device='cuda').device if torch.cuda.is_available() else None)\n")
    import os
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMNITENSOR_DEVICE", "OMNITENSOR_ACCELERATOR")}
    if device != "cpu":
        env["OMNITENSOR_ACCELERATOR"] = device
    out = subprocess.run([sys.executable, "-m", "omnitensor.as_torch", str(script)],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    cuda, avail, acc, default, on_cuda = out.stdout.split()[-5:]
    assert cuda == avail and default == "cpu"
    if device == "cpu":
        assert (cuda, acc) == ("False", "None")
    else:
        assert (cuda, acc, on_cuda) == ("True", str(ot.device(device)), str(ot.device(device)))


def test_module_dict_update_reads_another_container_as_torch():
    for lib in (torch, ot):
        d = lib.nn.ModuleDict({"a": lib.nn.ReLU()})
        d.update(lib.nn.ModuleDict({"b": lib.nn.Tanh(), "a": lib.nn.Identity()}))
        assert list(d.keys()) == ["a", "b"] and type(d["a"]).__name__ == "Identity"
        p = lib.nn.ParameterDict({"x": lib.nn.Parameter(lib.zeros(1))})
        p.update(lib.nn.ParameterDict({"y": lib.nn.Parameter(lib.ones(2))}))
        assert list(p.keys()) == ["x", "y"]


def test_config_and_aten_alias_answer_as_torch(device):
    import omnitensor.torch_face as face
    assert "Build settings" in face.__config__.show() and "USE_MKL=OFF" in face.__config__.show()
    assert face.__config__.parallel_info().splitlines()[0] == \
        torch.__config__.parallel_info().splitlines()[0]
    x = ot.arange(6.0, device=device).reshape(2, 3)
    a = face.ops.aten.alias.default(x)
    t = torch.arange(6.0).reshape(2, 3)
    ta = torch.ops.aten.alias.default(t)
    assert a.tolist() == ta.tolist() and a.shape == x.shape
    a[0, 0] = 7.0
    ta[0, 0] = 7.0
    assert x.tolist() == t.tolist()  # a view: writes reach the original, as torch's


def test_tensor_str_and_jit_overload_answer_as_torch(tmp_path):
    script = tmp_path / "ts.py"
    script.write_text(
        "import torch\n"
        "from torch._tensor_str import PRINT_OPTS, _tensor_str\n"
        "from torch.jit import _overload\n"
        "@_overload\n"
        "def f(x: int) -> int: ...\n"
        "def f(x):\n"
        "    return x + 1\n"
        "x = torch.arange(12.).reshape(3, 4) / 3\n"
        "print(PRINT_OPTS.threshold, PRINT_OPTS.precision, PRINT_OPTS.edgeitems, f(1))\n"
        "print(_tensor_str(x, 4))\n"
        "print(_tensor_str(torch.tensor([[1, 2], [3, 4]]), 0))\n")

    def run(*pre):
        out = subprocess.run([sys.executable, *pre, str(script)], capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout
    assert run("-m", "omnitensor.as_torch") == run()
