"""UNTESTED glue: omnitensor's generated kernels (``omnitensor.kernels``, CUDA C dialect) built
with CuPy's ``RawModule`` (NVRTC) and launched on CuPy arrays.

Status, said plainly: written without a GPU, CuPy or nvcc. What *is* checked here: every
program renders in the CUDA C dialect with the same kernels as OpenCL C, contains no
OpenCL-only token, and type-checks as C++ against a host declaration of the CUDA API
(``tests/kernels/test_cuda_rendering.py``). What a GPU session must check:
``tests/kernels/test_cuda_rendering.py::test_cuda_programs_compile_with_cupy`` (NVRTC builds
every program) and :func:`self_test` (a few launches against NumPy). The CuPy backend does
not route any op through this module yet; it keeps CuPy's own kernels.

Launch conventions (the same as the OpenCL backend's, see ``kernels/elementwise.py``):
arguments ``o, p0.., L, P``; ``P`` is a by-value struct packed by
``kernels.elementwise.pack_params``, passed to CuPy as a NumPy ``void`` scalar of its bytes
(CuPy copies the bytes of a NumPy scalar argument as they are); one element per thread
(``chunk = 1``), blocks of 256.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...kernels.ctype import BY_NP, CType
from ...kernels.dialect import CUDA_C
from ...kernels.elementwise import kernel_type, op_kernel_source, out_type, pack_params
from ...kernels.helpers import helpers

_BLOCK = 256


class CudaKernels:
    """Per-process cache of generated programs (one ``RawModule`` per op and dtype)."""

    def __init__(self) -> None:
        import cupy
        self.cupy = cupy
        self.modules: dict[tuple[str, str], Any] = {}
        self.functions: dict[tuple[str, str, str], Any] = {}

    def function(self, op: str, t: CType, variant: str = "") -> Any:
        """The kernel ``ew_<op>_<key><variant>`` compiled by NVRTC on first use."""
        key = (op, t.key, variant)
        fn = self.functions.get(key)
        if fn is None:
            mod = self.modules.get((op, t.key))
            if mod is None:
                src = op_kernel_source(op, t, CUDA_C)
                if src is None:
                    raise KeyError(f"{op} is not computed for {t.np}")
                mod = self.cupy.RawModule(code=CUDA_C.prelude + helpers(t, CUDA_C) + src,
                                          options=CUDA_C.compile_options)
                self.modules[(op, t.key)] = mod
            fn = self.functions[key] = mod.get_function(f"ew_{op}_{t.key}{variant}")
        return fn

    def elementwise(self, op: str, *operands: Any) -> Any:
        """``op(operands)``: C-contiguous CuPy arrays of one dtype and shape, or Python
        scalars (at least one array); a new array of the result dtype."""
        cupy = self.cupy
        ref = next(x for x in operands if isinstance(x, cupy.ndarray))
        t = BY_NP[ref.dtype]
        out = cupy.empty(ref.shape, dtype=out_type(op, t).np)
        n = ref.size
        if n == 0:
            return out
        mode, ptrs, scal = 0, [], []
        for i, x in enumerate(operands):
            if isinstance(x, cupy.ndarray):
                if not x.flags.c_contiguous or x.dtype != ref.dtype or x.shape != ref.shape:
                    raise ValueError("cuda.kernels.elementwise takes contiguous arrays of one "
                                     "dtype and shape")
                ptrs.append(x)
                scal.append(t.zero)
            else:
                mode |= 1 << i
                ptrs.append(out)  # never dereferenced: the scalar is hoisted
                scal.append(t.pack(x))
        params = pack_params(0, [0] * len(operands), n, 1, mode, scal)
        struct = np.frombuffer(params, dtype=np.dtype((np.void, len(params))))[0]
        fn = self.function(op, kernel_type(op, t), "" if mode == 0 else f"_m{mode}")
        fn((-(-n // _BLOCK),), (_BLOCK,), (out, *ptrs, ptrs[0], struct))
        return out


def self_test() -> None:
    """A few launches compared with NumPy (run by hand on a GPU machine)."""
    import cupy
    k = CudaKernels()
    x = np.linspace(-3, 3, 1000, dtype=np.float32)
    y = np.linspace(1, 2, 1000, dtype=np.float32)
    a, b = cupy.asarray(x), cupy.asarray(y)
    np.testing.assert_array_equal(cupy.asnumpy(k.elementwise("add", a, b)), x + y)
    np.testing.assert_array_equal(cupy.asnumpy(k.elementwise("multiply", a, 2.0)), x * 2)
    np.testing.assert_array_equal(cupy.asnumpy(k.elementwise("floor_divide", a, b)),
                                  np.floor_divide(x, y))
    np.testing.assert_allclose(cupy.asnumpy(k.elementwise("exp", a)), np.exp(x), rtol=2e-7)
    h = x.astype(np.float16)
    np.testing.assert_array_equal(cupy.asnumpy(k.elementwise("add", cupy.asarray(h),
                                                             cupy.asarray(h))), h + h)
