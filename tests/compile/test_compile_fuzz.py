"""Differential fuzzer: random programs (``compile_fuzz_programs.py``: views, in-place ops,
broadcasts, casts, reductions, graph breaks, a captured state written in place;
``compile_fuzz_training.py``: indexed writes, indices from the data, a parameter and its
optimizer step, linear/conv1d, promotion, breaks on values that change between calls)
compiled versus eager on the same device, over several calls: the capture, replays, other
shapes, strided and offset inputs, inputs of another dtype or on the host, inputs that
alias each other or the state, and calls from several threads. Results, the values
``log`` received, every input's memory, the state and the parameter must equal eager's
after each call (integers and bools exactly, floats within 1e-4
relative: float32 rounding where a value went through ``tanh``/``exp``/``mean``/``softmax``);
where eager raises, the compiled call raises the same type.

CI runs a bounded slice per device (``OMNITENSOR_COMPILE_FUZZ`` programs, default 40 on cpu,
10 on sycl and 15 elsewhere, about half a minute in all); ``-m slow`` runs 1,000
(``OMNITENSOR_COMPILE_FUZZ_SLOW``). A failure
prints the program's seed and source, and the call that diverged.
"""
from __future__ import annotations

import os
import random
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

import omnitensor as ot
from compile_fuzz_programs import (Call, Program, calls_for, generate,
                                   make_inputs)
from omnitensor import compiler

SEED = int(os.environ.get("OMNITENSOR_COMPILE_FUZZ_SEED", "0"))


def _ci_count(device: str) -> int:
    env = os.environ.get("OMNITENSOR_COMPILE_FUZZ")
    if env:
        return int(env)
    # sycl's calls cost most (its kernels per program): fewer there keeps the slice's time
    return {"cpu": 40, "sycl": 10}.get(device.split(":")[0], 15)


class Divergence(AssertionError):
    pass


def _outcome(fn: Any, xs: list) -> tuple[str, Any]:
    try:
        return "ok", fn(*xs)
    except Exception as e:  # compared with the other side's
        return "err", e


def _same_tensor(a: Any, b: Any, what: str) -> None:
    if not (isinstance(a, ot.Tensor) and isinstance(b, ot.Tensor)):
        if a != b:
            raise Divergence(f"{what}: {b!r} != eager {a!r}")
        return
    if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
        raise Divergence(f"{what}: {b.dtype}{tuple(b.shape)} != eager "
                         f"{a.dtype}{tuple(a.shape)}")
    x, y = np.asarray(a.cpu().tolist()), np.asarray(b.cpu().tolist())
    if a.dtype.is_floating_point:
        ok = np.allclose(y, x, rtol=1e-4, atol=1e-5, equal_nan=True)
    else:
        ok = np.array_equal(x, y)
    if not ok:
        raise Divergence(f"{what}: values differ\n  compiled {y.tolist()}\n  eager    "
                         f"{x.tolist()}")


def _compare(e: tuple, c: tuple, ctx_e: dict, ctx_c: dict) -> None:
    if e[0] != c[0]:
        raise Divergence(f"eager {e[0]} ({e[1]!r}) but compiled {c[0]} ({c[1]!r})")
    if e[0] == "err":
        if type(e[1]) is not type(c[1]):
            raise Divergence(f"eager raised {e[1]!r}, compiled {c[1]!r}")
    else:
        if len(e[1]) != len(c[1]):
            raise Divergence("a different number of results")
        for i, (a, b) in enumerate(zip(e[1], c[1])):
            _same_tensor(a, b, f"result {i}")
    for name in ctx_e:
        ve, vc = ctx_e[name], ctx_c[name]
        if isinstance(ve, list):
            if ve != vc:
                raise Divergence(f"{name}: compiled {vc} != eager {ve}")
        else:
            _same_tensor(ve, vc, name)


def _with_config(seed: int) -> dict:
    r = random.Random(seed)
    return {"segments": r.choice((None, True, True)),
            "fuse_in_background": r.random() < 0.25,
            "fuse": None if r.random() < 0.85 else False}


def run_program(seed: int, device: str, threads: bool = True) -> None:
    """Raise :class:`Divergence` (with the program and the call) where compiled and eager
    differ."""
    prog = generate(seed)
    cfg = _with_config(seed)
    old = {k: getattr(compiler.config, k) for k in cfg}
    for k, v in cfg.items():
        setattr(compiler.config, k, v)
    try:
        _run(prog, seed, device, threads)
    except Divergence as d:
        raise Divergence(f"compile fuzz program {seed} on {device} (config {cfg}):\n"
                         f"{prog.source}\n{d}") from None
    finally:
        for k, v in old.items():
            setattr(compiler.config, k, v)


