"""``omnitensor.onnx``: run ONNX models on any device (``load``); export is not supported
yet (``export`` and ``dynamo_export`` raise ``NotImplementedError``, so scripts that only
import the module run).

    model = omnitensor.onnx.load("model.onnx", device="opencl:0")   # checked with onnx
    y = model(x)                                  # or model.run(None, {"input": x})
"""
from __future__ import annotations

from .._unsupported import unsupported

__all__ = ["export", "dynamo_export", "is_in_onnx_export", "load", "OnnxModel",
           "supported_ops"]

_HINT = ("omnitensor cannot write ONNX files; export from a torch copy of the model "
         "(load its state_dict into torch)")
export = unsupported("omnitensor.onnx.export", _HINT)
dynamo_export = unsupported("omnitensor.onnx.dynamo_export", _HINT)


def is_in_onnx_export() -> bool:
    """False: no export is ever in progress."""
    return False


def load(f, device=None, *, check=True):  # noqa: ANN001, ANN201 - documented in runtime.load
    """Read and check an ONNX model and bind it to ``device`` (see ``runtime.load``)."""
    from .runtime import load as _load
    return _load(f, device, check=check)


def supported_ops() -> list:
    """The ONNX operator types ``load`` can run."""
    from . import runtime  # noqa: F401  (every op module registered)
    from .ops import supported
    return supported()


def __getattr__(name: str):  # noqa: ANN201
    if name == "OnnxModel":
        from .runtime import OnnxModel
        return OnnxModel
    raise AttributeError(f"module 'omnitensor.onnx' has no attribute {name!r}")
