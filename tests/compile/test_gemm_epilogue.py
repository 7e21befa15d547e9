"""GEMM epilogue fusion (issue 20): where the device's matmul is omnitensor's generated GEMM
(opencl), a compiled replay runs each matmul with the elementwise ops on its product (bias
add, activation, casts, scaling, a gradient's chain, an optimizer update) as one launch;
library matmuls (cpu BLAS, sycl oneMKL) stay library calls. Compiled == eager everywhere."""
from __future__ import annotations

import re

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.nn.functional as F
from omnitensor import nn
from omnitensor.compiler import replay
from omnitensor.compiler.fusion import fusion_pass, gemm_epilogue_pass, plan
from omnitensor.compiler.replay import Launch

from compile_models import CUDA_SYNTAX_SHIM, sgd_steps, trace_graph

ACTS = {"relu": nn.ReLU, "gelu": nn.GELU, "tanh": nn.Tanh}


def _generated(device) -> bool:
    return bool(getattr(ot.device(device).backend, "generated_gemm", False))


def _gemm_launches(p) -> list:
    return [s for s in p.steps if isinstance(s, Launch) and s.name.startswith("fused_gemm")]


_trace = trace_graph


def _rand(device, *shape, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return ot.tensor(rng.standard_normal(shape).astype(dtype), device=device)


def _np(arr, device):
    return ot.device(device).backend.to_numpy(arr)


def _mlp(device, act):
    ot.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 256), ACTS[act](), nn.Linear(256, 256), ACTS[act](),
                         nn.Linear(256, 10)).to(device)


@pytest.mark.parametrize("act", sorted(ACTS))
def test_compiled_mlp_forward_equals_eager_and_torch(device, act):
    torch = pytest.importorskip("torch")
    ot.compiler.reset()
    m = _mlp(device, act)
    x = _rand(device, 64, 64, seed=1)
    want = m(x).detach().cpu().numpy()
    cm = ot.compile(m)
    with ot.no_grad():
        got = [cm(x).cpu().numpy() for _ in range(3)]  # capture, then replays
    for g in got:
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)
    tm = torch.nn.Sequential(torch.nn.Linear(64, 256), getattr(torch.nn, ACTS[act].__name__)(),
                             torch.nn.Linear(256, 256), getattr(torch.nn, ACTS[act].__name__)(),
                             torch.nn.Linear(256, 10))
    tm.load_state_dict({k: torch.tensor(v.detach().cpu().numpy())
                        for k, v in m.state_dict().items()})
    ref = tm(torch.tensor(x.cpu().numpy())).detach().numpy()
    np.testing.assert_allclose(got[-1], ref, rtol=1e-4, atol=1e-5)


def _train(device, act, compiled, steps=4):
    ot.compiler.reset()
    return sgd_steps(_mlp(device, act), device, compiled, steps)


@pytest.mark.parametrize("act", sorted(ACTS))
def test_compiled_training_step_equals_eager(device, act):
    le, pe, ge, _ = _train(device, act, False)
    lc, pc, gc, f = _train(device, act, True)
    assert f.cache_info()["replays"] >= 1
    np.testing.assert_allclose(lc, le, rtol=1e-5)
    for a, b in zip(gc, ge):  # the last step's gradients
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    for a, b in zip(pc, pe):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    g = f.graphs()[-1]
    registered = replay.build_plan(g)          # the pass compile uses
    without = replay.build_plan(g, passes=[fusion_pass])
    n_mm = sum(n.op == "matmul" for n in g.nodes)
    if _generated(device):
        fused = _gemm_launches(registered)
        # forward: 3 linears (+ activation); backward: 2 input gradients with the
        # activation's derivative, 3 weight gradients with the SGD momentum update
        assert len(fused) >= 6, [getattr(s, "name", s) for s in registered.steps]
        assert len(registered.steps) < len(without.steps)
        left = [s.op for s in registered.steps if not isinstance(s, Launch)]
        assert left.count("matmul") + len(fused) == n_mm
        # the weight-gradient GEMMs update momentum buffer and weight in place
        assert sum(len({b.id for _o, b in s.writes}) == 2 for s in fused) >= 3
    else:  # a library matmul: the pass is the plain fusion pass
        assert not _gemm_launches(registered)
        assert [getattr(s, "name", None) or s.op for s in registered.steps] == \
            [getattr(s, "name", None) or s.op for s in without.steps]