def _run(prog: Program, seed: int, device: str, threads: bool) -> None:
    make = prog.factory()
    side: dict[str, dict] = {}
    for s in ("eager", "compiled"):
        state = ot.zeros(prog.state_shape, dtype=ot.float64, device=device)
        log: list = []
        fn = make(state, log)
        side[s] = {"fn": ot.compile(fn) if s == "compiled" else fn, "state": state,
                   "log": log, "plain": fn}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        done = []
        for call in calls_for(prog, seed):
            done.append((call, _one_call(prog, call, device, side)))
        # every earlier result still holds its values (a later call must not reuse its
        # memory: a fused kernel's kept output buffer once overwrote the previous result)
        for call, got in done:
            try:
                _compare(got["eager"], got["compiled"], {}, {})
            except Divergence as dv:
                raise Divergence(f"call {call}, after the later calls: {dv}") from None
        if threads and not prog.writes_state:
            _threaded(prog, seed, device, side)


def _one_call(prog: Program, call: Call, device: str, side: dict) -> dict:
    got = {}
    ctx = {}
    for s in ("eager", "compiled"):
        d = side[s]
        xs, holders = make_inputs(prog, call, device, d["state"])
        n_log = len(d["log"])
        got[s] = _outcome(d["fn"], xs)
        ctx[s] = {f"input {i} memory": h for i, h in enumerate(holders)}
        ctx[s]["state"] = d["state"]
        if prog.has_param:
            ctx[s]["param"] = d["plain"].param.detach()
        ctx[s]["log"] = d["log"][n_log:]
    try:
        _compare(got["eager"], got["compiled"], ctx["eager"], ctx["compiled"])
    except Divergence as dv:
        raise Divergence(f"call {call}: {dv}") from None
    return got


def _threaded(prog: Program, seed: int, device: str, side: dict) -> None:
    """Three threads calling the same compiled function (and eager) at once."""
    errors: list = []
    r = random.Random(seed + 7)
    plans = [[Call(r.randrange(2), ("c",) * prog.n_inputs, "none", seed * 1000 + t * 10 + k)
              for k in range(3)] for t in range(3)]

    def work(calls: list) -> None:
        try:
            for call in calls:
                outs = []
                for s in ("eager", "compiled"):
                    xs, holders = make_inputs(prog, call, device, side[s]["state"])
                    res = _outcome(side[s]["fn"] if s == "compiled" else side[s]["plain"], xs)
                    outs.append((res, {f"input {i} memory": h
                                       for i, h in enumerate(holders)}))
                _compare(outs[0][0], outs[1][0], outs[0][1], outs[1][1])
        except Exception as e:  # reported by the main thread
            errors.append(e)
    ts = [threading.Thread(target=work, args=(p,), daemon=True) for p in plans]
    for t in ts:
        t.start()
    for t in ts:
        t.join(300)
        if t.is_alive():
            raise Divergence("a compiled call from several threads did not return in 300 s")
    if errors:
        raise Divergence(f"from 3 threads: {errors[0]}")


def _fuzz(device: str, seeds: range) -> None:
    failures = []
    for seed in seeds:
        try:
            run_program(seed, device)
        except Divergence as d:
            failures.append(str(d))
            if len(failures) >= 3:
                break
        finally:
            compiler.reset()
    assert not failures, f"{len(failures)} programs diverged:\n\n" + "\n\n".join(failures)


def test_compile_fuzz_slice(device):
    _fuzz(str(device), range(SEED, SEED + _ci_count(str(device))))


@pytest.mark.slow
def test_compile_fuzz_thousand(device, request):
    # (tests/conftest.py skips slow tests only under fuzz/ and soak/: this one hours long)
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("slow: run with -m slow")
    n = int(os.environ.get("OMNITENSOR_COMPILE_FUZZ_SLOW", "1000"))
    _fuzz(str(device), range(SEED + 10_000, SEED + 10_000 + n))


def test_generated_programs_are_valid_and_varied():
    # the generator itself: programs run eagerly for every shape variant, and the slice
    # covers what the fuzzer is for
    seen = {"break": 0, "inplace": 0, "state": 0, "view": 0, "cast": 0, "index": 0,
            "param": 0, "linalg": 0}
    raised = 0
    for seed in range(40):
        p = generate(seed)
        src = p.source
        seen["break"] += p.breaks
        seen["inplace"] += "_(" in src
        seen["state"] += p.writes_state
        seen["view"] += any(v in src for v in ("[", ".t()", ".view(", ".permute("))
        seen["cast"] += ".to(ot." in src
        seen["index"] += any(k in src for k in ("index_", "scatter", "[ot.tensor", "gather"))
        seen["param"] += p.has_param
        seen["linalg"] += any(k in src for k in ("linear(", "conv1d(", "matmul(", "bmm("))
        make = p.factory()
        for k in range(2):
            call = Call(k, ("c",) * p.n_inputs, "none", seed)
            state = ot.zeros(p.state_shape, dtype=ot.float64)
            xs, _ = make_inputs(p, call, "cpu", state)
            try:
                make(state, [])(*xs)
            except Exception:  # data-dependent shapes may not fit
                raised += 1
    assert all(v >= 5 for v in seen.values()), seen
    assert raised <= 8, f"{raised} of 80 calls raised"
