"""omnitensor.profiler: torch.profiler's interface on every device, device time from the
device's own clock, valid trace-event JSON, torch's schedule and on_trace_ready pattern."""
from __future__ import annotations

import gzip
import json
import os
import re
import threading
import time

import numpy as np
import pytest

import omnitensor as ot
from omnitensor.profiler import (ProfilerAction, ProfilerActivity, profile, record_function,
                                 schedule, tensorboard_trace_handler)

ALL = [ProfilerActivity.CPU, ProfilerActivity.CUDA]


def _mlp_step(x, w1, w2):
    h = ot.relu(x @ w1 + 1.0)
    loss = (h @ w2).sum()
    loss.backward()
    return loss.item()


def _params(device):
    rng = np.random.default_rng(0)
    x = ot.tensor(rng.standard_normal((8, 16)).astype(np.float32), device=device)
    w1 = ot.tensor(rng.standard_normal((16, 32)).astype(np.float32), device=device,
                   requires_grad=True)
    w2 = ot.tensor(rng.standard_normal((32, 4)).astype(np.float32), device=device,
                   requires_grad=True)
    return x, w1, w2


def _row(rows, key):
    found = [r for r in rows if r.key == key]
    assert found, f"no {key!r} row in {[r.key for r in rows]}"
    return found[0]


def test_key_averages_times_shapes_memory(device):
    x, w1, w2 = _params(device)
    _mlp_step(x, w1, w2)  # compile kernels outside the profile
    with profile(activities=ALL, record_shapes=True, profile_memory=True) as prof:
        with record_function("train_step"):
            _mlp_step(x, w1, w2)
    rows = prof.key_averages()
    step = _row(rows, "train_step")
    mm = _row(rows, "aten::matmul")  # rows are torch ops, not backend primitives
    assert step.count == 1 and step.is_user_annotation
    assert mm.count >= 4  # 2 forward, >= 2 backward
    for r in rows:
        assert 0 <= r.self_cpu_time_total <= r.cpu_time_total + 1e-6
        assert r.cuda_time_total == r.device_time_total
        assert r.self_cuda_time_total == r.self_device_time_total
    # the range holds every op: its total covers their self times
    ops = [e for e in prof.events() if not e.is_user_annotation]
    assert step.cpu_time_total >= sum(e.self_cpu_time_total for e in ops) * 0.999
    if device == "cpu":
        assert all(r.device_time_total == 0 for r in rows)
    else:  # device clock: every op that ran a kernel has device time, summed up the tree
        assert mm.device_time_total > 0 and mm.self_device_time_total > 0
        assert step.device_time_total == pytest.approx(
            sum(e.self_device_time_total for e in ops), rel=1e-6)
    # input shapes and memory: x @ w1 is [[8, 16], [16, 32]] and allocates 8*32 float32
    by_shape = prof.key_averages(group_by_input_shape=True)
    first = [r for r in by_shape if r.key == "aten::matmul" and r.input_shapes == [[8, 16], [16, 32]]]
    assert len(first) == 1 and first[0].count == 1
    mem = first[0].self_cpu_memory_usage + first[0].self_device_memory_usage
    assert mem == 8 * 32 * 4
    if device == "cpu":
        assert first[0].self_device_memory_usage == 0
    else:
        assert first[0].self_cpu_memory_usage == 0
    views = [r for r in rows if r.key in ("aten::expand", "aten::permute", "aten::reshape",
                                          "aten::t", "aten::transpose", "aten::view")]
    assert all(r.self_cpu_memory_usage == r.self_device_memory_usage == 0 for r in views)


