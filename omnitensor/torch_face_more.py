"""More of torch's top-level names on the torch face (:mod:`omnitensor.torch_face`), in
families bound by one rule each:

* the ``*_copy`` functions (``select_copy``, ``slice_copy``...): core's copying views
  (``core/ops/copies.py``), all of which the face shows;
* switches over state omnitensor already keeps (anomaly detection, deterministic debug
  mode, autocast's cpu/gpu setters): torch's spellings of omnitensor's own switches;
* torch's signatures where omnitensor's parameter names differ (``norm(input, ...)``,
  ``tensordot(a, b, dims)``, ``split(tensor, ...)``...): the same functions, renamed;
* a few functions written here: ``range``, ``binomial``, ``poisson``, ``frombuffer``,
  ``from_file``, ``frobenius_norm``, ``nuclear_norm``, ``norm_except_dim``, ``cond``.
"""
from __future__ import annotations

import builtins as _b
import math
import warnings
from typing import Any

import numpy as np

from .core.ops import copies as _copies
from .core.ops.out_arg import write_out as _write_out
from .core.tensor import Tensor
from .errors import BackendError

_FACE_STATE = {"warn_always": False, "check_nan": True}


# ------------------------------------------------------------------- switches
def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """torch's ``set_anomaly_enabled``: anomaly detection on or off."""
    from .autograd import set_detect_anomaly
    set_detect_anomaly(enabled)
    _FACE_STATE["check_nan"] = _b.bool(check_nan)


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    from .autograd import is_anomaly_enabled as enabled
    return enabled()


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks backward results for NaN (set by
    :func:`set_anomaly_enabled`; True by default, as torch)."""
    return _FACE_STATE["check_nan"]


def set_warn_always(b: bool) -> None:
    """torch's ``set_warn_always``: recorded (``is_warn_always_enabled``); omnitensor's
    warnings go through Python's ``warnings``, whose filters decide repetition."""
    _FACE_STATE["warn_always"] = _b.bool(b)


def is_warn_always_enabled() -> bool:
    """What :func:`set_warn_always` last set (False by default)."""
    return _FACE_STATE["warn_always"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: Any) -> None:
    """torch's ``set_deterministic_debug_mode``: 0/"default" turns deterministic algorithms
    off, 1/"warn" on with warnings only, 2/"error" on."""
    from .torch_idioms import use_deterministic_algorithms
    mode = _DEBUG_MODES.get(debug_mode, debug_mode) if isinstance(debug_mode, str) \
        else debug_mode
    if isinstance(debug_mode, str) and debug_mode not in _DEBUG_MODES:
        raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, "
                           f"`error`, but got {debug_mode}")
    if mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(mode != 0, warn_only=mode == 1)


def get_deterministic_debug_mode() -> int:
    """0, 1 or 2, as :func:`set_deterministic_debug_mode` reads them."""
    from .torch_idioms import (are_deterministic_algorithms_enabled,
                               is_deterministic_algorithms_warn_only_enabled)
    if not are_deterministic_algorithms_enabled():
        return 0
    return 1 if is_deterministic_algorithms_warn_only_enabled() else 2


def set_flush_denormal(mode: bool) -> bool:
    """torch's ``set_flush_denormal``: False, "not supported here" (NumPy and the device
    libraries keep denormals; omnitensor sets no FPU flags)."""
    return False


def init_num_threads() -> None:
    """torch's ``init_num_threads``: nothing to start (omnitensor's CPU threads start on
    demand)."""


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """torch's legacy ``set_autocast_cpu_enabled``: ``set_autocast_enabled("cpu", ...)``."""
    from .amp import set_autocast_enabled
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype: Any) -> None:
    """torch's legacy ``set_autocast_cpu_dtype``: ``set_autocast_dtype("cpu", ...)``."""
    from .amp import set_autocast_dtype
    set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype: Any) -> None:
    """torch's legacy ``set_autocast_gpu_dtype``: ``set_autocast_dtype("cuda", ...)``."""
    from .amp import set_autocast_dtype
    set_autocast_dtype("cuda", dtype)


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode`` block is active."""
    from .core.grad_mode import is_inference_mode_enabled as enabled
    return enabled()


def is_inference(input: Any) -> bool:  # noqa: A002 - torch's name
    """torch's ``is_inference``: whether ``input`` is an inference tensor (made inside
    ``inference_mode()``, or a view of one); see ``Tensor.is_inference``."""
    return input.is_inference()


def thread_safe_generator() -> Any:
    """torch's ``thread_safe_generator``: None (the default generator) outside a DataLoader
    thread worker; omnitensor's DataLoader workers are processes."""
    return None


