"""Dialects are classes that differ only by what they override: a generator never asks a
dialect its name, so a renamed dialect renders every program byte for byte as its parent,
and SYCL (its own class) renders OpenCL C's text exactly."""
from __future__ import annotations

import numpy as np
import pytest

from omnitensor.kernels import fused, scalar
from omnitensor.kernels.dialect import CUDA_C, OPENCL_C, SYCL, CudaC, OpenCLC
from omnitensor.kernels.fused_spec import KernelSpec, Load, Op, Reduce, Store
from omnitensor.kernels.numba_dialect import NumbaPython

from test_cuda_rendering import _programs


class _RenamedOpenCL(OpenCLC):
    name = "cuda"  # a name branch anywhere would now render CUDA tokens


class _RenamedCuda(CudaC):
    name = "opencl"


class _RenamedNumba(NumbaPython):
    name = "opencl"


def _specs() -> list[KernelSpec]:
    """An elementwise chain with a float16 load and a cast, and a reduce with a prologue and
    an epilogue (sum in double, then a bfloat16 store)."""
    def op(name, dtype, in_dtype, operands, phase="p"):
        return Op(phase=phase, op=name, operands=operands, dtype=dtype, in_dtype=in_dtype)
    ew = KernelSpec(
        shape=(4, 6), reduced=(False, False), nargs=3,
        loads=[Load(0, "float16", "p", (6, 1)), Load(1, "float32", "p", (0, 1))],
        steps=[op("multiply", "float32", "float32", (("l", 0), ("l", 1))),
               op("exp", "float32", "float32", (("t", 0),)),
               op("astype", "float64", "float32", (("t", 1),))],
        stores=[Store(ref=("t", 2), arg=2, dtype="float64", phase="p")])
    red = KernelSpec(
        shape=(3, 5), reduced=(False, True), nargs=3,
        loads=[Load(0, "float32", "p", (5, 1)), Load(1, "float32", "e", ())],
        steps=[op("abs", "float32", "float32", (("l", 0),)),
               Reduce(op="sum", operand=("t", 0), dtype="float32"),
               op("add", "float32", "float32", (("t", 1), ("l", 1)), "e")],
        stores=[Store(ref=("t", 2), arg=2, dtype="bfloat16", phase="e")])
    return [ew, red]


@pytest.mark.parametrize("parent, renamed", [(OPENCL_C, _RenamedOpenCL()),
                                             (CUDA_C, _RenamedCuda())])
def test_a_renamed_dialect_renders_every_program_as_its_parent(parent, renamed):
    assert _programs(renamed) == _programs(parent)
    assert fused.c_program(_specs(), renamed) == fused.c_program(_specs(), parent)


def test_sycl_renders_opencl_c_exactly():
    assert type(SYCL) is not type(OPENCL_C) and SYCL.name == "sycl"
    assert _programs(SYCL) == _programs(OPENCL_C)
    assert fused.c_program(_specs(), SYCL) == fused.c_program(_specs(), OPENCL_C)


def test_the_numba_dialect_answers_the_per_element_api_by_class():
    renamed = _RenamedNumba()
    for op in scalar.UNARY_OPS + scalar.BINARY_OPS:
        xs = ("x",) if op in scalar.UNARY_OPS else ("x", "y")
        for dt in ("float32", "int64", "bool"):
            assert scalar.expr(op, dt, xs, renamed) == scalar.expr(op, dt, xs, scalar.NUMBA)
    assert scalar.literal(np.inf, "float64", renamed) == "np.float64(np.inf)"
    assert scalar.where("c", "a", "b", renamed) == "((a) if (c) else (b))"
    assert scalar.load("float32", "p", "i", renamed) == "p[i]"


def test_the_fused_c_kernels_use_the_dialects_tokens():
    ocl, cuda = fused.c_program(_specs(), OPENCL_C), fused.c_program(_specs(), CUDA_C)
    assert "__kernel void fused0(__global const half * restrict a0" in ocl
    assert "(long)get_global_id(0)" in ocl and "vload_half(" in ocl and "as_uint(" in ocl
    assert 'extern "C" __global__ void fused0(const ushort * __restrict__ a0' in cuda
    assert "(long)(blockIdx.x * blockDim.x + threadIdx.x)" in cuda
    assert "ot_h2f(" in cuda and "__float_as_uint(" in cuda
