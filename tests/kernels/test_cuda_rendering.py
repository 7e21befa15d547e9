"""The CUDA C rendering of every generated kernel: no OpenCL-only token, every kernel present,
and (where g++ exists) well-formed C++: type-checked by ``g++ -fsyntax-only`` against a
small host declaration of the CUDA device API (no GPU or nvcc here). Compiling through
CuPy's RawModule runs only where CuPy and a GPU exist."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from omnitensor.kernels import (argreduce, elementwise, gemm, indexing, random, reduce, scan,
                                sort)
from omnitensor.kernels.ctype import BY_NP
from omnitensor.kernels.dialect import CUDA_C, OPENCL_C, OPENCL_ONLY_PATTERNS


def _programs(d):
    """Every program the OpenCL backend builds, rendered in dialect ``d``: name -> source."""
    out = {}
    for t in BY_NP.values():
        for fam in ("arith", "compare", "int", "math"):
            out[f"fam_{fam}_{t.key}"] = elementwise.family_source(fam, t, d)
        out[f"cast_{t.key}"] = elementwise.cast_source(t, list(BY_NP.values()), d)
        for op in reduce.OPS:
            if not (t.kind == "c" and op in ("max", "min")):
                out[f"red_{op}_{t.key}"] = reduce.program(op, t, d)
        if t.kind != "c":
            for op in ("argmax", "argmin"):
                out[f"{op}_{t.key}"] = argreduce.source(op, t, d)
            out[f"sort_{t.key}"] = sort.source(t, d)
        out[f"scan_{t.key}"] = scan.source(t, d)
        out[f"gemm_{t.key}"] = gemm.generic_source(t, d)
    out["move"] = elementwise.move_source(d)
    for n in (1, 3):
        out[f"gather_{n}"] = indexing.source(n, BY_NP.values(), True, d)
    out["philox"] = random.philox_source(0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85, 10, d)
    out["arange"] = random.arange_source(BY_NP.values(), d)
    # families an integer or bool dtype has no op of are empty programs: never built
    return {k: v for k, v in out.items() if "void " in v.replace(d.prelude, "")}


CUDA = _programs(CUDA_C)
OPENCL = _programs(OPENCL_C)


def _kernel_names(src: str, qualifier: str) -> list[str]:
    return re.findall(re.escape(qualifier) + r" void (\w+)\(", src)


def test_every_program_renders_for_cuda_with_the_same_kernels():
    assert CUDA.keys() == OPENCL.keys()
    for name, src in CUDA.items():
        assert _kernel_names(src, CUDA_C.kernel) == _kernel_names(OPENCL[name], "__kernel"), name
        assert _kernel_names(src, CUDA_C.kernel), name
    assert len(CUDA) > 150


@pytest.mark.parametrize("pattern", OPENCL_ONLY_PATTERNS)
def test_cuda_source_has_no_opencl_only_token(pattern):
    hits = [name for name, src in CUDA.items() if re.search(pattern, src)]
    assert not hits, f"{pattern!r} in the CUDA rendering of {hits[:5]}"


def test_opencl_source_has_no_cuda_token():
    for name, src in OPENCL.items():
        for tok in ("__device__", "__global__", "blockIdx", "atomicCAS", "make_float2",
                    "ot_h2f", "__restrict__"):
            assert tok not in src, (name, tok)


def test_vector_paths_are_opencl_only():
    t = BY_NP[__import__("numpy").dtype("float32")]
    with pytest.raises(ValueError, match="vector types"):
        gemm.fast_source(t, CUDA_C)
    assert "float8" in reduce.program("sum", t, OPENCL_C)
    assert "float8" not in reduce.program("sum", t, CUDA_C)


# a host-side declaration of the CUDA device API the generated code uses: enough for g++ to
# parse and type-check it (what NVRTC would reject for syntax or types, g++ rejects too)
_SHIM = r"""
#include <cmath>
#include <algorithm>
using namespace std;
#define __global__
#define __device__
#define __shared__
#define __restrict__ __restrict
struct ot_dim3 { unsigned x, y, z; };
extern ot_dim3 blockIdx, blockDim, threadIdx;
struct float2 { float x, y; };
struct double2 { double x, y; };
struct ulong2 { unsigned long x, y; };
inline float2 make_float2(float x, float y) { float2 r; r.x = x; r.y = y; return r; }
inline double2 make_double2(double x, double y) { double2 r; r.x = x; r.y = y; return r; }
int atomicAdd(int *, int);
unsigned int atomicAdd(unsigned int *, unsigned int);
unsigned long long atomicAdd(unsigned long long *, unsigned long long);
unsigned int atomicCAS(unsigned int *, unsigned int, unsigned int);
unsigned long long atomicCAS(unsigned long long *, unsigned long long, unsigned long long);
unsigned int __umulhi(unsigned int, unsigned int);
float __int_as_float(int);
float __uint_as_float(unsigned int);
unsigned int __float_as_uint(float);
void __syncthreads();
float rsqrt(float);
double rsqrt(double);
struct __half { unsigned short b; };
float __half2float(__half);
__half __ushort_as_half(unsigned short);
unsigned short __half_as_ushort(__half);
__half __float2half_rn(float);
"""


def _unit(progs: dict) -> str:
    """One translation unit: the prelude once, each program's body in its own namespace
    (helper functions repeat across programs)."""
    prelude = CUDA_C.prelude
    parts = [prelude]
    for i, src in enumerate(progs.values()):
        assert src.count(prelude) <= 1  # philox needs no prelude in OpenCL C
        parts.append(f"namespace p{i} {{\n{src.replace(prelude, '')}\n}}\n")
    return "\n".join(parts)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ for the C++ syntax check")
def test_cuda_rendering_is_well_formed_cpp(tmp_path):
    (tmp_path / "cuda_fp16.h").write_text("")
    (tmp_path / "shim.h").write_text(_SHIM)
    src = tmp_path / "kernels.cu.cpp"
    src.write_text(_unit(CUDA))
    r = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-w", "-I", str(tmp_path),
                        "-include", str(tmp_path / "shim.h"), str(src)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[:4000]


def test_cuda_programs_compile_with_cupy():
    cupy = pytest.importorskip("cupy", reason="cupy is not installed: the CUDA rendering "
                                              "is only checked as C++ here")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        pytest.skip(f"no CUDA device: {e}")
    for src in CUDA.values():
        mod = cupy.RawModule(code=src, options=CUDA_C.compile_options)
        for k in _kernel_names(src, CUDA_C.kernel):
            mod.get_function(k)
