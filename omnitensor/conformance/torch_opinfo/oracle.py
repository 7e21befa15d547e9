"""The oracle: the installed PyTorch and its own description of its ops (``op_db``).

torch is imported only here, lazily, through :func:`torch`, so ``import omnitensor`` never
imports it and a machine without it gets one clear message. ``op_db`` takes seconds to
import; :func:`op_db` caches it for the process.
"""
from __future__ import annotations

import functools
import importlib
import sys
from typing import Any

#: the dtypes each kind of check runs, by device type (float64 forward and float64
#: gradients on cpu, the reference; float32 where an accelerator computes)
FORWARD_DTYPES = {"cpu": ("float32", "float64", "int64", "bool")}
DEVICE_FORWARD_DTYPES = ("float32", "int64", "bool")
GRAD_DTYPE = {"cpu": "float64"}
DEVICE_GRAD_DTYPE = "float32"

#: (rtol, atol) per dtype: torch.testing.assert_close's defaults
TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7),
}

#: at most this many samples per (op, dtype) and kind: bounds the suite's time
MAX_SAMPLES = 8


class TorchUnavailable(RuntimeError):
    """Real PyTorch is not installed (or ``torch`` is omnitensor's alias)."""


def torch() -> Any:
    """The real ``torch`` module, or :class:`TorchUnavailable` saying how to get it."""
    mod = sys.modules.get("torch")
    if mod is not None and not getattr(mod, "__name__", "").startswith("torch"):
        raise TorchUnavailable(
            "`import torch` resolves to omnitensor in this process (as_torch is installed): "
            "the torch conformance check needs the real PyTorch as its oracle; run it in a "
            "process without as_torch")
    try:
        return importlib.import_module("torch")
    except ImportError as e:
        raise TorchUnavailable(
            f"the torch conformance check compares omnitensor with PyTorch, which is not "
            f"installed ({e}); install it with `pip install torch expecttest` (the CPU build "
            f"is enough: torch is only the reference)") from None


@functools.lru_cache(maxsize=1)
def op_db() -> tuple[Any, ...]:
    """torch's OpInfo database (``common_methods_invocations.op_db``), imported once."""
    torch()
    try:
        mod = importlib.import_module("torch.testing._internal.common_methods_invocations")
    except ImportError as e:
        raise TorchUnavailable(
            f"torch's op database cannot be imported ({e}); it needs torch's test "
            f"dependencies: `pip install expecttest`") from None
    return tuple(mod.op_db)


def opinfo_key(op: Any) -> str:
    """``name`` or ``name.variant``: the key an OpInfo goes by in tests and the gaps file."""
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


@functools.lru_cache(maxsize=1)
def ops_by_key() -> dict[str, Any]:
    """Every OpInfo by :func:`opinfo_key`."""
    return {opinfo_key(op): op for op in op_db()}


def select(patterns: list[str] | None) -> list[Any]:
    """The OpInfos whose key is one of ``patterns`` (exact, or fnmatch with ``*``; a bare
    name also selects its variants); all of them for None."""
    import fnmatch
    ops = list(op_db())
    if not patterns:
        return ops
    keep = [op for op in ops if any(
        fnmatch.fnmatchcase(opinfo_key(op), p) or op.name == p for p in patterns)]
    if not keep:
        raise ValueError(f"no OpInfo matches {', '.join(patterns)} (keys look like 'addmm', "
                         f"'addmm.decomposed', 'nn.functional.conv2d'; '*' matches any text)")
    return keep


def torch_dtype(name: str) -> Any:
    """``torch.<name>`` for a dtype name (``bool`` is ``torch.bool``)."""
    return getattr(torch(), name)


def dtype_name(dt: Any) -> str:
    """``float32`` for ``torch.float32`` or ``omnitensor.float32``."""
    name = getattr(dt, "name", None)
    if isinstance(name, str):
        return name
    return str(dt).rpartition(".")[2]


def forward_dtypes(device_type: str) -> tuple[str, ...]:
    return FORWARD_DTYPES.get(device_type, DEVICE_FORWARD_DTYPES)


def grad_dtype(device_type: str) -> str:
    return GRAD_DTYPE.get(device_type, DEVICE_GRAD_DTYPE)


def supports(op: Any, dtype: str) -> bool:
    """Whether torch's CPU build supports ``op`` in ``dtype`` (samples exist for it)."""
    return torch_dtype(dtype) in op.supported_dtypes("cpu")


def torch_gradient_unverified(op: Any) -> bool:
    """True when torch's own OpInfo marks its backward gradcheck an expected failure
    (``TestBwdGradients.test_fn_grad``: as_strided_scatter, cov, istft...): torch's
    analytic gradient then disagrees with its numerical one, so it is no oracle."""
    import unittest
    for d in getattr(op, "decorators", ()) or ():
        if (getattr(d, "cls_name", None), getattr(d, "test_name", None)) == \
                ("TestBwdGradients", "test_fn_grad") and \
                unittest.expectedFailure in (getattr(d, "decorators", None) or ()):
            return True
    return False