# -------------------------------------------------------- torch's parameter names
def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,  # noqa: A002
         out: Any = None, dtype: Any = None) -> Tensor:
    """torch's ``norm(input, p='fro', dim=None, keepdim=False, out=None, dtype=None)``."""
    from .core.ops.torch_extras import norm as _norm
    return _write_out("norm", _norm(input, p, dim, keepdim, dtype), out)


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    """torch's ``tensordot(a, b, dims=2, out=None)``."""
    import omnitensor
    return _write_out("tensordot", omnitensor.tensordot(a, b, dims=dims), out)


def chain_matmul(*matrices: Tensor, out: Any = None) -> Tensor:
    """torch's deprecated ``chain_matmul(*matrices, out=None)``: the matrices' product."""
    import omnitensor
    return _write_out("chain_matmul", omnitensor.chain_matmul(*matrices), out)


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    """torch's ``split(tensor, split_size_or_sections, dim=0)``."""
    from .core.ops.join import split as _split
    return _split(tensor, split_size_or_sections, dim)


def set_default_device(device: Any) -> None:
    """torch's ``set_default_device(device)``."""
    import omnitensor
    omnitensor.set_default_device(device)


def set_rng_state(new_state: Tensor) -> None:
    """torch's ``set_rng_state(new_state)``: the default generator's state."""
    from .core.ops.random import set_rng_state as _set
    _set(new_state)


# ------------------------------------------------------------ written here
def range(start: Any = 0, end: Any = None, step: Any = 1, *,  # noqa: A001 - torch's name
          out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """torch's deprecated ``range``: ``start, start + step, ...`` up to ``end``
    *inclusive*, in the default float dtype unless ``dtype`` is given."""
    warnings.warn("torch.range is deprecated and will be removed in a future release "
                  "because its behavior is inconsistent with Python's range builtin. "
                  "Instead, use torch.arange, which produces values in [start, end).",
                  UserWarning, stacklevel=2)
    from .core import dtypes
    from .core.ops import creation
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    s, e, st = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if st == 0 or (e - s) * st < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = int(math.floor((e - s) / st)) + 1
    d = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    values = s + st * np.arange(n, dtype=np.float64)
    res = creation.asarray(values.astype(d.np), device=device)
    if requires_grad:
        res.requires_grad_(True)
    return _write_out("range", res, out)


def _default_generator_only(generator: Any, name: str) -> None:
    from .core.ops.random import default_generator
    if generator is not None and generator is not default_generator:
        raise NotImplementedError(f"{name}(generator=...): its sampler draws from the "
                                  f"default generator; seed that one (torch.manual_seed)")


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """torch's ``binomial``: Binomial(``count``, ``prob``) draws, in ``prob``'s dtype."""
    _default_generator_only(generator, "binomial")
    from .distributions._samplers import binomial as _binomial
    return _binomial(count, prob)


def poisson(input: Tensor, generator: Any = None) -> Tensor:  # noqa: A002
    """torch's ``poisson``: Poisson(``input``) draws of ``input``'s shape and dtype."""
    _default_generator_only(generator, "poisson")
    from .distributions._samplers import poisson as _poisson
    return _poisson(input)


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """torch's ``frombuffer``: a 1-D cpu tensor of ``count`` elements of ``dtype`` read from
    ``buffer`` after ``offset`` bytes (all of the rest with ``count=-1``)."""
    from .core import dtypes
    from .core.ops import creation
    d = dtypes.as_dtype(dtype)
    size = memoryview(buffer).nbytes
    if offset < 0 or offset >= _b.max(size, 1):
        raise ValueError(f"both buffer length ({size}) and offset ({offset}) must be "
                         f"greater than 0 and less than the buffer length")
    if count == -1 and (size - offset) % d.itemsize:
        raise ValueError(f"buffer length ({size - offset} after offset) must be a multiple "
                         f"of element size ({d.itemsize})")
    arr = np.frombuffer(buffer, dtype=d.np, count=count, offset=offset)
    res = creation.asarray(arr.copy() if not arr.flags.writeable else arr, device="cpu")
    if requires_grad:
        res.requires_grad_(True)
    return res


def from_file(filename: str, shared: Any = None, size: int = 0, *, dtype: Any = None,
              layout: Any = None, device: Any = None, pin_memory: bool = False) -> Tensor:
    """torch's ``from_file``: ``size`` elements of ``dtype`` (the default float dtype)
    read from ``filename``; with ``shared`` the file is mapped, so writes reach it."""
    from .core import dtypes
    from .core.ops import creation
    d = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    arr: Any
    if shared:
        arr = np.memmap(filename, dtype=d.np, mode="r+" if _exists(filename) else "w+",
                        shape=(size,))
    else:
        arr = np.fromfile(filename, dtype=d.np, count=size)
        if arr.size < size:
            raise RuntimeError(f"from_file: {filename} holds {arr.size} elements of "
                               f"{d.name}, {size} were asked for")
    return creation.asarray(arr, device=device or "cpu")


def _exists(path: str) -> bool:
    import os
    return os.path.exists(path) and os.path.getsize(path) > 0


def frobenius_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False, *,  # noqa: A002
                   out: Any = None) -> Tensor:
    """torch's ``frobenius_norm``: the square root of the sum of squared magnitudes over
    ``dim``."""
    from . import linalg
    return _write_out("frobenius_norm", linalg.vector_norm(input, 2, dim=dim, keepdim=keepdim), out)


