"""The cuda backend. On a machine without CuPy or a GPU (CI) only the absence path runs:
a clear reason, torch.cuda-style queries that do not fail, and nothing else broken. With a
GPU, the whole suite runs with OMNITENSOR_TEST_DEVICES=cuda:0 (tools/gpu_check.sh)."""
import importlib.util

import pytest

import omnitensor as ot
from omnitensor.backends import registry

HAS_CUPY = importlib.util.find_spec("cupy") is not None


def test_cuda_queries_work_without_gpu():
    if ot.cuda.is_available():
        assert ot.cuda.device_count() >= 1
        return
    assert ot.cuda.device_count() == 0
    assert ot.cuda.memory_allocated() == 0
    ot.cuda.synchronize()
    why = ot.cuda.unavailable_reason()
    assert why and ("omnitensor[cuda]" in why or "GPU" in why or "device" in why)


@pytest.mark.skipif(HAS_CUPY, reason="CuPy is installed: the not-installed message is moot")
def test_missing_cupy_names_the_extra():
    be, why = registry.try_backend("cuda")
    assert be is None and "pip install 'omnitensor[cuda]'" in why
    with pytest.raises(ot.BackendUnavailableError, match="omnitensor\\[cuda\\]"):
        ot.ones(2, device="cuda:0")


def test_cuda_device_strings_need_no_cupy():
    d = ot.device("cuda:1")
    assert str(d) == "cuda:1" and d.type == "cuda"


@pytest.mark.skipif(not ot.cuda.is_available(), reason="needs a CUDA (or ROCm) GPU with CuPy")
def test_dlpack_zero_copy_with_cupy():
    import cupy
    x = cupy.arange(4, dtype=cupy.float32)
    t = ot.from_dlpack(x)
    assert t.device.type == "cuda"
    t[0] = 5
    assert float(x[0]) == 5.0
    back = cupy.from_dlpack(t)
    assert back.data.ptr == x.data.ptr


@pytest.mark.skipif(not ot.cuda.is_available(), reason="needs a CUDA (or ROCm) GPU with CuPy")
def test_dlpack_zero_copy_with_torch_cuda():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device here")
    x = torch.arange(4, dtype=torch.float32, device="cuda:0")
    torch.cuda.synchronize()
    t = ot.from_dlpack(x)
    assert t.device == ot.device("cuda:0")
    t[0] = 5
    ot.cuda.synchronize(0)
    assert float(x[0]) == 5.0                   # one buffer, written through omnitensor
    back = torch.from_dlpack(ot.arange(3, dtype=ot.float32, device="cuda:0") * 2)
    assert back.device.type == "cuda" and back.tolist() == [0.0, 2.0, 4.0]
    assert torch.from_dlpack(t).data_ptr() == x.data_ptr()


@pytest.mark.skipif(not ot.cuda.is_available(), reason="needs a CUDA (or ROCm) GPU with CuPy")
def test_rocm_build_is_reported():
    """`omnitensor info` names the ROCm build exactly when CuPy is one."""
    rocm = ot.cuda.is_rocm()
    report = ot.info(print_report=False)
    cuda_lines = [ln for ln in report.splitlines() if ln.lstrip().startswith("cuda")]
    assert cuda_lines and any("ROCm" in ln for ln in cuda_lines) == rocm


@pytest.mark.skipif(not ot.cuda.is_available(), reason="needs a CUDA (or ROCm) GPU with CuPy")
def test_memory_stats_and_sync():
    before = ot.cuda.memory_allocated(0)
    t = ot.ones(1 << 20, device="cuda:0")
    assert ot.cuda.memory_allocated(0) >= before + 4 * (1 << 20)
    ot.cuda.synchronize(0)
    assert ot.cuda.get_device_name(0)
    del t
