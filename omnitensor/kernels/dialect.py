"""Dialects: how one kernel description is spelled in each language, one class per language.

The generators in this package write a kernel once, with every token that differs between
OpenCL C, CUDA C and their relatives taken from a :class:`Dialect`: address-space and
kernel/function qualifiers, the work-item and work-group index expressions, barriers and
local (shared) memory, type names (float16 travels as its 16 bits in a ``ushort`` where the
language has no usable ``half``), vector and complex literals, half loads and stores, bit
casts, math function names, atomics, pragmas and the prelude every program starts with.
A language is a subclass that sets those tokens and overrides the methods whose spelling
differs (tinygrad's renderers are built the same way); nothing here or in the generators
asks a dialect its name.

* :class:`Language` -- what every kernel language answers: the per-element API of the op
  table (:mod:`.scalar`: an op's expression, casts, ``where``, literals, loads, stores, the
  helpers and prelude). :class:`Dialect` answers it in C from :mod:`.ops`' templates;
  :class:`~.numba_dialect.NumbaPython` (``cpu``'s fused kernels) answers it in Python.
* :data:`OPENCL_C` (:class:`OpenCLC`) -- OpenCL C 1.2 (PyOpenCL; the reference: the OpenCL
  backend's tests check its programs).
* :data:`SYCL` (:class:`SyclC`) -- the same OpenCL C text, built by dpctl
  (``dpctl.program.create_program_from_source``) on SYCL devices whose backend is OpenCL.
  dpctl builds source only through OpenCL; a Level Zero device accepts SPIR-V alone, so it
  keeps dpnp's kernels.
* :data:`CUDA_C` (:class:`CudaC`) -- CUDA C++ for NVRTC (CuPy's ``RawModule``). No vector
  types wider than 2 (the PoCL-specific 8-wide paths are not rendered), float16 as
  ``ushort`` bits converted with ``cuda_fp16.h``'s intrinsics, contraction into FMA turned
  off by the compile option ``--fmad=false`` (CUDA has no per-region pragma).

A new C-like backend (HIP, Metal, an OpenCL-style Vulkan) is one more ``Dialect`` subclass
(HIP: :class:`CudaC` with its own prelude) and a runtime that compiles and launches its
programs; ``docs/architecture.md`` ("The kernel room") counts the lines.
"""
from __future__ import annotations

from types import MappingProxyType, ModuleType
from typing import Any, Mapping, Sequence

_NONE: Mapping[str, str] = MappingProxyType({})

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


class Language:
    """What every kernel language answers: the op table's per-element API. Dtypes are
    NumPy dtypes or their names; expressions are in the dtype's compute type. Subclasses
    implement every method (:class:`Dialect` for C, ``NumbaPython`` for Python)."""

    #: a label for messages and for choosing a dialect by name (``DIALECTS``)
    name = ""
    #: what every program starts with (pragmas and typedefs; imports for Python)
    prelude = ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def expr(self, op: str, dtype: Any, operands: Sequence[str]) -> str | None:
        """``op`` of ``operands``, in the compute type of the op's result dtype, or None
        where this language does not compute ``op`` on ``dtype``."""
        raise NotImplementedError

    def helpers(self, dtype: Any) -> str:
        """The helper functions :meth:`expr`'s results for ``dtype`` may call."""
        raise NotImplementedError

    def compute_type(self, dtype: Any) -> str:
        """The type ``dtype``'s expressions are computed in."""
        raise NotImplementedError

    def storage_type(self, dtype: Any) -> str:
        """The element type of a buffer of ``dtype``."""
        raise NotImplementedError

    def load(self, dtype: Any, ptr: str, idx: str) -> str:
        """Element ``idx`` of buffer ``ptr`` in the compute type."""
        raise NotImplementedError

    def store(self, dtype: Any, ptr: str, idx: str, val: str) -> str:
        """A statement storing compute-type ``val`` at element ``idx`` of ``ptr``."""
        raise NotImplementedError

    def cast(self, src: Any, dst: Any, x: str) -> str | None:
        """``x`` converted from ``src``'s compute type to ``dst``'s, or None."""
        raise NotImplementedError

    def where(self, cond: str, a: str, b: str) -> str:
        """``a`` where ``cond`` is true, else ``b``."""
        raise NotImplementedError

    def literal(self, value: object, dtype: Any) -> str:
        """The constant ``value`` of ``dtype``, exact, in its compute type."""
        raise NotImplementedError


def _c() -> ModuleType:
    # the C expressions are built from ctype, helpers and elementwise, which import this
    # module for their default dialect: loaded at the first call, not at import
    from . import exprs
    return exprs


