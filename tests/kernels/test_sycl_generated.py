"""Generated OpenCL C kernels launched through dpctl on sycl:0 (``backends/sycl/kernels.py``):
the same NumPy-exact kernels as the OpenCL backend, ordered with dpnp's own kernels."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot


@pytest.fixture(scope="module")
def launcher():
    if "sycl:0" not in [str(d) for d in ot.devices()]:
        pytest.skip("no sycl:0 device")
    from omnitensor.backends.registry import get_backend
    from omnitensor.backends.sycl import kernels as sk
    q = get_backend("sycl")._queues[0]
    if not sk.available(q):
        pytest.skip("sycl:0 cannot build OpenCL C (a Level Zero device keeps dpnp)")
    return sk.Launcher(q)


def test_binary_ops_match_numpy_exactly(launcher):
    import dpnp
    q = launcher.queue
    rng = np.random.default_rng(0)
    x = rng.standard_normal(20000).astype(np.float32) * 10
    y = rng.standard_normal(20000).astype(np.float32)
    y[:5] = [0.0, -0.0, np.inf, np.nan, 1.0]
    # uploaded right before the launch: the launch must wait for the copies (ordering)
    a, b = dpnp.asarray(x, sycl_queue=q), dpnp.asarray(y, sycl_queue=q)
    with np.errstate(all="ignore"):
        for op, ref in (("add", np.add), ("multiply", np.multiply), ("divide", np.divide),
                        ("floor_divide", np.floor_divide), ("remainder", np.remainder),
                        ("maximum", np.maximum), ("less", np.less)):
            got = dpnp.asnumpy(launcher.binary(op, a, b))
            np.testing.assert_array_equal(got, ref(x, y), err_msg=op)
        np.testing.assert_array_equal(dpnp.asnumpy(launcher.binary("add", a, 2.5)), x + np.float32(2.5))
        np.testing.assert_array_equal(dpnp.asnumpy(launcher.binary("subtract", 1.0, b)),
                                      np.float32(1.0) - y)


def test_integer_and_unary_ops(launcher):
    import dpnp
    q = launcher.queue
    x = np.array([7, -7, 0, 5, -(2**31), 2**31 - 1], np.int32)
    y = np.array([2, 2, 0, -3, -1, 0], np.int32)
    a, b = dpnp.asarray(x, sycl_queue=q), dpnp.asarray(y, sycl_queue=q)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(dpnp.asnumpy(launcher.binary("floor_divide", a, b)),
                                      np.floor_divide(x, y))
        np.testing.assert_array_equal(dpnp.asnumpy(launcher.binary("add", a, b)), x + y)
    f = np.linspace(-3, 3, 1001, dtype=np.float32)
    af = dpnp.asarray(f, sycl_queue=q)
    np.testing.assert_allclose(dpnp.asnumpy(launcher.unary("exp", af)), np.exp(f), rtol=3e-7)
    np.testing.assert_array_equal(dpnp.asnumpy(launcher.unary("negative", af)), -f)
    # a dpnp kernel after ours sees its result (ours is registered with dpnp's ordering)
    z = launcher.unary("negative", af)
    np.testing.assert_array_equal(dpnp.asnumpy(dpnp.add(z, af)), np.zeros_like(f))
