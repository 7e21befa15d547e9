"""omnitensor: one PyTorch-style tensor API on every accelerator vendor's stack.

``import omnitensor as ot`` imports no vendor library: the ``cpu`` (NumPy), ``opencl``
(PyOpenCL), ``sycl`` (dpctl/dpnp) and ``cuda`` (CuPy) backends load when a tensor first
lands on their device. The namespace follows torch names and semantics and is also an
Array API standard (2024.12) namespace; where the two disagree, module functions follow the
standard and ``dim=``/Tensor methods follow torch (see the README).
"""
from __future__ import annotations

import builtins as _builtins  # int/bool below are dtypes: annotations use these
import math as _math
from typing import Any as _Any

__version__ = "0.1.0"
__array_api_version__ = "2024.12"

from . import core as _core  # binds Tensor methods
from .core.array_api_info import __array_namespace_info__, isdtype
from .core.device import (Device, devices, get_default_device, set_default_device)
from .core.device import Device as device  # torch.device: the class; calling it interns
from .core.dtypes import (DType, as_dtype, can_cast, finfo, get_default_dtype, iinfo,
                          promote_types, result_type, set_default_dtype)
from .core.dtypes import (bool_ as bool, complex64, complex128, float16, float32,
                          bfloat16, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64)
from .core.dtypes import (complex32, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
                          float8_e5m2fnuz,
                          float8_e8m0fnu)
from .core.shell_dtypes import (bits1x8, bits2x4, bits4x2, bits8, bits16, float4_e2m1fn_x2,
                                int1, int2, int3, int4, int5, int6, int7, uint1, uint2, uint3,
                                uint4, uint5, uint6, uint7)
from .core.shell_dtypes import uint1 as bit  # torch.bit is torch.uint1
from .backends.cpu.threads import get_num_threads, set_num_threads
from .core.graph import is_grad_enabled
from .core.tensor import Tensor
from .errors import (BackendError, BackendUnavailableError, DeviceError, DeviceMismatchError,
                     DTypeError, IndexOutOfRangeError, OmnitensorError, ShapeError,
                     UnsupportedDTypeError)
from .errors import OutOfMemoryError

from .core.ops.creation import (arange, asarray, empty, empty_like, eye, from_dlpack,
                                from_numpy, full, full_like, linspace, logspace, meshgrid, ones,
                                ones_like, tensor, tril, tril_indices, triu, triu_indices, zeros,
                                zeros_like)
from .core.ops.elementwise import (abs, acos, acosh, add, asin, asinh, atan, atan2, atanh,
                                   bitwise_and, bitwise_invert, bitwise_left_shift,
                                   bitwise_or, bitwise_right_shift, bitwise_xor, ceil, clamp,
                                   conj, copysign, cos, cosh, equal, erf, exp, expm1, floor,
                                   floor_divide, greater, greater_equal, hypot, imag, isfinite,
                                   isinf, isnan, less, less_equal, log, log1p, log2, log10,
                                   logaddexp, logical_and, logical_not, logical_or,
                                   logical_xor, maximum, minimum, multiply, negative,
                                   nextafter, not_equal, positive, pow, real, reciprocal, relu,
                                   remainder, rsqrt, sigmoid, sign, signbit, sin, sinh, sqrt,
                                   square, subtract, tan, tanh, trunc)
from .core.ops.elementwise import round as _round0
from .core.ops.composite import (allclose, cross, deg2rad, diff, divide, fmod, frac,
                                 heaviside, isclose, lerp, logit, rad2deg, sinc, trace, xlogy)
from .core.ops.composite import equal as _tensors_equal
from .core.ops.ternary import clip, where as _where3
from .core.ops.reduction import (all, amax, amin, aminmax, any, argmax, argmin,
                                 cumprod, cumsum, cumulative_prod, cumulative_sum, logsumexp,
                                 max, mean, min, nanmean, nansum, prod, std, std_mean,
                                 sum, var, var_mean)
from .core.ops.shape import (broadcast_arrays, broadcast_tensors, broadcast_to, diag, diag_embed,
                             diagonal, expand_dims, flatten, flip, fliplr, flipud,
                             matrix_transpose, moveaxis, movedim, permute, permute_dims, reshape,
                             squeeze, swapaxes, swapdims, t, transpose, unflatten, unsqueeze)
