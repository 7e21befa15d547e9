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
