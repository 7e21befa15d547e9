"""The OpenCL backend's program/kernel caches: one ``cl.Kernel`` per kernel and device,
and a cold start that builds only what it uses (``POCL_KERNEL_CACHE=0``)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("pyopencl", reason="pyopencl is not installed: pip install 'omnitensor[opencl]'")

from omnitensor.backends import registry

CL, WHY = registry.try_backend("opencl")
if CL is None:
    pytest.skip(f"no OpenCL device: {WHY}", allow_module_level=True)


def test_kernels_are_built_once_and_reused():
    x = CL.from_numpy(np.arange(5, dtype=np.float32), 0)
    st = CL.state(0)
    CL.add(x, x)
    n_kernels, n_programs = len(st.kernels), len(st.programs)
    for _ in range(3):
        CL.add(x, x)
        CL.multiply(x, 2.0)
    CL.multiply(x, 2.0)
    # multiply shares the add's program (same family and dtype): no new program
    assert len(st.programs) == n_programs
    assert len(st.kernels) <= n_kernels + 2


_CHILD = """
import numpy as np, omnitensor as ot
x = ot.tensor(np.arange(6, dtype=np.float32), device="opencl:0")
print((x * 2 + 1).tolist())
"""


def test_cold_start_without_pocls_kernel_cache(tmp_path):
    """With PoCL's kcache off, a first op only builds what it needs: nothing asks PoCL for
    program binaries (which compiles every kernel of a program: 26 s once)."""
    if "Portable Computing Language" not in CL.device_info(0)["platform"]:
        pytest.skip("exercised with PoCL, whose own cache can be switched off")
    env = dict(os.environ, POCL_KERNEL_CACHE="0", XDG_CACHE_HOME=str(tmp_path),
               OMNITENSOR_TEST_DEVICES="opencl:0")
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1.0, 3.0, 5.0, 7.0, 9.0, 11.0]"
    # no binaries were asked for and written anywhere under the cache directory (the
    # cost is structural: speed itself is measured by benchmarks, not asserted here)
    assert not [f for _, _, fs in os.walk(tmp_path) for f in fs if f.endswith(".bin")]