def test_table_sorted_limited_and_named(device):
    x, w1, w2 = _params(device)
    _mlp_step(x, w1, w2)
    with profile(activities=ALL, record_shapes=True) as prof:
        with record_function("step"):
            _mlp_step(x, w1, w2)
    avgs = prof.key_averages()
    # a range holding only ops has no device time of its own (exactly: no rounding)
    assert _row(avgs, "step").self_device_time_total == 0
    for sort_by in ("cpu_time_total", "self_cpu_time_total", "device_time_total",
                    "cuda_time_total"):
        text = avgs.table(sort_by=sort_by, row_limit=3)
        lines = text.splitlines()
        assert lines[1].split()[0] == "Name" and "# of Calls" in lines[1]
        assert "Input Shapes" in lines[1]
        body = lines[3:lines.index(lines[0], 3)]
        assert len(body) == 3
        attr = sort_by.replace("cuda", "device")
        expect = sorted(avgs, key=lambda r: getattr(r, attr), reverse=True)[:3]
        assert [ln.split()[0] for ln in body] == [r.key[:49] for r in expect]
        assert "Self CPU time total:" in text
        if device != "cpu":
            kind = device.split(":")[0].upper()
            assert f"Self {kind}" in lines[1] and f"Self {kind} time total:" in text
    with pytest.raises(ValueError, match="sort_by='bogus'.*cuda_time_total"):
        avgs.table(sort_by="bogus")


def _check_trace(doc, device):
    assert isinstance(doc["traceEvents"], list) and doc["traceEvents"]
    pid = os.getpid()
    flows: dict[int, list[str]] = {}
    for e in doc["traceEvents"]:
        assert e["ph"] in ("X", "M", "s", "f"), e
        assert isinstance(e["name"], str) and isinstance(e["pid"], int) and \
            isinstance(e["tid"], int)
        if e["ph"] == "X":
            assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0
            assert e["cat"] in ("cpu_op", "user_annotation", "kernel")
        if e["ph"] in ("s", "f"):
            flows.setdefault(e["id"], []).append(e["ph"])
    assert all(sorted(v) == ["f", "s"] for v in flows.values())
    ops = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "cpu_op"]
    kernels = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "kernel"]
    assert ops and all(e["pid"] == pid for e in ops)
    if device == "cpu":
        assert not kernels
    else:  # device work on its own track, named after the device
        assert kernels and all(k["pid"] != pid for k in kernels)
        names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "process_name"}
        assert all(names[k["pid"]].startswith(device) for k in kernels)
        assert len(flows) == len(kernels)
        # device clock aligned with the host's: work starts after its op was issued
        by_id = {e["args"]["External id"]: e for e in ops}
        assert all(k["ts"] >= by_id[k["args"]["External id"]]["ts"] - 20 for k in kernels)
    return ops, kernels


def test_export_chrome_trace_is_valid_json(device, tmp_path):
    x, w1, w2 = _params(device)
    _mlp_step(x, w1, w2)
    with profile(activities=ALL, record_shapes=True) as prof:
        with record_function("fwd_bwd"):
            _mlp_step(x, w1, w2)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    ops, kernels = _check_trace(doc, device)
    assert any(e["name"] == "aten::matmul" and e["args"]["Input Dims"] for e in ops)
    ann = [e for e in doc["traceEvents"] if e.get("cat") == "user_annotation"]
    assert [a["name"] for a in ann] == ["fwd_bwd"]
    lo, hi = ann[0]["ts"], ann[0]["ts"] + ann[0]["dur"]
    assert all(lo <= e["ts"] and e["ts"] + e["dur"] <= hi + 1e-3 for e in ops)
    if device.startswith("opencl"):  # one event per kernel, named by the kernel
        assert {k["args"]["op"] for k in kernels} >= {"aten::matmul"}
        assert any(k["name"] != k["args"]["op"] for k in kernels)
    gz = tmp_path / "trace.json.gz"
    prof.export_chrome_trace(str(gz))
    with gzip.open(gz) as f:
        assert json.load(f)["traceEvents"] == doc["traceEvents"]