def nuclear_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False, *,  # noqa: A002
                 out: Any = None) -> Tensor:
    """torch's ``nuclear_norm(input, keepdim=False)`` / ``(input, dim, keepdim=False)``: the
    sum of singular values of the matrices over ``dim``."""
    if isinstance(dim, _b.bool):
        dim, keepdim = (-2, -1), dim
    from . import linalg
    return _write_out("nuclear_norm", linalg.matrix_norm(input, "nuc", dim=dim, keepdim=keepdim), out)


def norm_except_dim(v: Tensor, pow: Any = 2, dim: int = 0) -> Tensor:  # noqa: A002
    """torch's ``norm_except_dim`` (weight norm's): the ``pow``-norm over every dimension
    but ``dim``, shaped to broadcast against ``v``; ``dim=-1``: the norm of all of ``v``."""
    from . import linalg
    if dim == -1:
        return linalg.vector_norm(v, pow)
    d = dim % v.ndim
    others = tuple(i for i in _b.range(v.ndim) if i != d)
    return linalg.vector_norm(v, pow, dim=others, keepdim=True)


def cond(pred: Any, true_fn: Any, false_fn: Any, operands: Any = ()) -> Any:
    """torch's ``cond``: ``true_fn(*operands)`` when ``pred`` holds, else
    ``false_fn(*operands)`` (eagerly; ``pred`` a bool or a one-element tensor)."""
    if isinstance(pred, Tensor) and pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                           f"a tensor of shape {list(pred.shape)}")
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/"
                           f"tuple, but got {type(operands).__name__}")
    return (true_fn if _b.bool(pred) else false_fn)(*operands)


# ---------------------------------------------- aten's flat-weight recurrences
def _flat_recurrence(mode: str, args: tuple) -> tuple[Tensor, tuple]:
    """aten's ``lstm``/``gru``/``rnn_tanh``/``rnn_relu`` over ``nn``'s recurrence: either
    ``(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first)`` or the packed form ``(data, batch_sizes, hx, params, has_biases,
    num_layers, dropout, train, bidirectional)``; ``params`` holds per layer and direction
    ``w_ih, w_hh[, b_ih, b_hh][, w_hr]``."""
    from .nn import _rnn
    packed = not isinstance(args[3], _b.bool)
    if packed:
        data, batch_sizes, hx, params, has_biases, layers, dropout, train, bidi = args
        rows, sizes = data, [int(b) for b in batch_sizes.tolist()]
    else:
        x, hx, params, has_biases, layers, dropout, train, bidi, batch_first = args
        x = x.transpose(0, 1) if batch_first else x
        steps, batch = int(x.shape[0]), int(x.shape[1])
        rows, sizes = x.reshape(steps * batch, x.shape[2]), [batch] * steps
    dirs = 2 if bidi else 1
    per = len(params) // (layers * dirs)
    weights = []
    for k in _b.range(layers * dirs):
        group = list(params[k * per:(k + 1) * per])
        biases = (group[2], group[3]) if has_biases else (None, None)
        proj = group[-1] if per in (3, 5) else None
        weights.append((group[0], group[1], biases[0], biases[1], proj))
    states = tuple(hx) if isinstance(hx, (list, tuple)) else (hx,)
    out, final = _rnn.rnn_forward(mode, rows, sizes, states, weights, layers, dropout,
                                  train, bidi)
    if not packed:
        out = out.reshape(steps, batch, out.shape[-1])
        out = out.transpose(0, 1) if batch_first else out
    return out, final


