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
from .core import torch_function as _tf
from .core.tensor import Tensor

TensorBase = _TensorBase = Tensor  # torch._C.TensorBase: the Tensor's base class
_TensorMeta = type(Tensor)  # torch._C._TensorMeta: the metaclass of the Tensor type
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


# torch's __torch_function__ switches and checks (the rule lives in core/torch_function.py;
# omnitensor's own ops never dispatch, these serve library code written in torch's style)
_has_torch_function = _tf.has_torch_function
_has_torch_function_unary = _tf.has_torch_function_unary
_has_torch_function_variadic = _tf.has_torch_function_variadic
_disabled_torch_function_impl = _tf.disabled_torch_function_impl
_is_torch_function_enabled = _tf.is_torch_function_enabled
DisableTorchFunction = _tf.DisableTorchFunction
DisableTorchFunctionSubclass = _tf.DisableTorchFunctionSubclass


class _NNNamespace:
    """``torch._C._nn``: of its ATen nn bindings, ``_parse_to`` (``to``'s argument parser,
    which libraries call to read a ``to(...)`` call they intercept)."""

    @staticmethod
    def _parse_to(*args: Any, **kwargs: Any) -> tuple[Any, Any, bool, Any]:
        from .nn.module import parse_to
        return parse_to(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"torch._C._nn.{name} is not provided by omnitensor (only "
                             f"_parse_to; the nn ops are torch.nn.functional's)")


_nn = _NNNamespace()


def __getattr__(name: str) -> Any:
    """torch._C.IntType & co., torch._C.parse_schema, FunctionSchema, Argument and
    _AliasInfo: TorchScript's type objects and schemas (omnitensor/jit/types.py, schema.py);
    PyTorchFileReader, the zip checkpoint reader (omnitensor/serialization/file_reader.py)."""
    from .jit import schema, types
    if name in types.__all__:
        return getattr(types, name)
    if name in ("parse_schema", "FunctionSchema", "Argument"):
        return getattr(schema, name)
    if name == "_AliasInfo":
        return schema.AliasInfo
    if name == "PyTorchFileReader":
        from .serialization.file_reader import PyTorchFileReader
        return PyTorchFileReader
    raise AttributeError(f"module 'torch._C' has no attribute {name!r}")


__all__ = [n for n in dict(globals()) if not n.startswith("__") and n not in
           ("annotations", "Any", "_tf")] + ["is_grad_enabled"]