def test_device_time_comes_from_the_device(device):
    if device == "cpu":
        pytest.skip("cpu ops have host time only (no device clock), as in torch")
    a = ot.randn(256, 256, device=device)
    (a @ a).sum().item()
    t0 = time.perf_counter_ns()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:  # device activity only
        for _ in range(3):
            a = a @ a * 1e-3
        a.sum().item()
    t1 = time.perf_counter_ns()
    evs = prof.events()
    assert evs and all(e.cpu_time_total == 0 and e.device_time_total > 0 for e in evs)
    mm = [e for e in evs if e.name == "aten::matmul"]
    assert len(mm) == 3
    for e in evs:  # spans lie inside the profiled window, on the host's clock
        for _name, s, end in e.spans:
            assert t0 - 1_000_000 <= s <= end <= t1 + 1_000_000
    assert sum(e.device_time_total for e in mm) * 1e3 <= (t1 - t0)


def test_cpu_activity_only_has_no_device_time(device):
    x, w1, w2 = _params(device)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        _mlp_step(x, w1, w2)
    assert prof.events() and all(e.device_time_total == 0 for e in prof.events())


def test_profiler_leaves_nothing_behind(device):
    x, w1, w2 = _params(device)
    be = ot.device(device).backend
    before = dict(be.__dict__)
    plain = _mlp_step(x, w1, w2)
    g_plain = w1.grad.numpy().copy()
    w1.grad = w2.grad = None
    with profile(activities=ALL, profile_memory=True, record_shapes=True):
        assert set(be.__dict__) > set(before)  # wrappers installed while it runs
        profiled = _mlp_step(x, w1, w2)
    assert be.__dict__ == before
    assert profiled == plain
    np.testing.assert_array_equal(w1.grad.numpy(), g_plain)
    if device.startswith("opencl"):
        from omnitensor.backends.opencl import launch
        assert launch.recording is None
        assert int(be.state(0).queue.properties) == 0  # the plain queue is back