def lstm(*args: Any) -> tuple[Tensor, Tensor, Tensor]:
    """torch's ``lstm`` (aten's flat-weight form): ``(output, h_n, c_n)``."""
    out, (h, c) = _flat_recurrence("LSTM", args)
    return out, h, c


def gru(*args: Any) -> tuple[Tensor, Tensor]:
    """torch's ``gru`` (aten's flat-weight form): ``(output, h_n)``."""
    out, (h,) = _flat_recurrence("GRU", args)
    return out, h


def rnn_tanh(*args: Any) -> tuple[Tensor, Tensor]:
    """torch's ``rnn_tanh`` (aten's flat-weight form): ``(output, h_n)``."""
    out, (h,) = _flat_recurrence("RNN_TANH", args)
    return out, h


def rnn_relu(*args: Any) -> tuple[Tensor, Tensor]:
    """torch's ``rnn_relu`` (aten's flat-weight form): ``(output, h_n)``."""
    out, (h,) = _flat_recurrence("RNN_RELU", args)
    return out, h


class FatalError(Exception):
    """torch's ``FatalError``: an unrecoverable internal error."""


#: the ``*_copy`` functions of core/ops/copies.py
COPIES = tuple(n for n in _copies.__all__ if n.endswith("_copy"))

WRITTEN = ("set_anomaly_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_warn_always", "is_warn_always_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_flush_denormal", "init_num_threads",
           "set_autocast_cpu_enabled", "set_autocast_cpu_dtype", "set_autocast_gpu_dtype",
           "is_inference_mode_enabled", "is_inference", "thread_safe_generator", "norm", "tensordot",
           "chain_matmul", "split", "set_default_device", "set_rng_state", "range",
           "binomial", "poisson", "frombuffer", "from_file", "frobenius_norm",
           "nuclear_norm", "norm_except_dim", "cond", "FatalError", "lstm", "gru",
           "rnn_tanh", "rnn_relu")

#: torch's build flags, as omnitensor's: LAPACK (NumPy's) and FFTs are there
FLAGS = {"has_lapack": True, "has_spectral": True, "has_mkl": False, "has_openmp": False}


def names() -> dict[str, Any]:
    """Every name this module gives the torch face (these override omnitensor's own)."""
    from .amp import GradScaler
    from .func import vmap
    from .core.methods_torch_more import hash_tensor
    g = globals()
    out: dict[str, Any] = {n: getattr(_copies, n) for n in COPIES}
    out.update({n: g[n] for n in WRITTEN})
    out.update(FLAGS)
    out.update({"vmap": vmap, "GradScaler": GradScaler, "AcceleratorError": BackendError,
                "hash_tensor": hash_tensor})
    from ._C import DisableTorchFunction, DisableTorchFunctionSubclass
    out.update(DisableTorchFunction=DisableTorchFunction,  # no __torch_function__ here
               DisableTorchFunctionSubclass=DisableTorchFunctionSubclass)
    from . import torch_face_concrete  # sym_*, absent devices' autocast switches
    out.update(torch_face_concrete.names())
    from . import futures, streams, torch_face_aten
    out.update(Stream=streams.Stream, Event=streams.Event, Future=futures.Future,
               get_device_module=streams.get_device_module,
               embedding_bag=torch_face_aten.embedding_bag, lobpcg=torch_face_aten.lobpcg)
    out.update({n: getattr(torch_face_aten, n) for n in ("dsmm", "smm", "hspmm", "hsmm",
                                                          "sspaddmm", "saddmm", "native_norm",
                                                          "resize_as_sparse_")})
    out.update(torch_face_aten.SPARSE_COPIES)
    from .core.ops.storage import slice_inverse
    out.update(slice_inverse=slice_inverse)
    return out
