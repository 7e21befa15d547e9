"""``torch._C`` under the torch alias: the few entry points of torch's C extension that
pure-Python libraries call at import or in their hot paths, answered the way a CPU build of
torch answers them. Anything else is an AttributeError naming the missing name, never a
pretend object.
"""
from __future__ import annotations

from typing import Any

from .core.device import Device as device  # noqa: F401 - torch._C.device
from .core.dtypes import DType as dtype  # noqa: F401 - torch._C.dtype
from .core.graph import is_grad_enabled
from .core.ops.random import Generator  # noqa: F401 - torch._C.Generator
from .core.shape_util import Size  # noqa: F401 - torch._C.Size
from .core.tensor import Tensor

TensorBase = _TensorBase = Tensor  # torch._C.TensorBase: the Tensor's base class
_api_usage_seen: set[str] = set()


def _log_api_usage_once(event: str) -> None:
    """torch logs API usage to its telemetry hook; omnitensor records nothing beyond
    the event names seen in this process."""
    _api_usage_seen.add(str(event))


def _log_api_usage_metadata(event: str, metadata: Any) -> None:
    _api_usage_seen.add(str(event))


def _get_tracing_state() -> None:
    """None: no TorchScript tracer is running (omnitensor.jit traces at the backend)."""
    return None


def _is_tracing() -> bool:
    from .jit import is_tracing
    return bool(is_tracing())


def _set_grad_enabled(mode: bool) -> None:
    from .autograd import set_grad_enabled
    set_grad_enabled(mode)


def _get_cudnn_enabled() -> bool:
    from .torch_backends import cudnn
    return bool(cudnn.enabled)


def _cuda_getDeviceCount() -> int:  # torch's name
    from . import cuda
    return cuda.device_count()


def _are_functorch_transforms_active() -> bool:
    return False


def _is_torch_function_enabled() -> bool:
    return True


def _get_privateuse1_backend_name() -> str:
    return "privateuseone"


def _jit_set_profiling_executor(flag: bool) -> bool:
    """TorchScript executor switches: there is no TorchScript executor; the previous
    setting (False) is returned, as torch returns the old value."""
    return False


_jit_set_profiling_mode = _jit_set_profiling_executor
_jit_set_texpr_fuser_enabled = _jit_set_profiling_executor
_jit_override_can_fuse_on_cpu = _jit_set_profiling_executor
_jit_override_can_fuse_on_gpu = _jit_set_profiling_executor


class DisableTorchFunction:
    """``with torch._C.DisableTorchFunction():`` - omnitensor has no ``__torch_function__``
    dispatch to disable, so the block runs as written."""

    def __enter__(self) -> "DisableTorchFunction":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


DisableTorchFunctionSubclass = DisableTorchFunction


def _disabled_torch_function_impl(func: Any, types: Any, args: Any = (),
                                  kwargs: Any = None) -> Any:
    """torch's default ``__torch_function__``: call ``func``."""
    return func(*args, **(kwargs or {}))


def _has_torch_function(args: Any) -> bool:
    return False


def __getattr__(name: str) -> Any:
    """torch._C.IntType & co., torch._C.parse_schema, FunctionSchema, Argument and
    _AliasInfo: TorchScript's type objects and schemas (omnitensor/jit/types.py, schema.py)."""
    from .jit import schema, types
    if name in types.__all__:
        return getattr(types, name)
    if name in ("parse_schema", "FunctionSchema", "Argument"):
        return getattr(schema, name)
    if name == "_AliasInfo":
        return schema.AliasInfo
    raise AttributeError(f"module 'torch._C' has no attribute {name!r}")


__all__ = [n for n in dict(globals()) if not n.startswith("__") and n not in
           ("annotations", "Any")] + ["is_grad_enabled"]