from .core.ops.join import (cat, chunk, concat, concatenate, hstack, narrow, repeat, roll,
                            repeat_interleave, select, split, stack, tensor_split, tile, unbind,
                            unstack, vstack)
from .core.ops.gather import count_nonzero, gather, index_select, masked_fill, masked_select, scatter, scatter_add, take, take_along_axis, take_along_dim
from .core.ops.gather import nonzero as _nonzero_tuple, nonzero_torch as _nonzero_torch
from .core.ops.torch_extras import (atleast_1d, atleast_2d, atleast_3d, bincount, block_diag,
                                    cartesian_prod, cdist, clamp_max, clamp_min, column_stack,
                                    corrcoef, cov, diagflat, dsplit, dstack, erfc, exp2,
                                    float_power,
                                    histc, hsplit, index_add, index_copy, index_fill, isneginf,
                                    isposinf, isreal, kron, logaddexp2, logcumsumexp, logdet,
                                    nan_to_num, ravel, rot90, row_stack, sgn, split_with_sizes,
                                    trapezoid, vsplit, softmax, log_softmax, det, inverse,
                                    slogdet, pinverse, matrix_power, norm)
from .core.ops.sorting import (argsort, bucketize, kthvalue, median, msort, nanmedian, quantile,
                               searchsorted, sort, topk, unique, unique_all, unique_counts,
                               unique_inverse, unique_values)
from .core.ops.linalg_ops import (bmm, dot, einsum, ger, inner, matmul, mm, mv, outer,
                                  tensordot, vdot, vecdot)
from .core.ops.conversion import astype
from .core.ops.storage import TypedStorage, UntypedStorage, as_strided
from .core.legacy_storage import LEGACY_STORAGES as _LEGACY_STORAGES
globals().update(_LEGACY_STORAGES)  # torch.FloatStorage, LongStorage... (legacy classes)
from .core.ops.linalg_torch import (chain_matmul, cholesky, cholesky_inverse, cholesky_solve,
                                    eig, geqrf, lstsq, lu, lu_solve, lu_unpack, matrix_rank,
                                    orgqr, ormqr, pca_lowrank, qr, svd, svd_lowrank, symeig,
                                    triangular_solve, vander)
from .core.ops.linalg_factor import matrix_exp
from .core.ops.spectral import istft, stft
from .core.ops.torch_api import (  # complex: torch's name
    addbmm, addcdiv, addcmul, addmm, addmv, addr, alias_copy, angle, as_strided_copy,
    as_strided_scatter, baddbmm, broadcast_shapes, combinations, complex, conj_physical,
    constant_pad_nd, cummax, cummin, cumulative_trapezoid, diagonal_copy, diagonal_scatter,
    empty_permuted, empty_strided, expand_copy, fill, fmax, fmin, frexp, gcd, gradient,
    histogram, histogramdd, index_put, index_reduce, isin, lcm, ldexp, masked_scatter, mode,
    nanquantile, narrow_copy, native_batch_norm, native_group_norm, native_layer_norm,
    nonzero_static, permute_copy, polar, put, renorm, resize_as_, resolve_conj, resolve_neg,
    rsub, scalar_tensor, scatter_reduce, select_scatter, slice_scatter, split_with_sizes_copy,
    squeeze_copy, t_copy, transpose_copy, unbind_copy, unfold_copy, unique_consecutive,
    unravel_index, unsafe_chunk, unsafe_split, unsqueeze_copy, view_as_complex, view_as_real,
    view_copy, zero_)
from .core.ops.random import (Generator, bernoulli, default_generator, get_rng_state,
                              initial_seed, manual_seed, multinomial, normal, rand, rand_like,
                              randint, randint_like, randn, randn_like, randperm, seed,
                              set_rng_state)

from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled

e = _math.e
pi = _math.pi
inf = _math.inf
nan = _math.nan
newaxis = None

# torch aliases
neg = negative
sub = subtract
mul = multiply
div = true_divide = divide
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
arctan2 = atan2
absolute = abs
bitwise_not = bitwise_invert
eq, ne, lt, le, gt, ge = equal, not_equal, less, less_equal, greater, greater_equal
greater_than, less_than = greater, less
power = pow
trapz = trapezoid  # torch's older name
float = float32  # noqa: A001  (torch.float)
chalf = complex32  # torch.chalf (named; tensors refused)
double = float64
half = float16
long = int64
int = int32  # noqa: A001  (torch.int)
short = int16
cfloat = complex64
cdouble = complex128
dtype = DType  # torch.dtype: the type of omnitensor.float32 & co.
# torch's older idioms and top-level switches (core/legacy.py, torch_idioms.py)
from .core.legacy import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor,
                          FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor, Size)
