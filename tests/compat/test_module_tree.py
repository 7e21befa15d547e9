"""torch's module tree: every path works as an attribute after ``import omnitensor`` and as
``import x.y`` / ``from x.y import z``, and ``import omnitensor`` stays light."""
import importlib
import subprocess
import sys

import pytest

import omnitensor as ot

PATHS = [
    "nn", "nn.functional", "nn.init", "nn.utils", "nn.utils.rnn", "nn.utils.clip_grad",
    "nn.utils.stateless", "nn.parallel", "nn.modules",
    "nn.modules.module", "nn.modules.linear", "nn.modules.conv", "nn.modules.activation",
    "nn.modules.loss", "nn.modules.container", "nn.modules.batchnorm",
    "nn.modules.normalization", "nn.modules.dropout", "nn.modules.pooling",
    "nn.modules.sparse", "nn.modules.rnn", "nn.modules.transformer", "nn.modules.flatten",
    "nn.modules.instancenorm", "nn.modules.padding", "nn.modules.pixelshuffle",
    "nn.modules.upsampling", "nn.modules.distance",
    "utils", "utils.data", "utils.checkpoint", "utils.hooks", "utils.tensorboard",
    "autograd", "autograd.functional", "autograd.grad_mode",
    "torch_backends", "torch_backends.cudnn", "torch_backends.mps", "torch_backends.cuda",
    "torch_backends.mkldnn", "torch_backends.mkl", "torch_backends.openmp",
    "torch_backends.opt_einsum", "torch_backends.cpu", "torch_backends.mha",
    "accelerator", "cuda", "special", "distributions", "distributions.constraints",
    "distributions.kl", "func", "onnx", "jit", "amp", "profiler", "optim", "distributed",
    "serialization", "linalg", "fft",
]


@pytest.mark.parametrize("path", PATHS)
def test_path_as_import_and_attribute(path):
    mod = importlib.import_module(f"omnitensor.{path}")
    obj = ot
    for part in path.split("."):
        obj = getattr(obj, part)
    assert obj is mod


FROM_IMPORTS = [
    ("nn.modules.linear", "Linear"), ("nn.modules.loss", "_Loss"),
    ("nn.modules.loss", "CrossEntropyLoss"), ("nn.modules.module", "Module"),
    ("nn.modules.container", "Sequential"), ("nn.modules.conv", "Conv2d"),
    ("nn.modules.rnn", "LSTM"), ("nn.modules.activation", "ReLU"),
    ("nn.parallel", "DataParallel"), ("nn.parallel", "data_parallel"),
    ("nn.parallel", "DistributedDataParallel"), ("utils.checkpoint", "checkpoint"),
    ("utils.data", "DataLoader"), ("utils.hooks", "RemovableHandle"),
    ("autograd", "Variable"), ("autograd", "Function"), ("autograd.functional", "jacobian"),
    ("autograd.grad_mode", "no_grad"), ("distributions", "Normal"),
    ("distributions", "kl_divergence"), ("func", "functional_call"),
    ("serialization", "add_safe_globals"), ("serialization", "safe_globals"),
]


@pytest.mark.parametrize("path,name", FROM_IMPORTS)
def test_from_import(path, name):
    mod = importlib.import_module(f"omnitensor.{path}")
    assert getattr(mod, name) is not None


def test_nn_modules_reexports_the_same_classes():
    from omnitensor.nn.modules.linear import Linear
    from omnitensor.nn.modules import Conv2d
    assert Linear is ot.nn.Linear and Conv2d is ot.nn.Conv2d
    assert ot.nn.DataParallel is ot.nn.parallel.DataParallel


def test_missing_layer_names_what_is_missing():
    import omnitensor.nn.modules.padding as padding
    missing = [n for n in ("ReflectionPad3d", "CircularPad3d") if not hasattr(ot.nn, n)]
    for name in missing:
        with pytest.raises(AttributeError, match=f"torch.nn.modules.padding.{name} is not "
                                                 f"implemented"):
            getattr(padding, name)