def test_schedule_matches_torch():
    torch_profiler = pytest.importorskip("torch.profiler")
    import warnings
    for kw in (dict(wait=1, warmup=1, active=2), dict(wait=2, warmup=1, active=3, repeat=2),
               dict(wait=0, warmup=2, active=1, skip_first=3),
               dict(wait=3, warmup=1, active=2, skip_first=2, skip_first_wait=1, repeat=1),
               dict(wait=1, warmup=0, active=1, repeat=3)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours, theirs = schedule(**kw), torch_profiler.schedule(**kw)
        assert [ours(i).name for i in range(30)] == [theirs(i).name for i in range(30)], kw
    with pytest.raises(ValueError, match="active must be an int >= 1"):
        schedule(wait=1, warmup=1, active=0)
    with pytest.raises(ValueError, match="wait"):
        schedule(wait=-1, warmup=1, active=1)


def _torch_pattern(torch, kw, steps):
    tp = torch.profiler
    seen = []

    def ready(p):
        seen.append((p.step_num, [(k.key, k.count) for k in p.key_averages()
                                  if k.key.startswith("ProfilerStep")]))
    x = torch.ones(4)
    with tp.profile(activities=[tp.ProfilerActivity.CPU], schedule=tp.schedule(**kw),
                    on_trace_ready=ready) as p:
        for _ in range(steps):
            (x + 1).sum()
            p.step()
    return seen


def _our_pattern(device, kw, steps):
    seen = []

    def ready(p):
        seen.append((p.step_num, [(k.key, k.count) for k in p.key_averages()
                                  if k.key.startswith("ProfilerStep")]))
    x = ot.ones(4, device=device)
    with profile(activities=ALL, schedule=schedule(**kw), on_trace_ready=ready) as p:
        for _ in range(steps):
            (x + 1).sum()
            p.step()
    return seen


@pytest.mark.parametrize("kw,steps", [
    (dict(wait=1, warmup=1, active=2), 9),
    (dict(wait=1, warmup=1, active=2, repeat=1), 9),
    (dict(wait=0, warmup=1, active=1, skip_first=2), 7),
    (dict(wait=2, warmup=1, active=2), 4),   # stops inside a cycle: ready at stop()
])
def test_on_trace_ready_called_as_torch_does(device, kw, steps):
    torch = pytest.importorskip("torch")
    assert _our_pattern(device, kw, steps) == _torch_pattern(torch, kw, steps)


def test_profile_without_schedule_calls_ready_at_stop(device):
    calls = []
    with profile(activities=ALL, on_trace_ready=calls.append) as prof:
        (ot.ones(3, device=device) * 2).sum()
        assert calls == []
    assert calls == [prof]
    assert not any(k.key.startswith("ProfilerStep") for k in prof.key_averages())


def test_tensorboard_trace_handler_names_files_as_torch(device, tmp_path):
    logdir = tmp_path / "tb"
    x = ot.ones(8, device=device)
    with profile(activities=ALL, schedule=schedule(wait=0, warmup=1, active=1, repeat=2),
                 on_trace_ready=tensorboard_trace_handler(str(logdir), "worker0")) as p:
        for _ in range(6):
            (x * 3).sum()
            p.step()
    files = sorted(os.listdir(logdir))
    assert len(files) == 2
    for f in files:
        assert re.fullmatch(r"worker0\.\d+\.pt\.trace\.json", f), f
        _check_trace(json.loads((logdir / f).read_text()), device)


def test_start_stop_threads_and_decorator(device):
    @record_function("helper")
    def helper(t):
        return (t + 1).sum()

    x = ot.ones(16, device=device)
    prof = profile(activities=ALL)
    prof.start()
    helper(x)
    th = threading.Thread(target=lambda: (x * 2).sum())
    th.start()
    th.join()
    prof.stop()
    evs = prof.events()
    h = [e for e in evs if e.name == "helper"]
    assert len(h) == 1 and {c.name for c in h[0].cpu_children} >= {"aten::add", "aten::sum"}
    assert len({e.thread for e in evs}) == 2  # the other thread's ops are recorded too
    assert helper(x).item() == 32  # after stop: a plain call


def test_bad_use_is_refused_clearly(device):
    with pytest.raises(TypeError, match="ProfilerActivity"):
        profile(activities=["cpu"])
    with pytest.raises(ValueError, match="no activity"):
        profile(activities=[])
    with profile(activities=ALL) as no_stacks:
        pass
    with pytest.raises(RuntimeError, match="with_stack=True"):
        no_stacks.export_stacks("unused.txt")
    p = profile(activities=ALL)
    with pytest.raises(RuntimeError, match="no results yet"):
        p.key_averages()
    with profile(activities=ALL):
        with pytest.raises(RuntimeError, match="already running"):
            with profile(activities=ALL):
                pass
    with pytest.raises(TypeError, match="str"):
        record_function(3)  # type: ignore[arg-type]
    # an op failing inside a profile leaves the backend as it was
    from omnitensor.errors import ShapeError
    a, b = ot.ones(2, 3, device=device), ot.ones(4, 5, device=device)
    be = ot.device(device).backend
    before = dict(be.__dict__)
    with profile(activities=ALL):
        with pytest.raises(ShapeError):
            a @ b
    assert be.__dict__ == before


def test_backend_loaded_while_profiling_is_instrumented(device):
    """A backend that first loads inside a profile is wrapped as it loads (the registry's
    load listener): a fresh process whose first tensor on the device is made inside."""
    import subprocess
    import sys
    code = (
        "import omnitensor as ot\n"
        "from omnitensor.profiler import profile, ProfilerActivity as A\n"
        "with profile(activities=[A.CPU, A.CUDA]) as p:\n"
        f"    (ot.ones(4, device='{device}') * 2).sum().item()\n"
        "print(sorted({e.name for e in p.events()} & {'aten::mul', 'aten::sum'}), "
        "{e.device for e in p.events()})\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.returncode == 0, out.stderr
    assert f"['aten::mul', 'aten::sum'] {{'{device}'}}" in out.stdout, out.stdout
    assert ProfilerAction.RECORD.name == "RECORD"
