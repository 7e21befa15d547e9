"""A primitive the array library lacks runs from its table row's Python template
(``namespace_backend.table_formula``): the template, run over whole arrays, equals NumPy's
own function for every row that has one, and a row NumPy has no function for gets a
working primitive with ``out=``, so a new primitive needs no binding in each adapter."""
import numpy as np
import pytest

from omnitensor.backends import registry
from omnitensor.backends.base import BINARY, UNARY
from omnitensor.backends.namespace_backend import lookup, table_formula
from omnitensor.kernels.primitives import NO_ONNX, PRIMITIVES, Primitive

NP = registry.get_backend("cpu")
_DTYPES = {"b": [np.bool_], "i": [np.int32, np.int64], "u": [np.uint8], "f": [np.float32,
                                                                              np.float64]}
_ARRAY_ROWS = [p for p in PRIMITIVES if p.name in UNARY + BINARY
               and table_formula(np, p) is not None and lookup(np, p.name) is not None]


def _operand(dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, (4, 5)).astype(dtype)
    if np.dtype(dtype).kind in "iu":  # small and >= 0: powers and shifts stay defined
        return rng.integers(0, 5, (4, 5)).astype(dtype)
    a = rng.uniform(-3, 3, (4, 5)).astype(dtype)
    a[0, :3] = [0.0, -0.0, np.inf]
    return a


def test_most_rows_run_from_their_template():
    assert len(_ARRAY_ROWS) > 50
    # the rows left out are written for one element (math.erf, `and`), not for arrays
    assert {p.name for p in PRIMITIVES if table_formula(np, p) is None} == {
        "erf", "erfc", "logical_and", "logical_or"}


@pytest.mark.parametrize("row", _ARRAY_ROWS, ids=lambda p: p.name)
def test_the_template_equals_numpys_function(row):
    for kind in set(row.numba_kinds) & set(row.kinds):
        for dtype in _DTYPES[kind]:
            operands = [_operand(dtype, seed) for seed in range(row.arity)]
            with np.errstate(all="ignore"):
                try:
                    want = getattr(NP, row.name)(*operands)
                except TypeError:  # NumPy refuses the dtype (bool subtract): no reference
                    continue
                got = table_formula(np, row)(*operands)
            # the row's result dtype, as the kernels' (NumPy widens bool conj/square to int8)
            assert got.dtype == (bool if row.out == "bool" else dtype), (row.name, dtype)
            assert got.shape == want.shape, (row.name, dtype)
            np.testing.assert_array_equal(got, want.astype(got.dtype),
                                          err_msg=f"{row.name} {dtype}")
            assert not any(np.shares_memory(got, o) for o in operands), row.name


def test_a_row_numpy_has_no_function_for():
    cube = Primitive("cube", 1, "math", c={"f": "x * x * x"}, numba="x * x * x",
                     onnx=NO_ONNX)
    assert lookup(np, "cube") is None
    fn = table_formula(np, cube)
    x = np.float32([-2.0, -0.5, 0.0, 1.5, np.inf])
    np.testing.assert_array_equal(fn(x), x.astype(np.float64) ** 3)
    out = np.empty_like(x)
    assert fn(x, out=out) is out
    np.testing.assert_array_equal(out, x ** 3)
    assert fn(np.float64(3.0)).shape == () and fn(np.float64(3.0)) == 27.0
    zero = Primitive("zero", 1, "math", c={"f": "0"}, numba="{T}(0)", onnx=NO_ONNX)
    got = table_formula(np, zero)(x)  # a constant template: the operand's shape and dtype
    assert got.shape == x.shape and got.dtype == x.dtype and not got.any()


def test_a_row_dpnp_has_no_function_for_runs_on_dpnp():
    """sycl's dpnp adapter (``OMNITENSOR_SYCL_KERNELS=dpnp``) and CuPy's are namespace
    backends too: the same template runs on their arrays, on their device."""
    dpnp = pytest.importorskip("dpnp")
    cube = Primitive("cube", 1, "math", c={"f": "x * x * x"}, numba="x * x * x",
                     onnx=NO_ONNX)
    x = dpnp.asarray(np.float32([-2.0, 0.5, 3.0]))
    got = table_formula(dpnp, cube)(x)
    assert isinstance(got, dpnp.ndarray) and got.sycl_queue == x.sycl_queue
    np.testing.assert_array_equal(dpnp.asnumpy(got), np.float32([-8.0, 0.125, 27.0]))
