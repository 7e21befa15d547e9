"""``torch.backends.cuda`` on omnitensor: the library switches (``matmul.allow_tf32``,
``cufft_plan_cache``, the scaled-dot-product-attention kernel choices) are settable and
inert, because omnitensor's CUDA path (CuPy) uses none of torch's CUDA kernels. ``is_built()``
says whether omnitensor's CUDA backend (CuPy) is installed, not whether a GPU is present: ask
``omnitensor.cuda.is_available()`` for that. This is not the CUDA device adapter, which is
``omnitensor.backends.cuda``."""
from __future__ import annotations

import importlib.util

from ._flags import FlagNamespace

matmul = FlagNamespace("torch.backends.cuda.matmul", allow_tf32=False,
                       allow_fp16_reduced_precision_reduction=True,
                       allow_bf16_reduced_precision_reduction=True)
cufft_plan_cache = FlagNamespace("torch.backends.cuda.cufft_plan_cache", max_size=4096,
                                 size=0)
_sdp = {"flash": False, "mem_efficient": False, "math": True, "cudnn": False}


def is_built() -> bool:
    """Whether CuPy (omnitensor's CUDA/ROCm backend) is installed (imports nothing)."""
    return importlib.util.find_spec("cupy") is not None


def preferred_linalg_library(backend: str | None = None) -> str:
    return "default"


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


def enable_flash_sdp(enabled: bool) -> None:
    """Recorded; omnitensor's attention is always the math formulation."""
    _sdp["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def enable_cudnn_sdp(enabled: bool) -> None:
    _sdp["cudnn"] = bool(enabled)
