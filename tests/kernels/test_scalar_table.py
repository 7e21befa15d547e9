"""``omnitensor.kernels.scalar``: the elementwise op table as expressions over operand
names, for C dialects and for numba (compiled here and compared with the NumPy backend,
the reference every backend is held to)."""
from __future__ import annotations

import numpy as np
import pytest

from omnitensor.kernels import scalar
from omnitensor.kernels.dialect import CUDA_C, OPENCL_C


def test_c_expressions_substitute_operands_not_members():
    assert scalar.expr("add", np.float32, ("x0", "x1")) == "(x0) + (x1)"
    assert scalar.expr("conj", np.complex64, ("v",)) == "(float2)((v).x, -(v).y)"
    assert scalar.expr("conj", np.complex64, ("v",), CUDA_C) == "make_float2((v).x, -(v).y)"
    assert scalar.expr("floor_divide", np.int32, ("p", "q")) == "fdiv_i32((p), (q))"
    assert "fdiv_i32" in scalar.helpers(np.int32)
    assert scalar.expr("nextafter", np.float16, ("a", "b")) is None  # needs half's own ulp
    assert scalar.expr("erf", np.int32, ("a",)) is None
    assert scalar.result_dtype("less", np.float32) == np.bool_
    assert scalar.result_dtype("abs", np.complex128) == np.float64
    with pytest.raises(ValueError, match="takes 2"):
        scalar.expr("add", np.float32, ("x",))
    with pytest.raises(KeyError):
        scalar.expr("matmul", np.float32, ("a", "b"))


def test_loads_and_stores_follow_the_dialect():
    assert scalar.load(np.float16, "p", "i") == "vload_half(i, p)"
    assert scalar.load(np.float16, "p", "i", CUDA_C) == "ot_h2f(p[i])"
    assert scalar.store(np.float32, "o", "i", "y") == "o[i] = (float)(y);"
    assert scalar.storage_type(np.float16, CUDA_C) == "ushort"
    assert scalar.compute_type(np.float16, OPENCL_C) == "float"
    assert scalar.compute_type(np.float32, scalar.NUMBA) == "np.float32"


_VALUES = {
    "f": [0.0, -0.0, 1.5, -2.25, 3.0, 0.5, -0.75, 1e-3, 7.0, np.inf, -np.inf, np.nan, 0.9, -1.0],
    "i": [0, 1, -1, 7, -7, 3, -128 + 1, 100, 2, -3, 5, 0, 4, -2],
    "u": [0, 1, 2, 7, 255, 3, 128, 100, 2, 30, 5, 0, 4, 9],
    "b": [0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0],
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "bool"])
def test_numba_expressions_match_the_numpy_backend(dtype):
    numba = pytest.importorskip("numba")
    from omnitensor.backends.registry import get_backend
    ref = get_backend("cpu")
    dt = np.dtype(dtype)
    vals = np.array(_VALUES[dt.kind], dtype=np.float64)
    x = vals.astype(dt)
    y = np.roll(vals, 3).astype(dt)
    if dt.kind == "i":  # shift counts, divisors: include zero and negatives
        y[0] = 0
    rows = []
    for op in scalar.UNARY_OPS + scalar.BINARY_OPS:
        operands = ("x",) if op in scalar.UNARY_OPS else ("x", "y")
        e = scalar.expr(op, dt, tuple(f"{v}[i]" for v in operands), scalar.NUMBA)
        if e is not None and getattr(ref, op, None) is not None:
            rows.append((op, operands, e))
    assert len(rows) > (40 if dt.kind == "f" else 12)
    outs = ", ".join(f"o{k}" for k in range(len(rows)))
    body = "\n".join(f"        o{k}[i] = {e}" for k, (_, _, e) in enumerate(rows))
    src = (scalar.prelude(scalar.NUMBA) + scalar.helpers(dt, scalar.NUMBA) + f"def kern(x, y, {outs}):\n"
           f"    for i in range(x.shape[0]):\n{body}\n")
    ns: dict = {}
    exec(compile(src, "<numba kernels>", "exec"), ns)
    kern = numba.njit(error_model="numpy")(ns["kern"])
    res = [np.empty(x.shape, scalar.result_dtype(op, dt)) for op, _, _ in rows]
    with np.errstate(all="ignore"):
        kern(x, y, *res)
        for (op, operands, _), got in zip(rows, res):
            try:
                want = np.asarray(getattr(ref, op)(*([x] if operands == ("x",) else [x, y])))
            except TypeError:  # NumPy has no loop (bool positive): core never asks
                continue
            if want.dtype != got.dtype:  # round(int) -> float64, bool math -> int8: core decides
                assert dt.kind == "b" or op in ("floor", "ceil", "trunc", "round"), op
                want = want.astype(got.dtype)
            if op in ("erf", "erfc", "expm1", "log1p", "tan", "sinh", "cosh", "tanh",
                      "asinh", "acosh", "atanh", "pow", "sigmoid", "exp", "log", "sin",
                      "cos", "asin", "acos", "atan", "atan2", "hypot", "logaddexp",
                      "log2", "log10", "rsqrt"):
                np.testing.assert_allclose(got, want, rtol=2e-7 if dt == np.float64 else 1e-6,
                                           err_msg=op)
            else:
                np.testing.assert_array_equal(got, want, err_msg=op)


def test_casts_where_and_literals():
    assert scalar.cast(np.float32, np.bool_, "v") == "((v) != 0)"
    assert scalar.cast(np.int32, np.float64, "v") == "(double)(v)"
    assert scalar.cast(np.complex64, np.float32, "v") == "(float)(v).x"
    assert scalar.cast(np.float32, np.float64, "v", scalar.NUMBA) == "np.float64(v)"
    assert scalar.cast(np.float16, np.float32, "v", scalar.NUMBA) is None
    assert scalar.where("c", "a", "b") == "((c) ? (a) : (b))"
    assert scalar.where("c", "a", "b", scalar.NUMBA) == "((a) if (c) else (b))"
    assert scalar.literal(0.1, np.float32) == f"{float(np.float32(0.1))!r}f"
    assert scalar.literal(0.1, np.float64) == "((double)0.1)"
    assert scalar.literal(-np.inf, np.float32) == "(-INFINITY)"
    assert scalar.literal(True, np.bool_, scalar.NUMBA) == "True"
    assert scalar.literal(3, np.uint8, CUDA_C) == "((uchar)3)"


def test_numba_casts_and_literals_match_numpy():
    numba = pytest.importorskip("numba")
    src = {"f32": scalar.literal(0.1, np.float32, scalar.NUMBA),
           "nan": scalar.literal(np.nan, np.float64, scalar.NUMBA),
           "b": scalar.cast(np.float32, np.bool_, "x", scalar.NUMBA),
           "w": scalar.where("x > 0", "x", scalar.literal(-1, np.float32, scalar.NUMBA),
                             scalar.NUMBA)}
    ns: dict = {"np": np}
    exec("def f(x):\n    return " + ", ".join(src.values()), ns)
    got = numba.njit(ns["f"])(np.float32(-2.0))
    assert got[0] == np.float32(0.1) and np.isnan(got[1]) and bool(got[2])
    assert got[3] == np.float32(-1)