class Dialect(Language):
    """A C-like language: the spelling of every token a generated kernel uses.

    Strings are inserted verbatim; methods build small expressions. The per-element API
    is the C one for every subclass (:mod:`.exprs`, from :mod:`.ops`' templates).
    ``vectors`` says whether the language has OpenCL's 8-wide vector types, their literals
    and lane swizzles (the PoCL-tuned vector paths of reductions and GEMM need them)."""

    kernel = ""                     # qualifier(s) before ``void`` of a kernel
    func = ""                       # qualifier(s) of a helper function
    glob = ""                       # address space of a buffer pointer ("" when implicit)
    local = ""                      # address space of work-group (shared) memory
    private = ""                    # address space of a work-item's own variables
    restrict = ""
    gid = ""                        # global work-item index along axis 0 (a long)
    flat_gid = ""                   # the same as fused kernels spell it
    lid = ""                        # work-item index within its group
    group = ""                      # work-group index
    local_size = ""                 # work-items per group
    barrier = ""                    # a work-group barrier over local memory (a statement)
    vectors = True
    compile_options: tuple[str, ...] = ()
    half_storage = "half"           # the storage type of float16
    bits_as_float = ""              # reinterpret a uint's bits as a float
    float_as_bits = ""              # reinterpret a float's bits as a uint
    types: Mapping[str, str] = _NONE  # OpenCL name -> this language's
    math: Mapping[str, str] = _NONE   # OpenCL builtin -> this language's

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

    # ------------------------------------------- what each language spells its own way
    def load_half(self, idx: str, ptr: str) -> str:
        """float16 element ``idx`` of ``ptr`` as a float."""
        raise NotImplementedError

    def store_half(self, val: str, idx: str, ptr: str) -> str:
        """A statement storing float ``val`` at float16 element ``idx`` (round to even)."""
        raise NotImplementedError

    def half_bits_to_float(self, var: str) -> str:
        """The float value of the float16 bits held in the ushort variable ``var``."""
        raise NotImplementedError

    def float_to_half_bits(self, val: str, var: str) -> str:
        """A statement storing float ``val`` rounded to float16 into ushort ``var``."""
        raise NotImplementedError

    def atomic_add(self, bits: int, c: str, ptr: str, val: str) -> str:
        """Atomic ``*ptr += val`` on a 32- or 64-bit integer of type ``c`` (a statement)."""
        raise NotImplementedError

    def atomic_cas(self, bits: int, ptr: str, old: str, new: str) -> str:
        """Atomic compare-and-swap of the 32/64-bit word at ``ptr``: the old value."""
        raise NotImplementedError

    def if_int64_atomics(self, text: str) -> str:
        """``text`` compiled only where 64-bit atomics exist."""
        raise NotImplementedError

    def fp_contract(self, on: bool) -> str:
        """A pragma allowing (or forbidding) ``a * b + c`` -> FMA from here on ("" where
        the language sets it per program: CUDA's ``--fmad``)."""
        raise NotImplementedError

    # ------------------------------------------------- the op table's per-element API
    def expr(self, op: str, dtype: Any, operands: Sequence[str]) -> str | None:
        return _c().expr(op, dtype, operands, self)

    def helpers(self, dtype: Any) -> str:
        return _c().helpers(dtype, self)

    def compute_type(self, dtype: Any) -> str:
        return _c().compute_type(dtype)

    def storage_type(self, dtype: Any) -> str:
        return self.ty(_c().ctype_of(dtype).c)

    def load(self, dtype: Any, ptr: str, idx: str) -> str:
        return _c().ctype_of(dtype).load(ptr, idx, self)

    def store(self, dtype: Any, ptr: str, idx: str, val: str) -> str:
        t = _c().ctype_of(dtype)
        return t.store(ptr, idx, f"({t.comp})({val})", self)

    def cast(self, src: Any, dst: Any, x: str) -> str | None:
        return _c().cast(src, dst, x, self)

    def where(self, cond: str, a: str, b: str) -> str:
        return f"(({cond}) ? ({a}) : ({b}))"

    def literal(self, value: object, dtype: Any) -> str:
        return _c().literal(value, dtype)


