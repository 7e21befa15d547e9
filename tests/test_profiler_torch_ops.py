"""The profiler reads like torch's: rows by torch op (aten::linear...) and by nn.Module,
FLOPs of linear and convolution layers equal to torch's counts, Python stacks
(group_by_stack_n, export_stacks, the trace's "Call stack"), on every device; and with
no profiler running nothing of it is left installed."""
from __future__ import annotations

import json

import numpy as np
import pytest

import omnitensor as ot
from omnitensor import nn
from omnitensor.nn import functional as F
from omnitensor.optim.optimizer import Optimizer
from omnitensor.profiler import profile

torch = pytest.importorskip("torch")


def _model(lib, device=None):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3, stride=2, padding=1), lib.nn.ReLU(),
                          lib.nn.Flatten(), lib.nn.Linear(4 * 4 * 4, 5))
    return m if device is None else m.to(device)


def _keys(prof):
    return {r.key for r in prof.key_averages()}


def test_rows_are_torch_ops_and_modules(device):
    m = _model(ot, device)
    x = ot.randn(2, 3, 8, 8, device=device)
    opt = ot.optim.SGD(m.parameters(), lr=0.1)
    m(x).sum().backward()
    with profile(with_modules=True, record_shapes=True) as prof:
        loss = m(x).sum()
        loss.backward()
        opt.step()
    keys = _keys(prof)
    assert {"aten::conv2d", "aten::relu", "aten::linear", "aten::sum",
            "nn.Module: Sequential_0", "nn.Module: Conv2d_0", "nn.Module: ReLU_0",
            "nn.Module: Linear_0", "Optimizer.step#SGD.step"} <= keys
    # no backend primitive names (the Array API names of backends/base.py)
    assert all(k.startswith(("aten::", "nn.Module: ", "Optimizer.")) for k in keys), keys
    assert not keys & {"matmul", "multiply", "maximum", "reshape", "broadcast_to"}
    # the module hierarchy: linear inside Linear_0 inside Sequential_0
    lin = [e for e in prof.events() if e.name == "aten::linear"][0]
    assert lin.cpu_parent.name == "nn.Module: Linear_0"
    assert lin.cpu_parent.cpu_parent.name == "nn.Module: Sequential_0"
    assert lin.input_shapes == [[2, 64], [5, 64], [5]]
    assert str(lin.device) == str(ot.device(device))
    # what torch shows for the same program is here too (its names for the same ops)
    tm = _model(torch)
    with torch.profiler.profile(with_modules=True) as tprof:
        tm(torch.randn(2, 3, 8, 8)).sum()
    theirs = {r.key for r in tprof.key_averages()}
    shared = {"aten::conv2d", "aten::relu", "aten::linear", "aten::sum", "aten::flatten"}
    assert shared <= theirs and shared <= keys


def test_flops_of_linear_and_conv_equal_torch(device):
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    with torch.profiler.profile(with_flops=True) as tprof:
        _model(torch)(torch.from_numpy(x))
    t = {r.key: r.flops for r in tprof.key_averages() if r.flops}
    with profile(with_flops=True) as prof:
        _model(ot, device)(ot.tensor(x, device=device))
    ours = {r.key: r.flops for r in prof.key_averages() if r.flops}
    assert ours == {"aten::conv2d": t["aten::conv2d"], "aten::linear": t["aten::addmm"]}
    table = prof.key_averages().table()
    assert "Total KFLOPs" in table.splitlines()[1] or "Total FLOPs" in table.splitlines()[1]
    # backward products are counted too: forward, and dW = a^T g (a needs no gradient)
    w = ot.randn(16, 32, device=device, requires_grad=True)
    a = ot.randn(8, 16, device=device)
    with profile(with_flops=True) as prof:
        (a @ w).sum().backward()
    total = sum(r.flops for r in prof.key_averages())
    assert total == 2 * (2 * 8 * 16 * 32)


