"""The torch.utils modules real programs import: flop_counter (against torch's
FlopCounterMode), module_tracker, dlpack (round trips with NumPy and torch), weak,
collect_env, and the ones that can only refuse clearly (cpp_extension,
mobile_optimizer)."""
from __future__ import annotations

import gc
import subprocess
import sys

import numpy as np
import pytest

import omnitensor as ot
from omnitensor.utils.flop_counter import FlopCounterMode

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode as TorchFlopCounterMode  # noqa: E402

#: torch counts its decompositions; omnitensor counts under the op called
_TORCH_OP = {"aten.linear": "aten.addmm", "aten.conv2d": "aten.convolution"}


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3, padding=1), lib.nn.ReLU(),
                             lib.nn.Sequential(lib.nn.Flatten(),
                                               lib.nn.Linear(4 * 6 * 6, 5)))


def test_flop_counter_forward_equals_torch_per_module(device):
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    with TorchFlopCounterMode(display=False) as tfc:
        _net(torch)(torch.from_numpy(x))
    theirs = {m: {str(op): v for op, v in d.items()} for m, d in tfc.get_flop_counts().items()}
    with FlopCounterMode(display=False) as fc:
        _net(ot).to(device)(ot.tensor(x, device=device))
    ours = {m: {_TORCH_OP.get(op, op): v for op, v in d.items()}
            for m, d in fc.get_flop_counts().items()}
    assert ours == theirs
    assert fc.get_total_flops() == tfc.get_total_flops()
    # the table, with torch's op names: the same text
    for mod in fc.flop_counts.values():
        for op in list(mod):
            mod[_TORCH_OP.get(op, op)] = mod.pop(op)
    for depth in (1, 2, 3):
        assert fc.get_table(depth) == tfc.get_table(depth)


def test_flop_counter_counts_backward_and_prints(device, capsys):
    m = ot.nn.Linear(8, 16).to(device)
    x = ot.randn(4, 8, device=device, requires_grad=True)
    with FlopCounterMode(depth=1) as fc:
        m(x).sum().backward()
    tm = torch.nn.Linear(8, 16)
    tx = torch.randn(4, 8, requires_grad=True)
    with TorchFlopCounterMode(display=False) as tfc:
        tm(tx).sum().backward()
    assert fc.get_total_flops() == tfc.get_total_flops() == 3 * 2 * 4 * 8 * 16
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["Module", "FLOP", "%", "Total"]
    assert "Global" in out and "aten.linear" in out


def test_flop_counter_refusals():
    with pytest.raises(NotImplementedError, match="custom_mapping"):
        FlopCounterMode(custom_mapping={"x": len})
    with ot.profiler.profile():
        with pytest.raises(RuntimeError, match="profile\\(with_flops=True\\)"):
            with FlopCounterMode():
                pass
    with FlopCounterMode(display=False) as fc:
        pass
    assert fc.get_total_flops() == 0 and fc.get_table().splitlines()[-1].split()[0] == "Global"


def test_module_tracker_names_running_modules():
    from omnitensor.utils.module_tracker import ModuleTracker
    net = _net(ot)
    seen = []
    net[2][1].register_forward_hook(lambda m, i, o: seen.append(set(mt.parents)))
    with ModuleTracker() as mt:
        net(ot.randn(1, 3, 6, 6))
        after = set(mt.parents)
    assert seen == [{"Global", "Sequential", "Sequential.2", "Sequential.2.1"}]
    assert after == {"Global"} and mt.is_bw is False


def test_dlpack_round_trips_with_numpy_and_torch(device):
    from omnitensor.utils.dlpack import DLDeviceType, from_dlpack, to_dlpack
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = from_dlpack(a)
    assert t.device == ot.device("cpu") and np.shares_memory(t.numpy(), a)
    tt = torch.utils.dlpack.from_dlpack(to_dlpack(t))
    np.testing.assert_array_equal(tt.numpy(), a)
    back = from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(4.0)))  # a legacy capsule
    assert back.tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(TypeError, match="__dlpack__"):
        from_dlpack([1, 2])
    assert DLDeviceType.kDLCPU == 1
    x = ot.arange(4.0, device=device)
    try:
        y = from_dlpack(x)
    except BufferError as e:  # a device whose backend has no DLPack export says so
        assert device != "cpu", e
        return
    assert y.device == x.device and y.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_weak_id_key_dictionary_keys_tensors_by_identity():
    from omnitensor.utils.weak import TensorWeakRef, WeakIdKeyDictionary, WeakTensorKeyDictionary
    assert WeakTensorKeyDictionary is WeakIdKeyDictionary
    a, b = ot.ones(2), ot.ones(2)  # equal values, different tensors
    d = WeakIdKeyDictionary()
    d[a], d[b] = "a", "b"
    assert d[a] == "a" and d[b] == "b" and len(d) == 2 and a in d and 3 not in d
    r = TensorWeakRef(b)
    assert r() is b
    del b
    gc.collect()
    assert len(d) == 1 and list(d) == [a] and r() is None
    del d[a]
    assert len(d) == 0


def test_refusing_modules_import_and_say_why():
    from omnitensor.utils import cpp_extension, mobile_optimizer
    assert cpp_extension.CUDA_HOME is None
    for fn in (cpp_extension.load, cpp_extension.load_inline, cpp_extension.CppExtension):
        with pytest.raises(NotImplementedError, match="C\\+\\+/CUDA extensions are not"):
            fn("ext", sources=["x.cpp"])
    with pytest.raises(NotImplementedError, match="ONNX"):
        mobile_optimizer.optimize_for_mobile(None)
    assert ot.utils.deterministic.fill_uninitialized_memory is True


def test_collect_env_and_the_torch_module_paths(tmp_path):
    out = subprocess.run([sys.executable, "-m", "omnitensor.utils.collect_env"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "omnitensor version:" in out.stdout
    assert "Python version:" in out.stdout and "cpu" in out.stdout
    code = ("import torch.utils.flop_counter, torch.utils.dlpack, torch.utils.weak, "
            "torch.utils.benchmark, torch.utils.cpp_extension, torch.utils.module_tracker, "
            "torch.utils.collect_env, torch.utils.mobile_optimizer, torch.multiprocessing\n"
            "from torch.utils.flop_counter import FlopCounterMode\n"
            "from torch.utils.benchmark import Timer\n"
            "print(torch.utils.flop_counter.__name__, torch.multiprocessing.__name__)\n")
    script = tmp_path / "uses_torch_utils.py"
    script.write_text(code)
    run = subprocess.run([sys.executable, "-m", "omnitensor.as_torch", str(script)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["omnitensor.utils.flop_counter",
                                  "omnitensor.multiprocessing"]
