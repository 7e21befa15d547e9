"""Property-based checks (hypothesis) where random inputs pay: broadcasting of arbitrary
shape pairs and arbitrary basic-indexing keys, against NumPy on every device.
Derandomized so that CI runs are repeatable."""
import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import omnitensor as ot  # noqa: E402
from omnitensor.testing import assert_close  # noqa: E402

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True, database=None)


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4),
       op=st.sampled_from(["add", "multiply", "maximum", "greater", "subtract"]),
       data=st.data())
def test_broadcasting_binary_ops(device, shapes, op, data):
    a = data.draw(hnp.arrays(np.float32, shapes.input_shapes[0],
                             elements=st.floats(-10, 10, width=32)))
    b = data.draw(hnp.arrays(np.float32, shapes.input_shapes[1],
                             elements=st.floats(-10, 10, width=32)))
    got = getattr(ot, op)(ot.tensor(a, device=device), ot.tensor(b, device=device))
    assert got.shape == shapes.result_shape
    assert_close(got, getattr(np, op)(a, b))


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=5), data=st.data())
def test_basic_indexing_keys(device, shape, data):
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    key = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    t = ot.tensor(a, device=device)
    assert_close(t[key], a[key])
    # assignment through the same key reaches the base like NumPy's
    ref = a.copy()
    ref[key] = -1
    t[key] = -1
    assert_close(t, ref)


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=5), data=st.data())
def test_reductions_over_random_axes(device, shape, data):
    a = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(-4, 4, width=32)))
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    keep = data.draw(st.booleans())
    t = ot.tensor(a, device=device)
    assert_close(ot.sum(t, axis=axes, keepdims=keep),
                 np.sum(a, axis=axes, keepdims=keep, dtype=np.float64).astype(np.float32),
                 rtol=1e-5, atol=1e-5)
    assert_close(ot.max(t, axis=axes, keepdims=keep), np.max(a, axis=axes, keepdims=keep))
