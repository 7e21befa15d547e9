"""Autocast (automatic mixed precision) state, and the one cast rule the eligible ops consult.

The state is thread-local, as torch's: per device type an enabled flag and a low dtype, the
cache of casted weights, and the nesting depth. Ops read one flag, ``_state.active``, at
their entry (a thread-local attribute read); only when it is set do they call
:func:`autocast_operands` with torch's name of the op, and the tables below decide:

* ``LOWER`` ops (matmul, linear, conv, attention...) run in the autocast dtype: their
  floating operands (not float64) on that device type are cast to it;
* ``FP32`` ops (losses, and on accelerators softmax, norms, exp/log, sums) run in float32:
  their low-precision floating operands are cast up;
* every other op runs in its inputs' dtypes, promoted by the ordinary rules (torch's
  "promote" list: cat, stack, addcmul... already promote mixed dtypes here).

The lists are torch's: ``cpu`` follows torch's CPU list, every other device type (cuda,
opencl, sycl) torch's CUDA list. Casts are ordinary recorded ``to`` ops, so gradients flow
back to float32 parameters in float32; under ``no_grad`` nothing records. The backward pass
runs with autocast suspended (the engine clears ``active``), so backward ops run in the dtypes
the forward chose. The public face is :mod:`omnitensor.amp`.
"""
from __future__ import annotations

import functools
import threading
from typing import Any

from ..kernels import primitives as _primitives
from . import dtypes as _dt
from .grad_mode import _mode
from .tensor import Tensor

__all__ = ["state", "autocast_operands", "autocast_entry", "is_enabled", "get_dtype", "set_enabled", "set_dtype",
           "is_cache_enabled", "set_cache_enabled", "clear_cache", "increment_nesting",
           "decrement_nesting", "push", "pop", "suspended", "default_dtype", "LOWER_CPU", "LOWER_GPU",
           "FP32_CPU", "FP32_GPU", "BANNED_GPU"]


class _AutocastState(threading.local):
    def __init__(self) -> None:
        #: some device type has autocast on (and it is not suspended): all hot paths read
        self.active = False
        #: device type -> low dtype, for the device types with autocast enabled
        self.on: dict[str, _dt.DType] = {}
        #: device type -> chosen dtype (enabled or not), for get_autocast_dtype
        self.dtype: dict[str, _dt.DType] = {}
        self.cache_enabled = True
        self.nesting = 0
        #: id(weight) -> (weight, its version, low dtype, cast): torch's cast cache
        self.cache: dict[int, tuple[Tensor, int, _dt.DType, Tensor]] = {}


_state = _AutocastState()
#: the public name ops import: ``if state.active: ... = autocast_operands(op, ...)``
state = _state

# torch's op lists (aten/src/ATen/autocast_mode.cpp), by the names torch's docs use.
# CPU: lower_precision_fp and fp32 lists of the CPU autocast key.
LOWER_CPU = frozenset({
    "conv1d", "conv2d", "conv3d", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "addbmm",
    "linear", "matmul", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "prelu", "scaled_dot_product_attention", "einsum",
    "_native_multi_head_attention"})
FP32_CPU = frozenset({
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile",
    "nanquantile", "stft", "cdist", "trace", "view_as_complex", "cholesky", "inverse",
    "pinverse", "max_pool3d", "adaptive_avg_pool3d", "mse_loss", "cosine_embedding_loss",
    "nll_loss", "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss",
    "cross_entropy", "l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss",
    "triplet_margin_loss", "multi_margin_loss", "ctc_loss", "kl_div",
    "multilabel_margin_loss", "binary_cross_entropy_with_logits"})
# CUDA (used for every accelerator device type)
LOWER_GPU = frozenset({
    "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "prelu", "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv",
    "linalg_vecdot", "linear", "addbmm", "baddbmm", "bmm", "chain_matmul", "multi_dot",
    "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
    "scaled_dot_product_attention"})
#: (the primitives among them are marked in their rows of kernels/primitives.py)
FP32_GPU = _primitives.where(autocast=_primitives.FP32) | frozenset({
    "erfinv", "softplus", "layer_norm", "group_norm",
    "norm", "frobenius_norm", "nuclear_norm", "cosine_similarity", "poisson_nll_loss",
    "cosine_embedding_loss", "nll_loss", "hinge_embedding_loss", "kl_div", "l1_loss",
    "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss",
    "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
    "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm", "logsumexp",
    "prod", "softmax", "log_softmax", "cumprod", "cumsum", "vector_norm", "matrix_norm",
    "sum", "cross_entropy"})
#: torch refuses these inside a CUDA autocast region
BANNED_GPU = frozenset({"binary_cross_entropy"})
_POLICY = {"cpu": (LOWER_CPU, FP32_CPU)}
_GPU_POLICY = (LOWER_GPU, FP32_GPU)


