"""omnitensor.utils.benchmark against torch.utils.benchmark: Measurement statistics and text
and Compare tables equal torch's for the same times; Timer measures on every device (its
default clock drains the accelerator), with globals, labels and num_threads honoured."""
from __future__ import annotations

import random
import timeit

import pytest
import torch.utils.benchmark as tb
from torch.utils.benchmark.utils.common import TaskSpec as TorchTaskSpec

import omnitensor as ot
import omnitensor.utils.benchmark as ob
from omnitensor.utils.benchmark.common import TaskSpec


def _measurements(mod, spec_cls, seed, envs=(None,), threads=(1, 4), n=7):
    rng = random.Random(seed)
    out = []
    for env in envs:
        for t in threads:
            for sub in ("float", "int"):
                for d in ("n=1", "n=8", "n=64"):
                    base = rng.uniform(1e-7, 5e-3)
                    times = [base * rng.uniform(0.8, 1.6) for _ in range(n)]
                    spec = spec_cls(stmt="x + y", setup="y = x", label="add", sub_label=sub,
                                    description=d, env=env, num_threads=t)
                    out.append(mod.Measurement(10, times, spec))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_measurement_statistics_and_repr_equal_torch(seed):
    ours = _measurements(ob, TaskSpec, seed)
    theirs = _measurements(tb, TorchTaskSpec, seed)
    for o, t in zip(ours, theirs):
        assert o.times == pytest.approx(t.times, rel=1e-15)
        assert o.median == pytest.approx(t.median, rel=1e-12)
        assert o.mean == pytest.approx(t.mean, rel=1e-12)
        assert o.iqr == pytest.approx(t.iqr, rel=1e-9)
        assert o.significant_figures == t.significant_figures
        assert o.has_warnings == t.has_warnings and o.title == t.title
        assert o.label == "add" and o.num_threads == t.num_threads  # task fields read through
        # the text after the first line (the object's address)
        assert repr(o).split("\n", 1)[1] == repr(t).split("\n", 1)[1]
    one = ob.Measurement(100, [2e-4], TaskSpec("f(x)", "pass"))
    tone = tb.Measurement(100, [2e-4], TorchTaskSpec("f(x)", "pass"))
    assert repr(one).split("\n", 1)[1] == repr(tone).split("\n", 1)[1]
    merged = ob.Measurement.merge(ours + ours)
    assert len(merged) == len(ours) and merged[0].number_per_run == 1
    assert len(merged[0].times) == 2 * len(ours[0].times)


@pytest.mark.parametrize("envs", [(None,), ("main", "branch")])
@pytest.mark.parametrize("style", ["plain", "trim", "colorize", "rowwise", "warnings"])
def test_compare_tables_equal_torch(envs, style):
    ours, theirs = ob.Compare(_measurements(ob, TaskSpec, 5, envs)), \
        tb.Compare(_measurements(tb, TorchTaskSpec, 5, envs))
    for c in (ours, theirs):
        if style == "trim":
            c.trim_significant_figures()
        elif style == "colorize":
            c.colorize()
        elif style == "rowwise":
            c.colorize(rowwise=True)
        elif style == "warnings":
            c.highlight_warnings()
            c.trim_significant_figures()
    assert str(ours) == str(theirs)
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        ours.extend_results([1.0])


def test_timer_measures_with_globals_labels_and_threads(device, capsys):
    x = ot.ones(64, 64, device=device)
    seen = []
    t = ob.Timer("y = x @ x; seen.append(torch.get_num_threads())", setup="z = 1",
                 globals={"x": x, "seen": seen}, label="matmul", sub_label="64",
                 description=device, num_threads=2)
    m = t.timeit(20)
    assert isinstance(m, ob.Measurement) and m.number_per_run == 20 and len(m.times) == 1
    assert m.median > 0 and m.label == "matmul" and m.sub_label == "64"
    assert set(seen) == {2} and ot.get_num_threads() != 0
    b = t.blocked_autorange(min_run_time=0.05)
    assert sum(b.raw_times) >= 0.05 and b.median > 0 and b.number_per_run >= 1
    calls = []
    a = t.adaptive_autorange(threshold=0.5, max_run_time=2.0,
                             callback=lambda n, s: calls.append((n, s)))
    assert len(a.times) == len(calls) >= 4 and a.mean > 0
    text = repr(b)
    assert "matmul: 64" in text and device in text and "2 threads" in text
    ob.Compare([m, b, a]).print()
    assert "matmul" in capsys.readouterr().out


def test_default_timer_drains_the_device(device):
    if device == "cpu":
        pytest.skip("cpu work is synchronous")
    # generated elementwise kernels (a library matmul may block the host for part of its
    # run, which made the enqueue-only figure too close to call on a loaded machine)
    x = ot.randn(4_000_000, device=device)
    x.sin().cos().sum().item()
    stmt = "x.sin().cos()"
    synced = ob.Timer(stmt, globals={"x": x}).timeit(3).median
    enqueue_only = ob.Timer(stmt, globals={"x": x}, timer=timeit.default_timer).timeit(3)
    x.device.synchronize()
    # the device clock covers the kernels; without it only their enqueueing is timed
    assert synced > 5 * enqueue_only.median


def test_bad_use_and_unsupported_parts_say_so():
    with pytest.raises(ValueError, match="only a `str` stmt"):
        ob.Timer(lambda: 1)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        ob.Timer("pass", global_setup="#include <x>")
    with pytest.raises(NotImplementedError, match="language"):
        ob.Timer("pass", language="cpp")
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        ob.Timer("pass").repeat()
    with pytest.raises(NotImplementedError, match="Fuzzer is not supported"):
        ob.Fuzzer(parameters=[])
    with pytest.raises(NotImplementedError, match="callgrind"):
        ob.Timer("pass").collect_callgrind()
    with pytest.raises(ValueError, match="num_threads"):
        ob.Timer("pass", num_threads=0)
    assert ob.select_unit(3e-5) == ("us", 1e-6)
    assert ob.trim_sigfig(3.14159, 2) == pytest.approx(3.1)