def _call_site_a(x):
    return ot.relu(x)


def _call_site_b(x):
    return ot.relu(x)


def test_stacks_group_export_and_trace(device, tmp_path):
    x = ot.randn(4, 4, device=device)
    with profile(with_stack=True, with_modules=True) as prof:
        _call_site_a(x)
        _call_site_b(x)
        _call_site_b(x)
        nn.Linear(4, 2).to(device)(x)
    relu = [e for e in prof.events() if e.name == "aten::relu"]
    assert len(relu) == 3
    assert relu[0].stack[0].endswith("): _call_site_a") and __file__ in relu[0].stack[0]
    assert any("test_stacks_group_export_and_trace" in f for f in relu[0].stack)
    assert not any("omnitensor/profiler" in f for f in relu[0].stack)
    by_site = [r for r in prof.key_averages(group_by_stack_n=1) if r.key == "aten::relu"]
    assert sorted(r.count for r in by_site) == [1, 2]
    assert all(len(r.stack) == 1 for r in by_site)
    assert all(not r.stack for r in prof.key_averages())  # no grouping: no stacks kept
    text = prof.key_averages(group_by_stack_n=2).table()
    assert "Source Location" in text and "_call_site_b" in text
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path), "self_cpu_time_total")
    lines = path.read_text().splitlines()
    assert lines and all(ln.rsplit(" ", 1)[1].isdigit() for ln in lines)
    site = [ln for ln in lines if ln.split(" ")[0].endswith("_call_site_a")]
    assert site and ";" in site[0] and " " not in site[0].rsplit(" ", 1)[0]
    trace = tmp_path / "trace.json"
    prof.export_chrome_trace(str(trace))
    doc = json.loads(trace.read_text())
    assert doc["with_stack"] == 1 and doc["with_modules"] == 1
    ops = [e for e in doc["traceEvents"] if e.get("name") == "aten::relu"]
    assert ops and "_call_site_a" in ops[0]["args"]["Call stack"].split(";")[0]
    mods = [e for e in doc["traceEvents"] if e.get("cat") == "python_function"]
    assert [e["name"] for e in mods] == ["nn.Module: Linear_0"]


def test_group_by_input_shape_keeps_torch_names(device):
    with profile(record_shapes=True) as prof:
        for n in (2, 2, 3):
            F.linear(ot.ones(n, 4, device=device), ot.ones(5, 4, device=device))
    rows = [r for r in prof.key_averages(group_by_input_shape=True) if r.key == "aten::linear"]
    assert sorted((r.input_shapes[0], r.count) for r in rows) == [([2, 4], 2), ([3, 4], 1)]
    assert prof.events().key_averages(group_by_input_shapes=True)  # EventList's spelling


def test_nothing_stays_installed_and_errors_propagate(device):
    import omnitensor.linalg as L
    before = {"Tensor": dict(vars(ot.Tensor)), "ot": dict(vars(ot)), "F": dict(vars(F)),
              "L": dict(vars(L)), "Module": dict(vars(nn.Module)),
              "Optimizer": dict(vars(Optimizer))}
    add = ot.Tensor.__add__
    a = ot.ones(2, 3, device=device)
    with profile():
        assert ot.Tensor.__add__ is not add  # wrapped while it runs
        with pytest.raises(Exception):
            a @ a  # a shape error inside a wrapped op still reaches the caller
        assert (a + 1).sum().item() == 12
    assert ot.Tensor.__add__ is add
    after = {"Tensor": dict(vars(ot.Tensor)), "ot": dict(vars(ot)), "F": dict(vars(F)),
             "L": dict(vars(L)), "Module": dict(vars(nn.Module)),
             "Optimizer": dict(vars(Optimizer))}
    for k in before:
        assert after[k].keys() == before[k].keys(), k
        assert all(after[k][n] is before[k][n] for n in before[k]), k