def autocast_operands(op: str, *args: Any) -> tuple:
    """``args`` as op ``op`` sees them under autocast: callers check ``_state.active``
    first (so this runs only inside an enabled autocast region). Non-tensors, non-floating
    tensors, float64 tensors and tensors on other device types pass through unchanged."""
    dev_type = None
    for a in args:
        if isinstance(a, Tensor):
            dev_type = a._device.type
            break
    if dev_type is None:
        return args
    low = _state.on.get(dev_type)
    if low is None:
        return args
    lower, fp32 = _POLICY.get(dev_type, _GPU_POLICY)
    if op in lower:
        target = low
    elif op in fp32:
        target = _dt.float32
    elif op in BANNED_GPU and dev_type != "cpu":
        raise RuntimeError(
            "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
            "autocast: many models use a sigmoid layer right before the binary cross entropy "
            "layer, and the combination is unstable in low precision. Use "
            "binary_cross_entropy_with_logits (BCEWithLogitsLoss), which is safe to autocast, "
            "or run this loss with autocast disabled.")
    else:
        return args
    return tuple(_cast(a, target, dev_type) if isinstance(a, Tensor) else a for a in args)


def _cast(t: Tensor, target: _dt.DType, dev_type: str) -> Tensor:
    d = t._dtype
    if d is target or d is _dt.float64 or not d.is_floating_point or \
            t._device.type != dev_type:
        return t
    # torch's cache: a float32 leaf that requires grad (a weight) is cast once per
    # outermost autocast region; keyed by identity and checked against its version, so an
    # in-place update inside the region is never served stale
    if _state.cache_enabled and target is not _dt.float32 and t.requires_grad and \
            t.grad_fn is None and t._base is None and _mode.enabled:
        hit = _state.cache.get(id(t))
        if hit is not None and hit[0] is t and hit[1] == t._version and hit[2] is target:
            return hit[3]
        out = t.to(target)
        _state.cache[id(t)] = (t, t._version, target, out)
        return out
    return t.to(target)


def autocast_entry(op: str) -> Any:
    """Decorator: the op's first argument goes through :func:`autocast_operands` (unless
    ``dtype=`` is given) before ``fn`` runs. For ops wrapped by another decorator that
    looks at dtypes (``via_compute``): put this one outside it, so the cast comes first."""
    def deco(fn: Any) -> Any:
        @functools.wraps(fn)
        def entry(x: Any, *args: Any, **kwargs: Any) -> Any:
            if _state.active and kwargs.get("dtype") is None:
                x, = autocast_operands(op, x)
            return fn(x, *args, **kwargs)
        return entry
    return deco


# ------------------------------------------------------------- torch's state functions
def default_dtype(device_type: str) -> _dt.DType:
    """torch's per-device default: bfloat16 on cpu, float16 on cuda; on the other
    accelerators float16 where device 0 holds it, else bfloat16."""
    bf16 = getattr(_dt, "bfloat16", None)
    if device_type == "cpu":
        return bf16 if bf16 is not None else _dt.float16
    if device_type == "cuda" or bf16 is None:
        return _dt.float16
    from .device import device as _device
    try:
        if _device(device_type, 0).supports_dtype(_dt.float16):
            return _dt.float16
    except Exception:  # noqa: BLE001 - backend absent: the dtype choice does not matter
        return _dt.float16
    return bf16


def is_enabled(device_type: str) -> bool:
    return _state.active and device_type in _state.on


def get_dtype(device_type: str) -> _dt.DType:
    d = _state.dtype.get(device_type)
    return d if d is not None else default_dtype(device_type)


def set_enabled(device_type: str, enabled: bool) -> None:
    on = dict(_state.on)  # replaced, not changed: a region's saved state stays intact
    if enabled:
        on[device_type] = get_dtype(device_type)
    else:
        on.pop(device_type, None)
    _state.on = on
    _state.active = bool(on)


def set_dtype(device_type: str, dtype: _dt.DType) -> None:
    _state.dtype = {**_state.dtype, device_type: dtype}
    if device_type in _state.on:
        _state.on = {**_state.on, device_type: dtype}


def is_cache_enabled() -> bool:
    return _state.cache_enabled


def set_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = bool(enabled)


def clear_cache() -> None:
    _state.cache.clear()


def increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


def push(device_type: str, dtype: _dt.DType, enabled: bool, cache_enabled: bool) -> tuple:
    """Enter an autocast region: returns what :func:`pop` restores. The dicts are replaced,
    never changed in place, so the saved ones stay as they were."""
    st = _state
    saved = (st.active, st.on, st.dtype, st.cache_enabled)
    on = dict(st.on)
    if enabled:
        on[device_type] = dtype
    else:
        on.pop(device_type, None)
    st.dtype = {**st.dtype, device_type: dtype}
    st.on = on
    st.active = bool(on)
    st.cache_enabled = cache_enabled
    st.nesting += 1
    return saved


def pop(saved: tuple) -> None:
    """Leave an autocast region; leaving the outermost one empties the cast cache."""
    st = _state
    st.nesting -= 1
    if st.nesting <= 0:
        st.nesting = 0
        st.cache.clear()
    st.active, st.on, st.dtype, st.cache_enabled = saved


class suspended:  # a context manager, used like a function
    """Autocast off on this thread for the block (the backward pass, custom functions'
    float32 bodies), restored after."""

    __slots__ = ("prev",)

    def __enter__(self) -> None:
        self.prev = _state.active
        _state.active = False

    def __exit__(self, *exc: Any) -> None:
        _state.active = self.prev
