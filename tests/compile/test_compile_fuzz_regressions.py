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
