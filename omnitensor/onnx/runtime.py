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
from . import _meter, ops as _ops
from . import ops_nn as _ops_nn  # noqa: F401  (registers Conv, pools, norms... in ops.OPS)
from . import ops_reduce as _ops_reduce  # noqa: F401  (ReduceSum, MatMul... in ops.OPS)
from . import recurrent as _recurrent  # noqa: F401  (registers LSTM/GRU/RNN in ops.OPS)

#: integer tensors of at most this many elements stay on the host (shape arithmetic)
_HOST_INTS = 64
_RAISE = "If you trust the model, pass a larger max_work= to omnitensor.onnx.load."


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

    def __init__(self, proto: Any, device: Device, max_work: Any = None,
                 file_bytes: int | None = None) -> None:
        onnx = _onnx()
        from onnx import numpy_helper
        self.proto = proto
        self.device = device
        self.max_work = max_work
        self.file_bytes = proto.ByteSize() if file_bytes is None else file_bytes
        self._work_limit(0)                  # (checks max_work now, not at the first run)
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
            try:
                arr = numpy_helper.to_array(init)
            except (ValueError, TypeError, KeyError, UnicodeDecodeError) as e:
                what = f"unknown data type {e}" if isinstance(e, KeyError) else str(e)
                raise ValueError(f"omnitensor.onnx.load: initializer {init.name!r} is "
                                 f"corrupt ({what})") from None
            self._consts[init.name] = self._place(arr)
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
        limit = self._work_limit(sum(t.numel() * t.element_size() for t in
                                     (env[n] for n in self.input_names)))
        with no_grad_ctx(), _meter.metered(limit, "the model", _RAISE):
            for op, ins, outs, attrs, label in self._nodes:
                args = [env[i] if i else None for i in ins]
                try:
                    res = _ops.OPS[op](_ops.Ctx(self, attrs, len(outs)), *args)
                except (_ops.OnnxOpError, ValueError, TypeError, IndexError,
                        _meter.WorkLimitError) as e:
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

    def _work_limit(self, input_bytes: int) -> int:
        """One run's work limit: ``max_work``, else what ``jit.load`` allows a file of
        this size, counting the inputs' bytes too (work grows with the batch)."""
        from ..jit._verify import default_limits
        return default_limits(self.file_bytes + input_bytes, self.max_work).work

    def to(self, device: Any) -> "OnnxModel":
        """The same graph bound to another device (weights copied there)."""
        return OnnxModel(self.proto, as_device(device), self.max_work, self.file_bytes)


def load(f: Any, device: Any = None, *, check: bool = True,
         max_work: Any = None) -> OnnxModel:
    """Read an ONNX model (a path, bytes, a file object or an ``onnx.ModelProto``), check it
    with ``onnx.checker`` and bind it to ``device`` (default: the default device).

    The file is data: a path must name a regular file (a FIFO or a device is refused
    before reading), tensors stored outside it must be regular files in its folder (onnx's
    own checks refuse paths outside it), and one run may do ``max_work`` units of work
    (elements touched plus multiply-adds, counted at every primitive before it runs; by
    default what ``omnitensor.jit.load`` allows a file of the model's size plus its
    inputs' bytes, see ``_meter``). Pass a larger ``max_work`` for a model you trust."""
    onnx = _onnx()
    size = None
    if isinstance(f, (str, os.PathLike)) or hasattr(f, "read"):
        raw = _read(f)
        size = len(raw)
        proto = _parse(onnx, raw)
        if isinstance(f, (str, os.PathLike)):
            _external_data(onnx, proto, os.path.dirname(os.path.abspath(os.fspath(f))))
    elif isinstance(f, (bytes, bytearray)):
        size = len(f)
        proto = _parse(onnx, bytes(f))
    else:
        proto = f
    if check:
        _check(onnx, proto)
    return OnnxModel(proto, get_default_device() if device is None else as_device(device),
                     max_work, size)


def _check(onnx: Any, proto: Any) -> None:
    """``onnx.checker`` over the model; what it refuses is a ValueError naming the model's
    fault (its own error, or a UnicodeDecodeError for a corrupt name, is onnx's internals)."""
    try:
        onnx.checker.check_model(proto)
    except (onnx.checker.ValidationError, UnicodeDecodeError, ValueError) as e:
        why = "a name or string is not valid UTF-8" if isinstance(e, UnicodeDecodeError) \
            else str(e).strip()
        raise ValueError(f"omnitensor.onnx.load: the model fails onnx's checker: "
                         f"{why}") from e


def _read(f: Any) -> bytes:
    from ..serialization.files import CheckpointError, read_checkpoint_bytes
    try:
        return read_checkpoint_bytes(f)[0]
    except CheckpointError as e:
        raise ValueError(f"omnitensor.onnx.load: {e}".replace("a checkpoint",
                                                              "an ONNX model")) from None


def _parse(onnx: Any, raw: bytes) -> Any:
    from google.protobuf.message import DecodeError
    try:
        return onnx.load_from_string(raw)
    except (DecodeError, ValueError, RuntimeError) as e:
        raise ValueError(f"omnitensor.onnx.load: not a readable ONNX model ({e})") from None


def _external_data(onnx: Any, proto: Any, folder: str) -> None:
    """Load tensors the model keeps in other files, each a regular file in ``folder``."""
    from onnx import external_data_helper as ext
    tensors = [t for t in _tensors_of(proto.graph) if ext.uses_external_data(t)]
    for t in tensors:
        info = ext.ExternalDataInfo(t)
        path = os.path.realpath(os.path.join(folder, info.location))
        if not path.startswith(os.path.realpath(folder) + os.sep) or \
                not os.path.isfile(path):
            raise ValueError(f"omnitensor.onnx.load: tensor {t.name!r} names external data "
                             f"{info.location!r}, which is not a regular file in the "
                             f"model's folder")
    if tensors:
        ext.load_external_data_for_model(proto, folder)


def _tensors_of(graph: Any, depth: int = 0) -> list:
    """Every TensorProto of ``graph``: initializers and node attributes, subgraphs too."""
    if depth > 64:
        raise ValueError("omnitensor.onnx.load: subgraphs nested too deeply")
    out = list(graph.initializer)
    for node in graph.node:
        for a in node.attribute:
            out += ([a.t] if a.HasField("t") else []) + list(a.tensors)
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                out += _tensors_of(g, depth + 1)
    return out
