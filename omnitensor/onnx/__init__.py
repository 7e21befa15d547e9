"""``omnitensor.onnx``: ONNX export is not supported yet. The module imports, so scripts that
import it run; ``export`` and ``dynamo_export`` raise ``NotImplementedError``."""
from __future__ import annotations

from .._unsupported import unsupported

__all__ = ["export", "dynamo_export", "is_in_onnx_export"]

_HINT = ("omnitensor cannot write ONNX files; export from a torch copy of the model "
         "(load its state_dict into torch)")
export = unsupported("omnitensor.onnx.export", _HINT)
dynamo_export = unsupported("omnitensor.onnx.dynamo_export", _HINT)


def is_in_onnx_export() -> bool:
    """False: no export is ever in progress."""
    return False
