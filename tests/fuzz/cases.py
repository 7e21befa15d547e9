"""Seeded, hypothesis-driven bad-input cases over the public API (see ``ops.py``).

A case is JSON: ``{"op": name, "args": [arg, ...], "seed": n}``; an argument is a plain
JSON value (ints, floats, strings, None, lists) or a tagged dict the worker builds on each
library: ``{"T": shape, "dt": dtype, "g": kind}`` a tensor (``g``: ``n`` normal, ``i`` small
ints including out-of-range indices, ``b`` bools, ``p`` probabilities), ``{"L": [...]}`` a
Python list of built arguments, ``{"TU": [...]}`` a tuple, ``{"S": [a, b, c]}`` a slice.
Shapes, dims and sizes are drawn mostly valid, often at the edges (0-d, size 0, -1,
out of range) and sometimes of the wrong type, so that both torch's successes and its
errors are exercised.
"""
from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ops import OPS

BAD = st.sampled_from([None, "a", 1.5, -1, 0, 10 ** 6, True, [1, 2]])
small = st.integers(-2, 5)
dim = st.one_of(st.integers(-4, 4), st.integers(-4, 4), st.integers(-4, 4), BAD)
shape = st.lists(st.integers(0, 4), max_size=3)
pos_shape = st.lists(st.integers(1, 4), min_size=1, max_size=3)
maybe = lambda s: st.one_of(s, s, s, BAD)  # mostly s, sometimes junk


def tensor(shapes=shape, dtypes=("float32",), gen="n"):
    return st.builds(lambda s, d: {"T": s, "dt": d, "g": gen}, shapes,
                     st.sampled_from(list(dtypes)))


ft = tensor(dtypes=("float32", "float32", "int64", "bool"))
f32 = tensor()
idx = tensor(dtypes=("int64",), gen="i")
bt = tensor(dtypes=("bool",), gen="b")
img4 = tensor(shapes=st.lists(st.integers(1, 6), min_size=4, max_size=4))
img3 = tensor(shapes=st.lists(st.integers(1, 6), min_size=3, max_size=3))
w4 = tensor(shapes=st.lists(st.integers(1, 3), min_size=4, max_size=4))
w3 = tensor(shapes=st.lists(st.integers(1, 3), min_size=3, max_size=3))
scalar = st.one_of(st.integers(-3, 3), st.floats(-3, 3, allow_nan=False), BAD)
key = st.one_of(st.integers(-5, 5), st.builds(lambda a, b, c: {"S": [a, b, c]},
                st.one_of(st.none(), small), st.one_of(st.none(), small),
                st.one_of(st.none(), st.integers(-1, 3))), idx, BAD)
pair = st.tuples(st.integers(-3, 3), st.integers(-3, 3)).map(list)
listof = lambda s: st.lists(s, max_size=3).map(lambda v: {"L": v})

