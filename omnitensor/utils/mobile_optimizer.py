"""``omnitensor.utils.mobile_optimizer``: torch's TorchScript mobile optimizer, which has no
omnitensor counterpart (omnitensor exports through ``omnitensor.jit`` and ONNX)."""
from __future__ import annotations

import enum
from typing import Any, NoReturn

__all__ = ["optimize_for_mobile", "MobileOptimizerType", "generate_mobile_module_lints"]


class MobileOptimizerType(enum.Enum):
    CONV_BN_FUSION = 1
    INSERT_FOLD_PREPACK_OPS = 2
    REMOVE_DROPOUT = 3
    FUSE_ADD_RELU = 4
    HOIST_CONV_PACKED_PARAMS = 5
    VULKAN_AUTOMATIC_GPU_TRANSFER = 6


def optimize_for_mobile(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise NotImplementedError(
        "optimize_for_mobile is not supported: it rewrites TorchScript modules for "
        "PyTorch Mobile, which omnitensor does not target; export with "
        "omnitensor.onnx.export and run the model with an ONNX runtime for mobile")


generate_mobile_module_lints = optimize_for_mobile
