"""Run an ONNX model on any omnitensor device: ``omnitensor.onnx.load(path, device=...)``.

The model is read and checked with the ``onnx`` package; its graph runs node by node in the
file's (topological) order, each node one function of :mod:`.ops` over omnitensor tensors,
so the same file runs on cpu, opencl, sycl and cuda. Weights (initializers) are moved to the
device once, at load. Small integer tensors (shapes, axes, indices built by ``Shape``,
``Constant``...) stay on the host, where the ops that read them (``Reshape``, ``Slice``,
``Expand``...) need their values; they join a device operand as values.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from ..core.device import Device, device as as_device, get_default_device
from ..core.ops.creation import asarray
from ..core.tensor import Tensor
from . import ops as _ops
from . import recurrent as _recurrent  # noqa: F401  (registers LSTM/GRU/RNN in ops.OPS)

#: integer tensors of at most this many elements stay on the host (shape arithmetic)
_HOST_INTS = 64


def _onnx() -> Any:
    try:
        import onnx
    except ImportError as e:
        raise ImportError("omnitensor.onnx.load needs the onnx package: pip install onnx") \
            from e
    return onnx


class OnnxModel:
    """A loaded ONNX graph bound to one device. Call it with the inputs in order
    (``model(x)``), or as onnxruntime's session: ``model.run(None, {"input": x})``."""

    def __init__(self, proto: Any, device: Device) -> None:
        onnx = _onnx()
        from onnx import numpy_helper
        self.proto = proto
        self.device = device
        graph = proto.graph
        self.opset = max((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")),
                         default=13)
        unknown = sorted({n.op_type for n in graph.node if n.domain not in ("", "ai.onnx")
                          or n.op_type not in _ops.OPS})
        if unknown:
            raise NotImplementedError(
                f"omnitensor.onnx: this model uses ONNX op(s) omnitensor does not run yet: "
                f"{', '.join(unknown)} (supported: {len(_ops.OPS)} ops, "
                f"omnitensor.onnx.supported_ops())")
        self._consts: dict[str, Tensor] = {}
        for init in graph.initializer:
            self._consts[init.name] = self._place(numpy_helper.to_array(init))
        init_names = set(self._consts)
        self.input_names = [i.name for i in graph.input if i.name not in init_names]
        self.output_names = [o.name for o in graph.output]
        self._input_types = {i.name: i.type.tensor_type.elem_type for i in graph.input}
        self._nodes = [(n.op_type, list(n.input), list(n.output),
                        {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute},
                        n.name or n.op_type) for n in graph.node]

    def _place(self, arr: np.ndarray) -> Tensor:
        """A host array as a tensor: small integer ones on the host, others on the device."""
        arr = np.asarray(arr)
        if arr.dtype.kind in "iub" and arr.size <= _HOST_INTS:
            return asarray(np.array(arr, order="C"), device="cpu")
        if arr.dtype == np.float64 and not self.device.supports_dtype("float64"):
            raise TypeError(f"omnitensor.onnx: the model holds float64 tensors, which "
                            f"{self.device} cannot compute")
        return asarray(np.array(arr, order="C"), device=self.device)

    def _feed(self, name: str, value: Any) -> Tensor:
        if isinstance(value, Tensor):
            if value.device.type != "cpu" and value.device != self.device:
                raise ValueError(f"omnitensor.onnx: input {name!r} is on {value.device} but "
                                 f"the model runs on {self.device}; move it with "
                                 f".to('{self.device}')")
            return value.to(self.device) if value.device != self.device else value
        return asarray(np.asarray(value), device=self.device)

    def run(self, output_names: Sequence[str] | None, feed: dict[str, Any]) -> list[Tensor]:
        """onnxruntime's ``InferenceSession.run``: the named outputs (all when None) for the
        inputs in ``feed``, as omnitensor tensors on the model's device."""
        missing = [n for n in self.input_names if n not in feed]
        extra = [n for n in feed if n not in self.input_names]
        if missing or extra:
            raise ValueError(f"omnitensor.onnx: the model's inputs are {self.input_names}; "
                             f"missing {missing}, unknown {extra}")
        env: dict[str, Any] = dict(self._consts)
        for name in self.input_names:
            env[name] = self._feed(name, feed[name])
        from ..core.grad_mode import no_grad_ctx
        with no_grad_ctx():
            for op, ins, outs, attrs, label in self._nodes:
                args = [env[i] if i else None for i in ins]
                try:
                    res = _ops.OPS[op](_ops.Ctx(self, attrs, len(outs)), *args)
                except (_ops.OnnxOpError, ValueError, TypeError, IndexError) as e:
                    raise type(e)(f"omnitensor.onnx: node {label!r} ({op}): {e}") from None
                if not isinstance(res, tuple):
                    res = (res,)
                for name, value in zip(outs, res):
                    if name:
                        env[name] = value
        wanted = self.output_names if output_names is None else list(output_names)
        return [env[n] if env[n].device == self.device else env[n].to(self.device)
                for n in wanted]

    def __call__(self, *inputs: Any) -> Any:
        if len(inputs) != len(self.input_names):
            raise ValueError(f"omnitensor.onnx: the model takes {len(self.input_names)} "
                             f"input(s) {self.input_names}, got {len(inputs)}")
        outs = self.run(None, dict(zip(self.input_names, inputs)))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def to(self, device: Any) -> "OnnxModel":
        """The same graph bound to another device (weights copied there)."""
        return OnnxModel(self.proto, as_device(device))


def load(f: Any, device: Any = None, *, check: bool = True) -> OnnxModel:
    """Read an ONNX model (a path, bytes, a file object or an ``onnx.ModelProto``), check it
    with ``onnx.checker`` and bind it to ``device`` (default: the default device)."""
    onnx = _onnx()
    if isinstance(f, (str, os.PathLike)):
        proto = onnx.load(os.fspath(f))
    elif isinstance(f, (bytes, bytearray)):
        proto = onnx.load_from_string(bytes(f))
    elif hasattr(f, "read"):
        proto = onnx.load(f)
    else:
        proto = f
    if check:
        onnx.checker.check_model(proto)
    return OnnxModel(proto, get_default_device() if device is None else as_device(device))