def _check(fn, args, device, rtol=1e-5, atol=1e-6):
    """Fused, unfused and eager agree; returns the GEMM-epilogue plan."""
    res, g, arrays = _trace(fn, args)
    res = res if isinstance(res, tuple) else (res,)
    want = [r.detach().cpu().numpy() for r in res]
    p0 = replay.build_plan(g, passes=())
    p1 = replay.build_plan(g, passes=[gemm_epilogue_pass])
    for p in (p0, p1):
        for _ in range(2):  # reused output buffers stay right
            got = [_np(a, device) for a in p(arrays)]
            for a, b in zip(got, want):
                np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    return p1


def test_product_used_twice_is_stored_and_still_correct(device):
    x, w, w2 = _rand(device, 33, 40), _rand(device, 40, 50, seed=2), _rand(device, 50, 7, seed=3)
    b = _rand(device, 50, seed=4)

    def f(x, w, w2, b):
        y = x @ w                      # read by the epilogue and by another matmul
        z = (y * 0.5 + b).tanh()
        return z, y @ w2, y.sum(0)
    p = _check(f, (x, w, w2, b), device)
    fused = _gemm_launches(p)
    if _generated(device):
        assert fused
        first = fused[0]
        assert len(first.outputs) == 2  # the product itself and the epilogue's result
    else:
        assert not fused


def test_epilogue_with_casts_and_the_product_written_in_place(device):
    x, w, b = _rand(device, 70, 130), _rand(device, 45, 130, seed=2), _rand(device, 45, seed=3)

    def f(x, w, b):
        h = F.linear(x, w, b)          # matmul, then the bias added into the product
        m = (h > 0.25).float()
        return (F.gelu(h) * m).double() * 0.5, h
    p = _check(f, (x, w, b), device)
    if _generated(device):
        (launch,) = _gemm_launches(p)
        assert len(p.steps) <= 3       # the transpose view is folded into the loads


@pytest.mark.parametrize("shape", [(5, 7, 3), (64, 64, 256), (67, 130, 45)],
                         ids=["generic", "tiles", "edge-tiles"])
