"""Fusion (issue 20 item 3): fused replay == unfused replay == eager, forward and gradients,
on every device; what fuses and what stays a library call."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.nn.functional as F
from omnitensor import nn
from omnitensor.compiler import capture, replay
from omnitensor.compiler.fusion import fusion_pass, plan
from omnitensor.compiler.replay import Launch

from compile_models import CUDA_SYNTAX_SHIM, sgd_steps, trace_graph

pytest.importorskip("numba")


_trace = trace_graph


def _plans(fn, args):
    """(eager result, graph, unfused plan, fused plan, input arrays by graph order)."""
    res, g, arrays = _trace(fn, args)
    return res, g, replay.build_plan(g, passes=()), replay.build_plan(
        g, passes=[fusion_pass]), arrays


def _np(dev_array, device):
    return ot.device(device).backend.to_numpy(dev_array)


def _rand(device, *shape, seed=0):
    rng = np.random.default_rng(seed + len(shape))
    return ot.tensor(rng.standard_normal(shape).astype(np.float32), device=device)


def test_elementwise_chain_with_broadcast_and_casts_is_one_kernel(device):
    x, b = _rand(device, 32, 16), _rand(device, 16, seed=1)

    def f(x, b):
        y = (x * 2.0 + b).relu() * x - b / 3.0
        m = (y > 0.5).float()
        return (y * m + (1 - m) * x).double() * 0.25
    res, g, p0, p1, arrays = _plans(f, (x, b))
    launches = [s for s in p1.steps if isinstance(s, Launch)]
    assert len(launches) == 1 and len(p1.steps) < len(p0.steps)
    want = res.cpu().numpy()
    got0, got1 = _np(p0(arrays)[0], device), _np(p1(arrays)[0], device)
    np.testing.assert_array_equal(got0, want)
    # arithmetic, comparisons and casts only: bitwise (no fma contraction in any dialect)
    np.testing.assert_array_equal(got1, want)
    assert got1.dtype == np.float64


def test_fused_kernels_come_from_the_backends_hook(device):
    """A device's fused launcher is its backend's ``fused_kernels`` hook (the compiler has
    none of its own), and its program is rendered in the dialect that launcher names."""
    from omnitensor.backends.fused import FusedLauncher
    x, b = _rand(device, 8, 4), _rand(device, 4, seed=1)
    _res, _g, _p0, p1, _arrays = _plans(lambda x, b: (x * 2.0 + b).exp() - x, (x, b))
    [launch] = [s for s in p1.steps if isinstance(s, Launch)]
    cls = ot.device(device).backend.hook("fused_kernels")()
    assert issubclass(cls, FusedLauncher) and isinstance(launch.fn, cls)
    dialect = getattr(cls, "dialect", None)
    if dialect is not None:  # C launchers: their source starts with the dialect's prelude
        assert launch.fn.source.startswith(dialect.prelude)


def test_transcendental_chain_within_float32_ulps(device):
    x = _rand(device, 1000)

    def f(x):
        return (x.tanh() * 3.0).exp().log1p().sqrt() / (1 + x.abs()) + x.sigmoid()
    res, g, p0, p1, arrays = _plans(f, (x,))
    assert sum(isinstance(s, Launch) for s in p1.steps) == 1
    np.testing.assert_allclose(_np(p1(arrays)[0], device), res.cpu().numpy(), rtol=4e-7,
                               atol=1e-7)


def _grads(fn, device, shape=(8, 10), seed=3):
    x = _rand(device, *shape, seed=seed).requires_grad_()

    def step(x, w, t):
        x.grad = None
        out = fn(x, w, t)
        out.backward()
        return out, x.grad
    return x, step


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "cross_entropy", "layer_norm",
                                  "mean_max"])
def test_reduction_patterns_forward_and_gradient(device, name):
    t = ot.tensor(np.arange(8) % 10, device=device)
    w = _rand(device, 10, seed=5)
    fns = {
        "softmax": lambda x, w, t: (F.softmax(x, dim=1) * w).sum(),
        "log_softmax": lambda x, w, t: (F.log_softmax(x, dim=1) * w).sum(),
        "cross_entropy": lambda x, w, t: F.cross_entropy(x, t),
        "layer_norm": lambda x, w, t: (F.layer_norm(x, (10,)) * w).sum(),
        "mean_max": lambda x, w, t: (x.exp().mean(dim=0) - x.amax(dim=1).mean()).square()
        .sum(),
    }
    x, step = _grads(fns[name], device)
    res, g, arrays = _trace(step, (x, w, t))
    p0 = replay.build_plan(g, passes=())
    p1 = replay.build_plan(g, passes=[fusion_pass])
    groups, _, _ = plan(g)
    assert any(p.spec.is_reduce and len(p.members) >= 2 for p in groups)
    want = [r.detach().cpu().numpy() for r in res]
    for p in (p0, p1):
        got = [_np(a, device) for a in p(arrays)]
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=2e-6)


def _mlp_run(device, compiled, steps=4, fusion="1", monkeypatch=None):
    monkeypatch.setenv("OMNITENSOR_FUSION", fusion)
    ot.compiler.reset()
    ot.manual_seed(0)
    m = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, 10)).to(device)
    losses, params, _grads, f = sgd_steps(m, device, compiled, steps)
    return losses, params, f


def test_mlp_sgd_momentum_step_fused_matches_eager(device, monkeypatch):
    le, pe, _ = _mlp_run(device, False, monkeypatch=monkeypatch)
    lf, pf, f = _mlp_run(device, True, monkeypatch=monkeypatch)
    assert f.cache_info()["replays"] >= 1
    np.testing.assert_allclose(lf, le, rtol=1e-6)
    for a, b in zip(pf, pe):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_mlp_step_plan_keeps_matmul_a_library_call(device, monkeypatch):
    _, _, f = _mlp_run(device, True, steps=3, monkeypatch=monkeypatch)
    g = f.graphs()[-1]
    p1 = replay.build_plan(g, passes=[fusion_pass])
    fused = [s for s in p1.steps if isinstance(s, Launch)]
    left = [s.op for s in p1.steps if not isinstance(s, Launch)]
    assert len(fused) >= 10 and len(p1.steps) < 0.6 * len(g.nodes)
    assert left.count("matmul") == sum(n.op == "matmul" for n in g.nodes)
    # the SGD momentum update (buf.mul_(m).add_(g); p.add_(buf, alpha=-lr)): one kernel
    # writing both buffers in place
    assert sum(len({b.id for _o, b in s.writes}) == 2 for s in fused) >= 6


def test_fusion_off_by_environment(monkeypatch):
    x = _rand("cpu", 8)
    res, g = capture.trace(lambda x: (x * 2 + 1).exp(), (x,))
    monkeypatch.setenv("OMNITENSOR_FUSION", "0")
    assert not any(isinstance(s, Launch)
                   for s in replay.build_plan(g, passes=[fusion_pass]).steps)


def test_inplace_write_into_a_strided_buffer_falls_back(device):
    base = ot.zeros(6, 4, device=device)
    view = base.t()                    # (4, 6), not contiguous
    y = _rand(device, 4, 6)

    def f(v, y):
        v.mul_(2.0).add_(y)
        return v
    _res, g = capture.trace(f, (view, y))
    base2 = ot.zeros(6, 4, device=device)
    p1 = replay.build_plan(g, passes=[fusion_pass])
    arrays = {"args[0]": base2.t()._data, "args[1]": y._data}
    p1([arrays[i.name] for i in g.inputs])
    np.testing.assert_array_equal(base2.t().cpu().numpy(), y.cpu().numpy())


def _graph(nodes, inputs, outputs):
    from omnitensor.compiler.ir import Graph, Input
    return Graph("cpu", [Input(v, "arg", f"args[{i}]") for i, v in enumerate(inputs)],
                 nodes, outputs, [], {})


def test_write_in_place_between_a_groups_reads_keeps_the_order():
    """``t = 2x; x <- y + 1 (in place); z = t + x``: the group reading the old x must run
    before the in-place write (it may not grow past it), the write fuses with z."""
    from omnitensor.compiler.ir import Node, Value
    x, y = Value(0, (16,), "float32"), Value(1, (16,), "float32")
    t, x2, z, w = (Value(i, (16,), "float32") for i in (2, 3, 4, 5))
    nodes = [Node("multiply", (x, 2.0), {}, (t,)),
             Node("add", (y, 1.0), {"out": x}, (x2,), inplace_of=x),
             Node("add", (t, x2), {}, (z,)),
             Node("exp", (t,), {}, (w,))]
    g = _graph(nodes, [x, y], [z, w])
    xs = np.arange(16, dtype=np.float32)
    ys = np.full(16, 3.0, np.float32)
    want = replay.build_plan(g, passes=())([xs.copy(), ys])
    p1 = replay.build_plan(g, passes=[fusion_pass])
    assert any(isinstance(s, Launch) and s.writes for s in p1.steps)
    got = p1([xs.copy(), ys])
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(want[0], 2 * xs + ys + 1)


def test_view_of_a_fused_value_read_outside_moves_after_the_launch():
    """A reshape of a fused value that a library call reads stays, after the launch."""
    from omnitensor.compiler.ir import Node, Value
    x = Value(0, (4, 3), "float32")
    a, b, r, m = Value(1, (4, 3), "float32"), Value(2, (4, 3), "float32"), \
        Value(3, (12,), "float32"), Value(4, (12,), "float32")
    c = Value(5, (4, 3), "float32")
    nodes = [Node("exp", (x,), {}, (a,)),
             Node("reshape", (a, (12,)), {}, (r,)),
             Node("multiply", (a, 2.0), {}, (b,)),
             Node("add", (b, a), {}, (c,)),
             Node("cumsum", (r, 0), {}, (m,))]
    g = _graph(nodes, [x], [c, m])
    xs = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    want = replay.build_plan(g, passes=())([xs])
    p1 = replay.build_plan(g, passes=[fusion_pass])
    assert [type(s).__name__ for s in p1.steps] == ["Launch", "Node", "Node"]
    for a_, b_ in zip(p1([xs]), want):
        np.testing.assert_allclose(a_, b_, rtol=1e-6)


def test_cuda_source_is_valid_cxx(tmp_path):
    """The CUDA C dialect compiles (syntax and types) as C++ with CUDA's names shimmed."""
    import shutil
    import subprocess
    from omnitensor.kernels import fused as render
    from omnitensor.kernels.fused_spec import coalesce
    cxx = shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no C++ compiler to check the CUDA dialect's syntax")
    x, b = _rand("cpu", 8, 10), _rand("cpu", 10, seed=2)
    _res, g, _arrays = _trace(lambda x, b: (F.softmax(x * b, dim=1) > 0.1).float(), (x, b))
    groups, _, _ = plan(g)
    assert groups
    # the kernels' CUDA prelude (omnitensor.kernels.scalar.prelude) includes cuda_fp16.h and
    # defines half conversions and complex operators: declare what it uses
    (tmp_path / "cuda_fp16.h").write_text("")
    shim = CUDA_SYNTAX_SHIM
    for p in groups:
        src = shim + render.c_source(coalesce(p.spec), "fused", "cuda")
        r = subprocess.run([cxx, "-fsyntax-only", "-x", "c++", "-I", str(tmp_path), "-"],
                           input=src, text=True, capture_output=True)
        assert r.returncode == 0, r.stderr + src


def test_plans_sharing_one_kernel_keep_their_own_arguments(device):
    """Two compiled functions with the same fused group share one built kernel (one
    program per source); each launch must set its own offsets, not reuse the other's."""
    def body(x):
        return (x * 2 + 1).exp() - x
    f1, f2 = ot.compile(body), ot.compile(body)
    base = ot.linspace(0, 1, 64, device=device)
    a, b = base[0:32], base[32:64]
    for _ in range(4):
        r1, r2 = f1(a), f2(b)
        np.testing.assert_allclose(np.asarray(r1.tolist()), np.asarray(body(a).tolist()),
                                   rtol=1e-6)
        np.testing.assert_allclose(np.asarray(r2.tolist()), np.asarray(body(b).tolist()),
                                   rtol=1e-6)
