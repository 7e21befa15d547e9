"""Minimal programs the compile fuzzer (``test_compile_fuzz.py``) found diverging, each
compiled and called as the fuzzer did (the capture, a replay, then the call that
diverged) and compared with the same calls run eagerly on the same device."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import omnitensor as ot


def _outcome(fn: Callable[..., Any], args: list) -> tuple:
    try:
        out = fn(*args)
    except Exception as e:  # compared with the other side's
        return type(e), [a.cpu().tolist() for a in args]
    outs = out if isinstance(out, tuple) else (out,)
    return [o.cpu().tolist() for o in outs], [a.cpu().tolist() for a in args]


def _same_as_eager(fn: Callable[..., Any], calls: list[Callable[[], list]]) -> None:
    """Each call's result (or exception type) and the inputs' memory after it, compiled
    versus eager (floats within float32 rounding); ``calls`` make fresh inputs."""
    cf = ot.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, make in enumerate(calls):
            (e, e_in), (c, c_in) = _outcome(fn, make()), _outcome(cf, make())
            same = c == e if isinstance(e, type) or isinstance(c, type) else \
                len(c) == len(e) and all(np.allclose(x, y, rtol=1e-5, equal_nan=True)
                                         for x, y in zip(c, e))
            assert same and c_in == e_in, \
                f"call {k}: compiled {c} (inputs {c_in}) != eager {e} (inputs {e_in})"


# ------------------------------------------------- an out-of-range index tensor from the data
# (before: a compiled replay raised RuntimeError on opencl/sycl (the check node's fixed
# type) and NumPy's bare IndexError on cpu where eager raises IndexOutOfRangeError, an
# IndexError; embedding and cross_entropy's IndexError came back as RuntimeError)

def _getitem(x, i):
    return x[i]


def _setitem(x, i):
    x[i] = 7.0
    return x * 2


def _index_add(x, i):
    x.index_add_(0, i, x[:2] * 2)
    return x.sum(0)


def _gather(x, i):
    return x.gather(1, i.reshape(2, 1)), x.index_select(1, i)


def _scatter(x, i):
    x.scatter_(1, i.reshape(2, 1), 5.0)
    return x + 1


def _embedding(x, i):
    return ot.nn.functional.embedding(i, x)


def _cross_entropy(x, i):
    return ot.nn.functional.cross_entropy(x, i)


@pytest.mark.parametrize("fn", [_getitem, _setitem, _index_add, _gather, _scatter,
                                _embedding, _cross_entropy], ids=lambda f: f.__name__[1:])
def test_out_of_range_index_raises_as_eager(device, fn):
    dev = str(device)

    def call(idx: list) -> Callable[[], list]:
        return lambda: [ot.tensor([[1., 2, 3], [4, 5, 6]], device=dev),
                        ot.tensor(idx, device=dev)]
    _same_as_eager(fn, [call([0, 1]), call([1, 0]), call([1, 5]), call([0, 1]),
                        call([-3, 0])])


# ------------------------------------------------- a failing validation in a segmented call
# (the fuzz, seed 10922 on opencl:0: a segmented replay let the program run past a failing
# index check (the segment's plan checked it at the next break), so backward and the
# optimizer step ran on unwritten arrays: the parameter read uninitialised memory, -5e-324
# where eager's 0.0 was, on the next call)

def _training_step(state: Any) -> Callable[..., Any]:
    param = (ot.arange(12, dtype=ot.float64, device=state.device) % 5 - 2).reshape(4, 3)
    param.requires_grad_()
    opt = ot.optim.SGD([param], lr=0.5, momentum=0.5)

    def step(x0, x2):
        v1 = state * float(x2.sum() > 0)          # a break: the call is segmented
        v1[x0.flatten()[:2] % 5]                   # a validation: out of range on call 1
        (param * state).sum().backward()
        opt.step()
        opt.zero_grad()
        with ot.no_grad():
            param.clamp_(-50, 50)
        return x2 * 2 if bool((v1 > -1).any()) else x2   # a break
    step.param = param  # type: ignore[attr-defined]
    return step


@pytest.mark.parametrize("segments", [True, None])
def test_a_failing_check_stops_a_segmented_call_where_eager_stops(device, segments):
    from omnitensor import compiler
    dev = str(device)
    old = compiler.config.segments
    compiler.config.segments = segments
    try:
        runs = []
        for compiled in (False, True):
            state = ot.zeros(4, 3, dtype=ot.float64, device=dev)
            step = _training_step(state)
            fn = ot.compile(step) if compiled else step
            outs = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for seed in (1092200, 1092201, 1092202, 1092201, 1092200):
                    x0, x2 = (ot.tensor(np.random.default_rng(seed + k).integers(-3, 4, (4, 3)),
                                        device=dev) for k in (0, 2))
                    o, _ = _outcome(fn, [x0, x2])
                    outs.append((o, step.param.detach().cpu().tolist(),
                                 state.cpu().tolist()))
            runs.append(outs)
        for k, (e, c) in enumerate(zip(*runs)):
            assert c == e, f"call {k}: compiled {c} != eager {e}"
    finally:
        compiler.config.segments = old