from .core.printing import set_printoptions
from .torch_idioms import (are_deterministic_algorithms_enabled, as_tensor, channels_last,
                           channels_last_3d, contiguous_format, get_float32_matmul_precision,
                           get_num_interop_threads,
                           is_deterministic_algorithms_warn_only_enabled, is_nonzero,
                           is_storage, layout, memory_format, preserve_format,
                           set_default_tensor_type, set_float32_matmul_precision,
                           set_num_interop_threads, strided, typename,
                           use_deterministic_algorithms)
# quantized tensors (core/quantized, docs/quantized.md)
from .core.dtypes import qint8, qint32, quint2x4, quint4x2, quint8
from .core.quantized import choose_qparams_optimized, fused_moving_avg_obs_fake_quant
from .core.quantized import (dequantize, empty_quantized, fake_quantize_per_channel_affine,
                             fake_quantize_per_tensor_affine, int_repr, per_channel_affine,
                             per_channel_affine_float_qparams, per_channel_symmetric,
                             per_tensor_affine, per_tensor_symmetric, q_per_channel_axis,
                             q_per_channel_scales, q_per_channel_zero_points, q_scale,
                             q_zero_point, qscheme, quantize_per_channel, quantize_per_tensor,
                             quantize_per_tensor_dynamic)
# sparse tensors (core/sparse, docs/sparse.md); torch.sparse is omnitensor/sparse.py (lazy)
from .core.sparse import (sparse_bsc, sparse_bsc_tensor, sparse_bsr, sparse_bsr_tensor,
                          sparse_compressed_tensor, sparse_coo, sparse_coo_tensor, sparse_csc,
                          sparse_csc_tensor, sparse_csr, sparse_csr_tensor)
from .core.sparse import sparse_mm as spmm


def round(x: Tensor, /, *, decimals: _builtins.int = 0) -> Tensor:  # noqa: A001
    """Round half to even (``decimals`` as torch)."""
    from .core.ops.composite import round_decimals
    return round_decimals(x, decimals) if decimals else _round0(x)


def where(condition: Tensor, x1: _Any = None, x2: _Any = None, /) -> _Any:
    """``x1`` where ``condition`` else ``x2``; with one argument, ``nonzero(condition,
    as_tuple=True)`` (torch/NumPy)."""
    if x1 is None and x2 is None:
        return _nonzero_tuple(condition)
    return _where3(condition, x1, x2)


def nonzero(x: Tensor, /, *, as_tuple: _Any = None) -> _Any:
    """Array API: a tuple of index tensors. ``as_tuple=False`` gives torch's (N, ndim)
    tensor."""
    if as_tuple is False:
        return _nonzero_torch(x)
    return _nonzero_tuple(x)


def argwhere(x: Tensor) -> Tensor:
    return _nonzero_torch(x)


def is_tensor(obj: _Any) -> _builtins.bool:
    return isinstance(obj, Tensor)


def is_floating_point(x: Tensor) -> _builtins.bool:
    return x.dtype.kind == "f"


def is_complex(x: Tensor) -> _builtins.bool:
    return x.dtype.kind == "c"


def numel(x: Tensor) -> _builtins.int:
    return x.numel()


def clone(x: Tensor, *, memory_format: _Any = None) -> Tensor:  # noqa: F811 - torch's name
    return x.clone()


def info(print_report: _builtins.bool = True) -> str:
    """Backends, versions, devices and dtype support, and why an absent backend is
    absent (also ``omnitensor info`` / ``python -m omnitensor info``)."""
    from .cli import info_report
    report = info_report()
    if print_report:
        print(report)
    return report


def synchronize(device: _Any = None) -> None:  # noqa: F811 - torch's name
    """Wait for every op enqueued on ``device`` (the default device when None)."""
    dev = get_default_device() if device is None else globals()["device"](device)
    dev.synchronize()


