"""torch.profiler's kineto_available and tensorboard_trace_handler(use_python_export=),
on every device: both exporter choices write the same trace events."""
import json
import os

import pytest

import omnitensor as ot
from omnitensor import profiler

torch = pytest.importorskip("torch")


def test_kineto_available() -> None:
    # the same question to both libraries: torch's build has Kineto, omnitensor has none
    assert isinstance(torch.profiler.kineto_available(), bool)
    assert profiler.kineto_available() is False


def test_tensorboard_trace_handler_use_python_export(device, tmp_path) -> None:
    x = ot.ones(8, device=device)
    names = []
    for flag in (False, True):
        logdir = tmp_path / f"tb{flag}"
        handler = profiler.tensorboard_trace_handler(str(logdir), "w", use_gzip=False,
                                                     use_python_export=flag)
        with profiler.profile(activities=list(profiler.ProfilerActivity),
                              on_trace_ready=handler):
            (x * 3).sum()
        (f,) = os.listdir(logdir)
        assert f.startswith("w.") and f.endswith(".pt.trace.json")
        events = json.loads((logdir / f).read_text())["traceEvents"]
        names.append(sorted({e["name"] for e in events if e.get("ph") == "X"}))
    assert names[0] == names[1] and any("mul" in n for n in names[0])


def test_device_type_is_c10s_enumeration_and_reads_events(device) -> None:
    """torch.profiler.DeviceType: torch's members, c10's numbers and printing; a torch
    script filtering events by DeviceType finds omnitensor's events of each device."""
    theirs = torch.profiler.DeviceType.__members__
    assert {m.name for m in profiler.DeviceType} == set(theirs)
    for name, member in theirs.items():
        assert int(profiler.DeviceType[name]) == int(member)
        assert str(profiler.DeviceType[name]) == str(member)
    x = ot.ones(8, device=device)
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU]) as prof:
        (x * 3).sum()
    want = {"cpu": "CPU", "opencl": "OPENCL", "sycl": "XPU", "cuda": "CUDA"}[x.device.type]
    kind = profiler.DeviceType[want]
    ops = [e for e in prof.events() if e.device_type == kind]
    assert ops and all(e.device == str(x.device) for e in ops if e.device_type != "cpu")
