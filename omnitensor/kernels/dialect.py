"""Dialects: how one C-like kernel description is spelled for each compiler.

The generators in this package write a kernel once, with every token that differs between
OpenCL C, CUDA C and their relatives taken from a :class:`Dialect`: address-space and
kernel/function qualifiers, the work-item and work-group index expressions, barriers and
local (shared) memory, type names (float16 travels as its 16 bits in a ``ushort`` where the
language has no usable ``half``), vector and complex literals, half loads and stores, math
function names, atomics, pragmas and the prelude every program starts with.

* :data:`OPENCL_C` -- OpenCL C 1.2 (PyOpenCL; the reference: the OpenCL backend's tests
  check its programs).
* :data:`SYCL` -- the same OpenCL C text, built by dpctl
  (``dpctl.program.create_program_from_source``) on SYCL devices whose backend is OpenCL.
  dpctl builds source only through OpenCL; a Level Zero device accepts SPIR-V alone, so it
  keeps dpnp's kernels.
* :data:`CUDA_C` -- CUDA C++ for NVRTC (CuPy's ``RawModule``). No vector types wider than 2
  (the PoCL-specific 8-wide paths are not rendered), float16 as ``ushort`` bits converted
  with ``cuda_fp16.h``'s intrinsics, contraction into FMA turned off by the compile option
  ``--fmad=false`` (CUDA has no per-region pragma).

A new C-like backend (HIP, Metal, Vulkan GLSL/OpenCL-style) is one more ``Dialect`` value
and a runtime that compiles and launches its programs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

_OPENCL_PRELUDE = """
// NumPy rounds a*b+c twice; contraction into fma would change results
#pragma OPENCL FP_CONTRACT OFF
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
"""

# OpenCL's scalar type names and the float2/double2 arithmetic OpenCL has built in; float16
# is its bits in a ushort, converted with cuda_fp16.h (round-to-nearest-even on store)
_CUDA_PRELUDE = """
// omnitensor kernels, CUDA C dialect (NVRTC; compile with --fmad=false: NumPy rounds a*b+c
// twice, an FMA would change results)
#include <cuda_fp16.h>
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
__device__ inline float ot_h2f(ushort b) { return __half2float(__ushort_as_half(b)); }
__device__ inline ushort ot_f2h(float v) { return __half_as_ushort(__float2half_rn(v)); }
#define OT_CPLX(C, R) \\
__device__ inline C operator+(C a, C b) { C r; r.x = a.x + b.x; r.y = a.y + b.y; return r; } \\
__device__ inline C operator-(C a, C b) { C r; r.x = a.x - b.x; r.y = a.y - b.y; return r; } \\
__device__ inline C operator-(C a) { C r; r.x = -a.x; r.y = -a.y; return r; } \\
__device__ inline C operator*(R s, C a) { C r; r.x = s * a.x; r.y = s * a.y; return r; }
OT_CPLX(float2, float)
OT_CPLX(double2, double)
"""


@dataclass(frozen=True, eq=False)  # hashed by identity: one value per dialect
class Dialect:
    """The spelling of every token a generated kernel uses that differs between languages.

    Strings are inserted verbatim; methods build small expressions. ``vectors`` says whether
    the language has OpenCL's 8-wide vector types, their literals and lane swizzles (the
    PoCL-tuned vector paths of reductions and GEMM need them)."""

    name: str
    kernel: str                     # qualifier(s) before ``void`` of a kernel
    func: str                       # qualifier(s) of a helper function
    glob: str                       # address space of a buffer pointer ("" when implicit)
    local: str                      # address space of work-group (shared) memory
    private: str                    # address space of a work-item's own variables
    restrict: str
    gid: str                        # global work-item index along axis 0 (a long)
    lid: str                        # work-item index within its group
    group: str                      # work-group index
    local_size: str                 # work-items per group
    barrier: str                    # a work-group barrier over local memory (a statement)
    prelude: str                    # what every program starts with
    vectors: bool = True
    compile_options: tuple[str, ...] = ()
    half_storage: str = "half"      # the storage type of float16
    types: dict[str, str] = field(default_factory=dict)   # OpenCL name -> this language's
    math: dict[str, str] = field(default_factory=dict)    # OpenCL builtin -> this language's

    # ------------------------------------------------------------------ type names
    def ty(self, c: str) -> str:
        """This dialect's name of the OpenCL C type ``c`` (``half`` -> ``ushort`` bits in
        CUDA; vector names are kept: CUDA has ``float2``/``double2``/``ulong2``)."""
        if c == "half":
            return self.half_storage
        return self.types.get(c, c)

    def fn(self, name: str) -> str:
        """This dialect's name of the OpenCL builtin ``name`` (``mul_hi`` -> ``__umulhi``)."""
        return self.math.get(name, name)

    def vec_ctor(self, c: str) -> str:
        """What precedes the parenthesised components of a vector literal of type ``c``:
        OpenCL's ``(float2)``, CUDA's ``make_float2``."""
        return f"({c})" if self.vectors else f"make_{c}"

    def vec(self, c: str, *parts: str) -> str:
        """A vector (or complex) literal of type ``c`` from its components."""
        return f"{self.vec_ctor(c)}({', '.join(parts)})"

    def splat(self, c: str, value: str) -> str:
        """A vector of type ``c`` with every lane ``value`` (OpenCL: a cast broadcasts)."""
        n = len(c) - len(c.rstrip("0123456789"))
        if self.vectors or not n:
            return f"({c})({value})"
        return self.vec(c, *([value] * int(c[-n:])))

    # --------------------------------------------------------------------- float16
    def load_half(self, idx: str, ptr: str) -> str:
        """float16 element ``idx`` of ``ptr`` as a float."""
        if self.name == "cuda":
            return f"ot_h2f({ptr}[{idx}])"
        return f"vload_half({idx}, {ptr})"

    def store_half(self, val: str, idx: str, ptr: str) -> str:
        """A statement storing float ``val`` at float16 element ``idx`` (round to even)."""
        if self.name == "cuda":
            return f"{ptr}[{idx}] = ot_f2h({val});"
        return f"vstore_half_rte({val}, {idx}, {ptr});"

    def half_bits_to_float(self, var: str) -> str:
        """The float value of the float16 bits held in the ushort variable ``var``."""
        if self.name == "cuda":
            return f"ot_h2f({var})"
        return f"vload_half(0, ({self.private}half *)&{var})"

    def float_to_half_bits(self, val: str, var: str) -> str:
        """A statement storing float ``val`` rounded to float16 into ushort ``var``."""
        if self.name == "cuda":
            return f"{var} = ot_f2h({val});"
        return f"vstore_half_rte({val}, 0, ({self.private}half *)&{var});"

    # ----------------------------------------------------------------------- atomics
    def atomic_add(self, bits: int, c: str, ptr: str, val: str) -> str:
        """Atomic ``*ptr += val`` on a 32- or 64-bit integer of type ``c`` (a statement)."""
        if self.name == "cuda":
            if bits == 64:  # two's complement: the unsigned add gives the signed bits
                return f"atomicAdd((unsigned long long *){ptr}, (unsigned long long){val});"
            return f"atomicAdd(({c} *){ptr}, {val});"
        fn = "atom_add" if bits == 64 else "atomic_add"
        return f"{fn}((volatile {self.glob}{c} *){ptr}, {val});"

    def atomic_cas(self, bits: int, ptr: str, old: str, new: str) -> str:
        """Atomic compare-and-swap of the 32/64-bit word at ``ptr``: the old value."""
        if self.name == "cuda":
            t = "unsigned long long" if bits == 64 else "unsigned int"
            return f"atomicCAS(({t} *){ptr}, {old}, {new})"
        t = "ulong" if bits == 64 else "uint"
        fn = "atom_cmpxchg" if bits == 64 else "atomic_cmpxchg"
        return f"{fn}((volatile {self.glob}{t} *){ptr}, {old}, {new})"

    def if_int64_atomics(self, text: str) -> str:
        """``text`` compiled only where 64-bit atomics exist."""
        if self.name == "cuda":
            return text
        return f"#ifdef cl_khr_int64_extended_atomics\n{text}#endif\n"

    # ------------------------------------------------------------------ contraction
    def fp_contract(self, on: bool) -> str:
        """A pragma allowing (or forbidding) ``a * b + c`` -> FMA from here on ("" where
        the language sets it per program: CUDA's ``--fmad``)."""
        if self.name == "cuda":
            return ""
        return f"#pragma OPENCL FP_CONTRACT {'ON' if on else 'OFF'}"