def empty_cache(device: _Any = None) -> None:  # noqa: F811 - torch's name
    """Give memory cached by the backends' pools but used by no tensor back to the driver
    (torch's ``cuda.empty_cache``), for ``device`` or every loaded backend when None."""
    if device is not None:
        dev = globals()["device"](device)
        dev.backend.empty_cache(dev.index)
        return
    from .backends.registry import loaded_backends
    for be in loaded_backends().values():
        be.empty_cache(None)


_LAZY = {"nn", "optim", "data", "dist", "distributed", "utils", "linalg", "fft", "cuda", "testing",
         "conformance", "serialization"}
# torch's module tree (issue 14): imported on first attribute access, so `import omnitensor`
# stays light
_LAZY |= {"accelerator", "special", "distributions", "func", "onnx", "jit", "amp", "profiler",
          "as_torch", "compiler", "memory", "hub", "multiprocessing", "torch_backends"}
# torch.is_autocast_enabled & co. (the autocast state) live in omnitensor.amp
_FROM_AMP = {"is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled",
             "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
             "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
             "is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype",
             "is_autocast_available"}
# torch.lgamma & co. live in omnitensor.special (written once there)
_FROM_SPECIAL = {"lgamma": "gammaln", "digamma": "digamma", "erfinv": "erfinv", "i0": "i0",
                 "igamma": "gammainc", "igammac": "gammaincc", "mvlgamma": "multigammaln",
                 "polygamma": "polygamma"}
# torch.hann_window & co. live in omnitensor.signal.windows (torch.signal.windows)
_WINDOWS = {"hann_window", "hamming_window", "blackman_window", "bartlett_window",
            "kaiser_window"}
_LAZY.add("signal")
_LAZY.add("sparse")  # torch.sparse
_LAZY.add("masked")  # torch.masked
# torch.quantized_max_pool2d & co.: ops on quantized tensors, in omnitensor.nn.functional
_QUANTIZED_NN = {"quantized_max_pool1d", "quantized_max_pool2d", "quantized_max_pool3d",
                 "quantized_batch_norm"}
# torch.IntType, torch.ListType & co. and torch.parse_schema: TorchScript's type objects and
# operator schemas (omnitensor/jit/types.py, omnitensor/jit/schema.py)
_SCRIPT_TYPES = {"Type", "AnyType", "BoolType", "ComplexType", "DeviceObjType", "DictType",
                 "FloatType", "FutureType", "IntType", "ListType", "NoneType", "NumberType",
                 "OptionalType", "PyObjectType", "StringType", "TensorType", "TupleType",
                 "UnionType", "StreamObjType", "SymIntType", "SymBoolType", "AwaitType",
                 "RRefType", "ClassType", "EnumType", "InterfaceType", "InferredType"}
_SCHEMA = {"parse_schema", "FunctionSchema", "Argument"}
# torch.ScriptModule / torch.ScriptFunction: torch.jit's classes, at torch's root too
_JIT_CLASSES = {"ScriptModule", "ScriptFunction"}


def __getattr__(name: str) -> _Any:
    if name in _LAZY:
        import importlib
        return importlib.import_module(f".{name}", __name__)
    if name in ("save", "load"):
        from . import serialization
        return getattr(serialization, name)
    if name == "PyTorchFileReader":  # torch.PyTorchFileReader (torch._C's), a zip reader
        from .serialization.file_reader import PyTorchFileReader
        return PyTorchFileReader
    if name in _FROM_SPECIAL:
        from . import special
        return getattr(special, _FROM_SPECIAL[name])
    if name in _WINDOWS:
        from .signal import windows
        return getattr(windows, name)
    if name in _QUANTIZED_NN:
        from .nn.functional import quantized
        return getattr(quantized, name)
    if name in ("fork", "wait"):  # torch.fork / torch.wait are torch.jit's
        from .jit import _fork
        return getattr(_fork, name)
    if name in _SCRIPT_TYPES:
        from .jit import types
        return getattr(types, name)
    if name in _SCHEMA:
        from .jit import schema
        return getattr(schema, name)
    if name in _JIT_CLASSES:
        from . import jit
        return getattr(jit, name)
    if name == "compile":  # torch.compile: capture and replay (omnitensor/compiler/)
        from .compiler import compile
        return compile
    if name == "autocast" or name in _FROM_AMP:  # torch.autocast is torch.amp.autocast
        from . import amp
        value = globals()[name] = getattr(amp, name)  # once: scripts enter it every step
        return value
    raise AttributeError(f"module 'omnitensor' has no attribute {name!r}")