ARGS: dict[str, list] = {
    "zeros": [maybe(shape)], "ones": [maybe(shape)], "empty": [maybe(shape)],
    "full": [maybe(shape), scalar], "eye": [st.integers(-2, 4), st.one_of(st.none(), small)],
    "arange": [scalar, scalar, scalar], "linspace": [scalar, scalar, st.integers(-2, 5)],
    "tensor_dtype": [st.lists(st.integers(-300, 300), max_size=3),
                     st.sampled_from(["uint8", "int8", "int16", "int32", "int64"])],
    "randn": [maybe(shape)], "randint": [small, small, maybe(shape)],
    "normal": [scalar, scalar, maybe(shape)],
    "add": [ft, st.one_of(ft, scalar)], "mul": [ft, st.one_of(ft, scalar)],
    "sub": [ft, st.one_of(ft, scalar)], "div": [ft, st.one_of(ft, scalar)],
    "floordiv": [ft, st.one_of(ft, scalar)], "pow": [ft, st.one_of(ft, scalar)],
    "maximum": [ft, ft], "where": [bt, ft, st.one_of(ft, scalar)],
    "clamp": [f32, st.one_of(st.none(), scalar), st.one_of(st.none(), scalar)],
    "exp": [ft], "log": [ft], "sqrt": [ft], "tanh": [ft], "sigmoid": [ft], "abs": [ft],
    "neg": [ft],
    "sum": [ft, st.one_of(dim, st.just([]), st.lists(st.integers(-3, 3), max_size=2)),
            st.booleans()],
    "mean": [f32, dim, st.booleans()], "amax": [f32, dim, st.booleans()],
    "argmax": [f32, dim, st.booleans()], "prod": [f32, dim], "std": [f32, dim],
    "cumsum": [ft, dim], "softmax": [f32, dim], "logsumexp": [f32, dim],
    "max_dim": [f32, dim], "topk": [f32, small, dim], "sort": [f32, dim], "max": [f32],
    "reshape": [ft, maybe(st.lists(st.integers(-1, 6), max_size=3))],
    "view": [ft, maybe(st.lists(st.integers(-1, 6), max_size=3))],
    "transpose": [ft, dim, dim], "permute": [ft, maybe(st.lists(st.integers(-3, 3),
                                                                 max_size=3))],
    "squeeze": [ft, dim], "unsqueeze": [ft, dim], "flatten": [ft, dim, dim],
    "expand": [ft, maybe(st.lists(st.integers(-1, 4), max_size=3))],
    "repeat": [ft, maybe(st.lists(st.integers(0, 3), max_size=3))],
    "flip": [ft, maybe(st.lists(st.integers(-3, 3), max_size=2))],
    "roll": [ft, small, dim], "narrow": [ft, dim, small, small], "chunk": [ft, small, dim],
    "split": [ft, small, dim], "cat": [listof(st.one_of(f32, f32, BAD)), dim],
    "stack": [listof(st.one_of(f32, f32, BAD)), dim], "size": [ft, dim], "t": [ft],
    "getitem": [ft, st.one_of(key, st.lists(key, max_size=2).map(lambda v: {"TU": v}))],
    "index_select": [f32, dim, idx], "gather": [f32, dim, idx],
    "scatter": [f32, dim, idx, f32], "scatter_add": [f32, dim, idx, f32],
    "masked_fill": [f32, bt, scalar],
    "linear": [f32, f32, st.one_of(st.none(), f32)],
    "conv1d": [img3, w3, maybe(st.integers(1, 3)), maybe(st.integers(0, 2)),
               maybe(st.integers(1, 2))],
    "conv2d": [img4, w4, maybe(st.integers(1, 3)), maybe(st.integers(0, 2)),
               maybe(st.integers(1, 2))],
    "max_pool2d": [img4, maybe(st.integers(1, 3)), maybe(st.integers(1, 3)),
                   maybe(st.integers(0, 1))],
    "avg_pool2d": [img4, maybe(st.integers(1, 3)), maybe(st.integers(1, 3)),
                   maybe(st.integers(0, 1))],
    "embedding": [idx, f32], "cross_entropy": [f32, st.one_of(idx, f32)],
    "nll_loss": [f32, st.one_of(idx, f32)], "mse_loss": [f32, f32],
    "one_hot": [idx, st.integers(-2, 6)], "dropout_eval": [f32, scalar],
    "dropout_train": [f32, scalar], "pad": [f32, maybe(st.lists(st.integers(-3, 2),
                                                                 max_size=4))],
    "layer_norm": [f32, maybe(st.lists(st.integers(0, 4), max_size=2))],
    "relu": [ft], "gelu": [f32],
}
assert set(ARGS) == set(OPS), set(ARGS) ^ set(OPS)

case_strategy = st.builds(
    lambda op, seed, data: {"op": op, "seed": seed, "args": data},
    st.sampled_from(sorted(OPS)), st.integers(0, 2 ** 31 - 1), st.just(None)).flatmap(
    lambda c: st.tuples(*ARGS[c["op"]]).map(lambda a: dict(c, args=list(a))))


def draw_cases(n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` cases, the same for the same ``seed`` (hypothesis derandomized by seed)."""
    out: list[dict[str, Any]] = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), phases=["generate"])
    @given(case_strategy)
    def collect(case: dict[str, Any]) -> None:
        out.append(case)
    collect._hypothesis_internal_use_seed = seed  # different seeds: different slices
    collect()
    return out[:n]