def test_import_omnitensor_is_light():
    code = ("import sys, omnitensor\n"
            "vendor = [m for m in sys.modules if m.split('.')[0] in ('pyopencl', 'dpctl', "
            "'dpnp', 'cupy', 'torch', 'scipy', 'mpi4py', 'safetensors')]\n"
            "lazy = [m for m in ('omnitensor.distributions', 'omnitensor.func', "
            "'omnitensor.special', 'omnitensor.accelerator', 'omnitensor.onnx', "
            "'omnitensor.nn', 'omnitensor.torch_backends.cudnn', 'omnitensor.utils.data') "
            "if m in sys.modules]\n"
            "print(vendor, lazy)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[] []"


def test_placeholders_say_what_is_not_supported():
    # onnx.export and jit are built (tests/onnx/test_export.py, tests/test_jit.py)
    # disabled AMP is what torch's disabled AMP is: nothing changes (AMP itself: test_amp.py)
    scaler = ot.amp.GradScaler("cpu", enabled=False)
    loss = ot.ones(())
    assert scaler.scale(loss) is loss and not scaler.is_enabled()
    with ot.amp.autocast("cpu", enabled=False):
        pass
    assert ot.jit.is_scripting() is False and ot.onnx.is_in_onnx_export() is False
    assert ot.jit.ignore(len) is len


def test_backend_flags_are_honest():
    b = ot.torch_backends
    assert not b.cudnn.is_available() and b.cudnn.version() is None
    assert not b.mps.is_available() and not b.mps.is_built()
    assert not b.mkldnn.is_available() and not b.openmp.is_available()
    old = b.cudnn.benchmark
    b.cudnn.benchmark = True
    b.cudnn.deterministic = True
    with b.cudnn.flags(enabled=False, benchmark=False):
        assert b.cudnn.enabled is False and b.cudnn.benchmark is False
    assert b.cudnn.enabled is True and b.cudnn.benchmark is True
    b.cudnn.benchmark = old
    b.cuda.matmul.allow_tf32 = True
    assert b.cuda.matmul.allow_tf32 is True
    with pytest.raises(AttributeError, match="no flag 'allow_tf33'"):
        b.cuda.matmul.allow_tf33 = True


TORCH_BACKENDS = ["cudnn", "mps", "cuda", "mkldnn", "mkl", "openmp", "opt_einsum", "cpu",
                  "mha"]


def test_torch_backends_under_the_alias_are_the_flag_modules():
    # torch.backends.<lib> is omnitensor.torch_backends.<lib>, reached as an import and as an
    # attribute of `torch`, never the device adapter package omnitensor.backends
    code = ("import omnitensor.as_torch as a; a.install()\n"
            "import importlib, torch, omnitensor.torch_backends as tb\n"
            f"names = {TORCH_BACKENDS!r}\n"
            "assert torch.backends is tb, torch.backends\n"
            "for n in names:\n"
            "    m = importlib.import_module('torch.backends.' + n)\n"
            "    assert m is getattr(torch.backends, n) is importlib.import_module("
            "'omnitensor.torch_backends.' + n), n\n"
            "from torch.backends import cudnn\n"
            "torch.backends.cudnn.benchmark = True\n"
            "assert cudnn.benchmark is True and not torch.backends.mps.is_available()\n"
            "assert torch.backends.opt_einsum.enabled is False\n"
            "assert isinstance(torch.backends.cpu.get_cpu_capability(), str)\n"
            "torch.backends.cuda.matmul.allow_tf32 = True\n"
            "assert torch._C._get_cudnn_enabled() is True\n"
            "import torch.backends.opencl\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    # every flag path resolves; a device adapter is no torch.backends path
    assert "No module named 'torch.backends.opencl'" in out.stderr, out.stderr
    assert "AssertionError" not in out.stderr, out.stderr


def test_cuda_idioms_are_harmless_without_cuda():
    if ot.cuda.is_available():
        pytest.skip("CUDA present")
    ot.manual_seed(3)
    a = ot.rand(3)
    ot.manual_seed(3)
    ot.cuda.manual_seed_all(123)  # no CUDA: seeds nothing, as torch's
    ot.cuda.manual_seed(5)
    assert bool((ot.rand(3) == a).all())
    assert ot.cuda.device_count() == 0 and not ot.cuda.is_initialized()
    ot.cuda.synchronize()
    ot.cuda.empty_cache()
    assert ot.cuda.max_memory_allocated() == 0
    with pytest.raises(RuntimeError, match="CUDA device 0 is not available"):
        ot.cuda.set_device(0)
    with pytest.raises(RuntimeError, match="no CUDA device"):
        ot.cuda.get_device_properties(0)