class OpenCLC(Dialect):
    """OpenCL C 1.2: the reference dialect (PyOpenCL on PoCL and vendor drivers)."""

    name = "opencl"
    kernel = "__kernel"
    func = "inline"
    glob = "__global "
    local = "__local "
    private = "__private "
    restrict = "restrict"
    gid = "get_global_id(0)"
    flat_gid = "(long)get_global_id(0)"
    lid = "get_local_id(0)"
    group = "get_group_id(0)"
    local_size = "get_local_size(0)"
    barrier = "barrier(CLK_LOCAL_MEM_FENCE);"
    prelude = _OPENCL_PRELUDE
    bits_as_float = "as_float"
    float_as_bits = "as_uint"

    def load_half(self, idx: str, ptr: str) -> str:
        return f"vload_half({idx}, {ptr})"

    def store_half(self, val: str, idx: str, ptr: str) -> str:
        return f"vstore_half_rte({val}, {idx}, {ptr});"

    def half_bits_to_float(self, var: str) -> str:
        return f"vload_half(0, ({self.private}half *)&{var})"

    def float_to_half_bits(self, val: str, var: str) -> str:
        return f"vstore_half_rte({val}, 0, ({self.private}half *)&{var});"

    def atomic_add(self, bits: int, c: str, ptr: str, val: str) -> str:
        fn = "atom_add" if bits == 64 else "atomic_add"
        return f"{fn}((volatile {self.glob}{c} *){ptr}, {val});"

    def atomic_cas(self, bits: int, ptr: str, old: str, new: str) -> str:
        t = "ulong" if bits == 64 else "uint"
        fn = "atom_cmpxchg" if bits == 64 else "atomic_cmpxchg"
        return f"{fn}((volatile {self.glob}{t} *){ptr}, {old}, {new})"

    def if_int64_atomics(self, text: str) -> str:
        return f"#ifdef cl_khr_int64_extended_atomics\n{text}#endif\n"

    def fp_contract(self, on: bool) -> str:
        return f"#pragma OPENCL FP_CONTRACT {'ON' if on else 'OFF'}"


class SyclC(OpenCLC):
    """OpenCL C built by dpctl on an OpenCL-backed SYCL device: the same text (a class of
    its own so the sycl runtime names its dialect; a SYCL-only spelling would go here)."""

    name = "sycl"


class CudaC(Dialect):
    """CUDA C++ for NVRTC (CuPy's ``RawModule``/``RawKernel``)."""

    name = "cuda"
    kernel = 'extern "C" __global__'
    func = "__device__ inline"
    local = "__shared__ "
    restrict = "__restrict__"
    gid = "((long)blockIdx.x * blockDim.x + threadIdx.x)"
    flat_gid = "(long)(blockIdx.x * blockDim.x + threadIdx.x)"
    lid = "((long)threadIdx.x)"
    group = "((long)blockIdx.x)"
    local_size = "((long)blockDim.x)"
    barrier = "__syncthreads();"
    prelude = _CUDA_PRELUDE
    vectors = False
    compile_options = ("--fmad=false",)
    half_storage = "ushort"
    bits_as_float = "__uint_as_float"
    float_as_bits = "__float_as_uint"
    math = MappingProxyType({"mul_hi": "__umulhi"})
    types = MappingProxyType({"char": "signed char"})

    def load_half(self, idx: str, ptr: str) -> str:
        return f"ot_h2f({ptr}[{idx}])"

    def store_half(self, val: str, idx: str, ptr: str) -> str:
        return f"{ptr}[{idx}] = ot_f2h({val});"

    def half_bits_to_float(self, var: str) -> str:
        return f"ot_h2f({var})"

    def float_to_half_bits(self, val: str, var: str) -> str:
        return f"{var} = ot_f2h({val});"

    def atomic_add(self, bits: int, c: str, ptr: str, val: str) -> str:
        if bits == 64:  # two's complement: the unsigned add gives the signed bits
            return f"atomicAdd((unsigned long long *){ptr}, (unsigned long long){val});"
        return f"atomicAdd(({c} *){ptr}, {val});"

    def atomic_cas(self, bits: int, ptr: str, old: str, new: str) -> str:
        t = "unsigned long long" if bits == 64 else "unsigned int"
        return f"atomicCAS(({t} *){ptr}, {old}, {new})"

    def if_int64_atomics(self, text: str) -> str:
        return text  # every CUDA device has them

    def fp_contract(self, on: bool) -> str:
        return ""  # per program: compile_options' --fmad=false


OPENCL_C = OpenCLC()
#: OpenCL C programs built through dpctl on an OpenCL-backed SYCL device: the same text
SYCL = SyclC()
CUDA_C = CudaC()

#: the C dialects by name (``fused.c_program(specs, name)`` takes a name or a dialect)
DIALECTS: dict[str, Dialect] = {d.name: d for d in (OPENCL_C, SYCL, CUDA_C)}

#: patterns (regular expressions) of what exists only in OpenCL C: a CUDA rendering must
#: match none of them
OPENCL_ONLY_PATTERNS = (r"__kernel\b", r"__global\b(?!__)", r"__local\b", r"__private\b",
                        r"\bget_(global|local|group)_id\b", r"\bvload_half", r"\bvstore_half",
                        r"#pragma OPENCL", r"CLK_LOCAL_MEM_FENCE", r"\batomic_cmpxchg\b",
                        r"\batom_(cmpxchg|add)\b", r"\batomic_add\b", r"\bmul_hi\b",
                        r"cl_khr_", r"\((u?(char|short|int|long)|float|double)\d+\)\(",
                        r"\bhalf\s*\*", r"\(half\)", r"\b(float|double)(3|4|8|16)\b",
                        r"\brestrict\b")
