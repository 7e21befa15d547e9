"""omnitensor.memory: torch.cuda's memory counters for every device, from each backend's
pool (peaks included where the pool tracks them)."""
from __future__ import annotations

import pytest

import omnitensor as ot
from omnitensor import memory

MiB = 1 << 20


def test_allocated_peak_reset_and_empty_cache(device):
    dev = ot.device(device)
    if dev.type == "cpu":  # no pool: the bytes live tensors hold, each buffer once
        base = memory.memory_allocated(dev)
        x = ot.empty(MiB, device=dev)                  # 4 MiB (float32)
        view = x[8:].reshape(-1)                       # a view adds nothing
        assert memory.memory_allocated(dev) == base + 4 * MiB
        assert memory.memory_reserved(dev) == memory.memory_allocated(dev)
        del x
        assert memory.memory_allocated(dev) == base + 4 * MiB  # the view keeps it alive
        del view
        assert memory.memory_allocated(dev) == base
        assert "no pool" in memory.memory_summary(dev)
        return
    ot.synchronize(dev)
    memory.empty_cache(dev)
    memory.reset_peak_memory_stats(dev)
    base = memory.memory_allocated(dev)
    a = ot.empty(MiB, device=dev)              # 4 MiB each (float32)
    b = ot.empty(MiB, device=dev)
    assert memory.memory_allocated(dev) >= base + 8 * MiB
    del a, b
    ot.synchronize(dev)
    assert memory.memory_allocated(dev) <= base + 1024
    peak = memory.max_memory_allocated(dev)
    assert peak >= base + 8 * MiB
    assert memory.max_memory_reserved(dev) >= peak
    assert memory.memory_reserved(dev) >= 8 * MiB        # the blocks stay cached
    memory.empty_cache(dev)
    assert memory.memory_reserved(dev) < 8 * MiB
    memory.reset_peak_memory_stats(dev)
    assert memory.max_memory_allocated(dev) == memory.memory_allocated(dev)
    text = memory.memory_summary(dev)
    assert str(dev) in text and "peak" in text and "allocated" in text


def test_device_spellings(device):
    dev = ot.device(device)
    with ot.device(dev):
        assert memory.memory_stats() == memory.memory_stats(str(dev))
        assert memory.memory_allocated(dev.index) == memory.memory_allocated(dev)
    assert set(memory.memory_stats(dev)) >= {"allocated_bytes", "reserved_bytes"}


def test_cuda_spelling_without_cuda():
    if ot.cuda.is_available():
        pytest.skip("a CUDA device is present")
    assert ot.cuda.max_memory_allocated() == 0 and ot.cuda.memory_stats() == {}
    ot.cuda.reset_peak_memory_stats()
    assert ot.cuda.memory_summary() == "No CUDA device."


def test_bad_device_is_a_clear_error():
    from omnitensor.errors import DeviceError
    for fn in (memory.memory_allocated, memory.memory_summary, memory.reset_peak_memory_stats,
               memory.empty_cache):
        with pytest.raises(DeviceError, match="unknown device type in 'nope:0'"):
            fn("nope:0")