OPENCL_C = Dialect(
    name="opencl", kernel="__kernel", func="inline", glob="__global ", local="__local ",
    private="__private ", restrict="restrict", gid="get_global_id(0)",
    lid="get_local_id(0)", group="get_group_id(0)", local_size="get_local_size(0)",
    barrier="barrier(CLK_LOCAL_MEM_FENCE);", prelude=_OPENCL_PRELUDE)

#: OpenCL C programs built through dpctl on an OpenCL-backed SYCL device: the same text
SYCL = OPENCL_C

CUDA_C = Dialect(
    name="cuda", kernel='extern "C" __global__', func="__device__ inline", glob="",
    local="__shared__ ", private="", restrict="__restrict__",
    gid="((long)blockIdx.x * blockDim.x + threadIdx.x)", lid="((long)threadIdx.x)",
    group="((long)blockIdx.x)", local_size="((long)blockDim.x)", barrier="__syncthreads();",
    prelude=_CUDA_PRELUDE, vectors=False, compile_options=("--fmad=false",),
    half_storage="ushort", math={"mul_hi": "__umulhi"}, types={"char": "signed char"})

DIALECTS: dict[str, Dialect] = {"opencl": OPENCL_C, "sycl": SYCL, "cuda": CUDA_C}

#: patterns (regular expressions) of what exists only in OpenCL C: a CUDA rendering must
#: match none of them
OPENCL_ONLY_PATTERNS = (r"__kernel\b", r"__global\b(?!__)", r"__local\b", r"__private\b",
                        r"\bget_(global|local|group)_id\b", r"\bvload_half", r"\bvstore_half",
                        r"#pragma OPENCL", r"CLK_LOCAL_MEM_FENCE", r"\batomic_cmpxchg\b",
                        r"\batom_(cmpxchg|add)\b", r"\batomic_add\b", r"\bmul_hi\b",
                        r"cl_khr_", r"\((u?(char|short|int|long)|float|double)\d+\)\(",
                        r"\bhalf\s*\*", r"\(half\)", r"\b(float|double)(3|4|8|16)\b",
                        r"\brestrict\b")
