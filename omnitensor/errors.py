"""omnitensor's error types.

Each subclasses the built-in a user would catch (ValueError, TypeError, IndexError,
RuntimeError), so ``except ValueError`` keeps working, while the message says what was
given, what was expected and how to fix it. Backends translate their library's exceptions
into these; no raw backend traceback should reach a user.
"""
from __future__ import annotations


class OmnitensorError(Exception):
    """Base class of every error omnitensor raises on purpose."""


class DeviceMismatchError(OmnitensorError, RuntimeError):
    """Operands of one op live on different devices."""


class DTypeError(OmnitensorError, TypeError):
    """A dtype is unknown, cannot be promoted, or is not accepted by an op."""


class UnsupportedDTypeError(OmnitensorError, TypeError):
    """The device cannot hold or compute this dtype (float64 on many GPUs, float16 on
    OpenCL devices without cl_khr_fp16)."""


class ShapeError(OmnitensorError, ValueError):
    """Shapes do not broadcast, or do not match what an op needs."""


class IndexOutOfRangeError(OmnitensorError, IndexError):
    """An index is outside the tensor's bounds."""


class BackendUnavailableError(OmnitensorError, RuntimeError):
    """A backend's library is not installed, or it finds no device. The message names the
    pip extra to install or what to check."""


class DeviceError(OmnitensorError, RuntimeError):
    """A device string is malformed or names a device this machine does not have."""


class BackendError(OmnitensorError, RuntimeError):
    """A backend library failed while running an op; the message names the op, device and
    backend, and keeps the library's own message."""


def mismatch_message(op: str, a: object, b: object) -> str:
    return (f"{op}: expected all tensors on the same device, got {a} and {b}. "
            f"omnitensor never moves data implicitly: call .to('{a}') (or .to('{b}')) "
            f"on one operand first.")
