"""``omnitensor.onnx``: export models to ONNX (``export``, torch's signature, from the
graph ``omnitensor.compile`` captures) and run ONNX models on any device (``load``).

    omnitensor.onnx.export(model, (x,), "model.onnx", input_names=["x"],
                           output_names=["y"], dynamic_axes={"x": {0: "batch"}})
    model = omnitensor.onnx.load("model.onnx", device="opencl:0")   # checked with onnx
    y = model(x)                                  # or model.run(None, {"input": x})
"""
from __future__ import annotations

import enum
from typing import Any

from .._unsupported import unsupported

__all__ = ["export", "dynamo_export", "is_in_onnx_export", "load", "OnnxModel",
           "supported_ops", "ONNXProgram", "TrainingMode", "OperatorExportTypes"]


class TrainingMode(enum.IntEnum):
    """torch.onnx.TrainingMode: the mode the model is exported in (``export(training=)``)."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    """torch.onnx.OperatorExportTypes (accepted by ``export``; only ONNX is written)."""

    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3

dynamo_export = unsupported("omnitensor.onnx.dynamo_export",
                            "use omnitensor.onnx.export (torch deprecated dynamo_export)")
_EXPORTING = [False]


def export(model: Any, args: Any = (), f: Any = None, **kwargs: Any) -> Any:
    """Export ``model`` called on ``args`` to an ONNX file ``f`` (torch's signature; see
    ``omnitensor.onnx.export_impl.export``)."""
    from .export_impl import export as _export
    _EXPORTING[0] = True
    try:
        return _export(model, args, f, **kwargs)
    finally:
        _EXPORTING[0] = False


def is_in_onnx_export() -> bool:
    """True while :func:`export` runs the model."""
    return _EXPORTING[0]


def load(f, device=None, *, check=True, max_work=None):  # see runtime
    """Read and check an ONNX model and bind it to ``device``, bounding the work one run
    may do (see ``runtime.load``)."""
    from .runtime import load as _load
    return _load(f, device, check=check, max_work=max_work)


def supported_ops() -> list:
    """The ONNX operator types ``load`` can run."""
    from . import runtime  # every op module registered
    from .ops import supported
    return supported()


def __getattr__(name: str):
    if name == "OnnxModel":
        from .runtime import OnnxModel
        return OnnxModel
    if name == "ONNXProgram":
        from .export_impl import ONNXProgram
        return ONNXProgram
    raise AttributeError(f"module 'omnitensor.onnx' has no attribute {name!r}")