def test_transposed_operands_as_backward_makes_them(device, shape):
    M, K, N = shape
    a, gout = _rand(device, K, M, seed=1), _rand(device, K, N, seed=2)
    wt = _rand(device, N, K, seed=3)
    buf, p = _rand(device, M, N, seed=4), _rand(device, M, N, seed=5)

    def f(a, gout, wt, buf, p):
        dw = a.t() @ gout              # weight gradient: (K, M)^T @ (K, N)
        buf.mul_(0.9).add_(dw)         # SGD momentum, written in place
        p.add_(buf, alpha=-0.1)
        dx = (gout @ wt) * 2.0 - 1.0   # input gradient through a stored transpose
        return p, buf, dx, (a.t() @ wt.t()).sigmoid()
    A, G, W = (_np(t._data, device).astype(np.float64) for t in (a, gout, wt))
    B0, P0 = _np(buf._data, device).astype(np.float64), _np(p._data, device).astype(np.float64)
    res, g, arrays = _trace(f, (a, gout, wt, buf, p))
    B1 = 0.9 * B0 + A.T @ G
    np.testing.assert_allclose(res[1].cpu().numpy(), B1, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(res[0].cpu().numpy(), P0 - 0.1 * B1, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(res[2].cpu().numpy(), (G @ W) * 2 - 1, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(res[3].cpu().numpy(), 1 / (1 + np.exp(-(A.T @ W.T))),
                               rtol=1e-4, atol=1e-5)
    # replays: fresh buffers each time, so the in-place updates start from the same state
    want = [r.detach().cpu().numpy() for r in res]
    p1 = replay.build_plan(g, passes=[gemm_epilogue_pass])
    fused = _gemm_launches(p1)
    assert len(fused) == (3 if _generated(device) else 0)
    be = ot.device(device).backend
    names = [i.name for i in g.inputs]
    for _ in range(2):
        fresh = [be.from_numpy(np.ascontiguousarray(_np(arr, device)), ot.device(device).index)
                 for arr in arrays]
        fresh[names.index("args[3]")] = be.from_numpy(B0.astype(np.float32),
                                                      ot.device(device).index)
        fresh[names.index("args[4]")] = be.from_numpy(P0.astype(np.float32),
                                                      ot.device(device).index)
        got = [_np(x, device) for x in p1(fresh)]
        for x, y in zip(got, want):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def test_a_write_into_an_operand_after_the_product_keeps_the_order(device):
    x, w = _rand(device, 20, 30), _rand(device, 30, 40, seed=2)

    def f(x, w):
        y = x @ w
        w.mul_(0.5)                    # after the product read w: the GEMM may not move past
        w2 = w * 1.0                   # (the write's own group ends here, before the relu)
        return (y + 1.0).relu(), w2
    w0 = w.cpu().numpy().astype(np.float64)
    res, g, arrays = _trace(f, (x, w))
    np.testing.assert_allclose(res[0].cpu().numpy(),
                               np.maximum(x.cpu().numpy() @ w0 + 1, 0), rtol=1e-5, atol=1e-5)
    p1 = replay.build_plan(g, passes=[gemm_epilogue_pass])
    names = [i.name for i in g.inputs]
    be, idx = ot.device(device).backend, ot.device(device).index
    fresh = list(arrays)
    fresh[names.index("args[1]")] = be.from_numpy(w0.astype(np.float32), idx)
    got = [_np(a, device) for a in p1(fresh)]
    np.testing.assert_allclose(got[0], res[0].cpu().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[1], w0 * 0.5, rtol=1e-6)


def test_a_view_taken_before_the_bias_add_sees_it(device):
    """``v`` shares the product's memory: after ``y += b`` in place it holds y + b, so the
    fused kernel stores the product's memory after the add (one output for both)."""
    x, w, b = _rand(device, 20, 30), _rand(device, 30, 40, seed=2), _rand(device, 40, seed=3)

    def f(x, w, b):
        y = x @ w
        v = y.reshape(-1)
        y.add_(b)
        return (y * 2.0).tanh(), v * 1.0
    p = _check(f, (x, w, b), device)
    assert len(_gemm_launches(p)) == (1 if _generated(device) else 0)


def test_in_place_activation_after_the_bias_add(device):
    """``y += b; y.relu_()``: every alias of the product's memory (the view ``v``, ``y``)
    holds the last write."""
    x, w, b = _rand(device, 20, 30), _rand(device, 30, 40, seed=2), _rand(device, 40, seed=3)

    def f(x, w, b):
        y = x @ w
        v = y.reshape(-1)
        y.add_(b)
        y.relu_()
        return y * 2.0, v * 1.0
    p = _check(f, (x, w, b), device)
    assert len(_gemm_launches(p)) == (1 if _generated(device) else 0)


def test_the_product_and_its_3d_view_written_in_place_share_memory(device):
    """The (B, T, N) view of the product written in place and the product itself (read by
    a reduction) are one memory: one output array, returned in both shapes."""
    x, w, b = _rand(device, 20, 30), _rand(device, 30, 40, seed=2), _rand(device, 40, seed=3)

    def f(x, w, b):
        y = x @ w
        y3 = y.reshape(4, 5, 40)
        y3.add_(b)
        return (y3 * 2.0).tanh(), y3, y.sum(0)
    p = _check(f, (x, w, b), device)
    assert len(_gemm_launches(p)) == (1 if _generated(device) else 0)


def test_linear_on_3d_inputs_training_step(device):
    """A transformer-style feed-forward block on (B, T, C) inputs: linear reshapes to
    (B*T, C), multiplies and reshapes back; the epilogue runs over the (B, T, N) view."""
    def run(compiled):
        ot.compiler.reset()
        ot.manual_seed(0)
        ff = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 16)).to(device)
        opt = ot.optim.SGD(ff.parameters(), lr=0.05, momentum=0.9)
        x = _rand(device, 4, 8, 16, seed=9)

        def step(x):
            opt.zero_grad()
            loss = (ff(x) + x).square().mean()
            loss.backward()
            opt.step()
            return loss
        f = ot.compile(step) if compiled else step
        losses = [float(f(x)) for _ in range(4)]
        return losses, [q.detach().cpu().numpy() for q in ff.parameters()], f
    le, pe, _ = run(False)
    lc, pc, f = run(True)
    np.testing.assert_allclose(lc, le, rtol=1e-5)
    for a, b in zip(pc, pe):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    fused = _gemm_launches(replay.build_plan(f.graphs()[-1]))
    # forward: both linears with their bias (and the residual); backward: the input
    # gradient through GELU, both weight gradients with their SGD update
    assert len(fused) >= (4 if _generated(device) else 0)
    assert _generated(device) or not fused


def _same_operand(x):
    return (x.t() @ x + 1.0).relu()          # one buffer, read as both operands


def _into_an_operand(x):
    w = x * 1.0
    x.add_(x @ w)                            # written in place into the product's operand:
    return x                                 # stays a call (the GEMM reads x as it runs)


def _broadcast_operand(x):
    return (x[:, :1].expand(40, 40) @ x) * 2.0 + 1.0   # stride-0 columns


@pytest.mark.parametrize("fn,fuses", [(_same_operand, True), (_into_an_operand, False),
                                      (_broadcast_operand, True)],
                         ids=["same-operand", "into-an-operand", "broadcast-operand"])
def test_odd_operands(device, fn, fuses):
    x = _rand(device, 40, 40, seed=7)
    x0 = x.cpu().numpy()
    res, g, arrays = _trace(fn, (x,))
    want = res.detach().cpu().numpy()
    p1 = replay.build_plan(g, passes=[gemm_epilogue_pass])
    assert bool(_gemm_launches(p1)) == (fuses and _generated(device))
    be, idx = ot.device(device).backend, ot.device(device).index
    fresh = [be.from_numpy(x0, idx) if i.name == "args[0]" else a
             for i, a in zip(g.inputs, arrays)]
    np.testing.assert_allclose(_np(p1(fresh)[0], device), want, rtol=1e-6, atol=1e-5)


def test_float64_and_integer_products(device):
    if not ot.device(device).supports_dtype(ot.float64):
        pytest.skip("no float64 on this device")
    x, w = _rand(device, 9, 300, dtype=np.float64), _rand(device, 300, 17, seed=2,
                                                             dtype=np.float64)
    p = _check(lambda x, w: ((x @ w) * 3.0).exp() - 1.0, (x, w), device, rtol=1e-12,
               atol=1e-12)
    assert len(_gemm_launches(p)) == (1 if _generated(device) else 0)
    xi, wi = (ot.tensor(np.arange(12).reshape(3, 4), device=device),
              ot.tensor(np.arange(8).reshape(4, 2), device=device))
    p = _check(lambda a, b: (a @ b) + 1, (xi, wi), device)
    assert not _gemm_launches(p)   # integer products stay calls


def test_cuda_dialect_renders_the_gemm_epilogue(tmp_path):
    """The CUDA C dialect gets the epilogue too: the generic kernel with it compiles as
    C++ with CUDA's names shimmed."""
    import shutil
    import subprocess
    from omnitensor.kernels import fused as render
    from omnitensor.kernels import gemm
    from omnitensor.kernels.ctype import BY_NP
    from omnitensor.kernels.dialect import CUDA_C, OPENCL_ONLY_PATTERNS
    cxx = shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no C++ compiler to check the CUDA dialect's syntax")
    x, w, b = _rand("cpu", 8, 10), _rand("cpu", 6, 10, seed=2), _rand("cpu", 6, seed=3)
    _res, g, _arrays = _trace(lambda x, w, b: F.gelu(F.linear(x, w, b)), (x, w, b))
    groups, _, _ = plan(g, gemm=True)
    specs = [p.spec for p in groups if p.spec.gemm is not None]
    assert specs
    (tmp_path / "cuda_fp16.h").write_text("")
    shim = CUDA_SYNTAX_SHIM
    src = render.c_program(specs, CUDA_C)
    assert "ot_v" in src and "Cm" not in src.split("batch_offsets")[-1]
    for pattern in OPENCL_ONLY_PATTERNS:
        assert not re.search(pattern, src), pattern
    r = subprocess.run([cxx, "-fsyntax-only", "-x", "c++", "-I", str(tmp_path), "-"],
                       input=shim + src, text=True, capture_output=True)
    assert r.returncode == 0, r.stderr + src
    with pytest.raises(ValueError, match="vector types"):  # CUDA: the generic kernel only
        gemm.fast_kernel(BY_NP[np.dtype("float32")], CUDA_C)
