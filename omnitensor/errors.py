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


class DeviceDTypeError(UnsupportedDTypeError):
    """This device's hardware or runtime lacks the dtype (an OpenCL device without
    cl_khr_fp16, a SYCL device without the fp64 aspect); other devices hold it."""


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


class IntegerDivisionByZeroError(OmnitensorError, RuntimeError):
    """An integer ``floor_divide``/``remainder`` (so ``//``, ``%``, ``fmod``,
    ``div(rounding_mode=...)`` and their in-place forms) met a zero divisor. torch raises
    ``RuntimeError("ZeroDivisionError")`` here, so the message is the same; NumPy and the
    device libraries would give 0 or garbage. A float divisor of 0 gives inf or NaN instead:
    cast the dividend to a float dtype for that."""


def mismatch_message(op: str, a: object, b: object) -> str:
    return (f"{op}: expected all tensors on the same device, got {a} and {b}. "
            f"omnitensor never moves data implicitly: call .to('{a}') (or .to('{b}')) "
            f"on one operand first.")


class OutOfMemoryError(BackendError):
    """A device (or the host) cannot provide the memory an op asked for: torch's
    ``torch.OutOfMemoryError`` (``torch.cuda.OutOfMemoryError``), a RuntimeError (and a
    BackendError, which it refines). The
    message names the device, the bytes requested, allocated and reserved, and the fix; the
    same numbers are attributes (None when the backend cannot tell). The process stays
    usable: free tensors (or call ``omnitensor.empty_cache``) and retry."""

    def __init__(self, message: str, *, device: object = None, requested: int | None = None,
                 allocated: int | None = None, reserved: int | None = None) -> None:
        super().__init__(message)
        self.device = device
        self.requested = requested
        self.allocated = allocated
        self.reserved = reserved


def format_bytes(n: int) -> str:
    """``1.50 GiB``: binary units, as torch's out-of-memory message prints them."""
    value = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(value) < 1024 or unit == "PiB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.2f} {unit}"
        value /= 1024
    return f"{n} bytes"  # unreachable


def out_of_memory(device: object, requested: int | None, *, allocated: int | None = None,
                  reserved: int | None = None, total: int | None = None,
                  available: int | None = None, why: str = "") -> OutOfMemoryError:
    """The one out-of-memory error every backend raises (its message in torch's shape)."""
    asked = f"tried to allocate {format_bytes(requested)}" if requested is not None \
        else "an allocation failed"
    parts = []
    if allocated is not None:
        parts.append(f"{format_bytes(allocated)} allocated by tensors")
    if reserved is not None:
        parts.append(f"{format_bytes(reserved)} reserved (cached) by omnitensor")
    if total is not None:
        parts.append(f"the device has {format_bytes(total)} in total")
    if available is not None:
        parts.append(f"{format_bytes(available)} free")
    usage = f" ({'; '.join(parts)})" if parts else ""
    reason = f" [{why}]" if why else ""
    msg = (f"{device} is out of memory: {asked}{usage}{reason}. Free tensors you no longer "
           f"need (del them), reduce the batch or tensor size, or call "
           f"omnitensor.empty_cache('{device}') to release cached blocks.")
    return OutOfMemoryError(msg, device=device, requested=requested, allocated=allocated,
                            reserved=reserved)


class EnvVarError(OmnitensorError, ValueError):
    """An ``OMNITENSOR_*`` environment variable holds a value omnitensor cannot use; the
    message names the variable, the value and what is accepted."""
