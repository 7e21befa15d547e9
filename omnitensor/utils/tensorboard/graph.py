"""``SummaryWriter.add_graph``: a model's graph as TensorBoard's ``GraphDef``.

The model runs once on the example input (in eval mode, without gradients) while the
profiler's torch-op listener (``omnitensor/profiler/torch_ops.py``) sees each torch-level
call: every outermost op becomes a node named, as torch's graphs are, by the module scope
it ran in (``Net/Linear[fc1]/aten::linear.3``) with the op as its ``op``
(``aten::linear``) and edges from the nodes that made its tensor inputs; inputs and
outputs are ``IO Node``\\ s (``input/input.0``, ``output/output.0``), parameters and buffers
``prim::GetAttr`` nodes in their module's scope (``Net/Linear[fc1]/weight``), tensors from
elsewhere ``prim::Constant``. Every node carries its ``_output_shapes``, so TensorBoard
shows tensor shapes on the edges, and its device.
"""
from __future__ import annotations

import itertools
import threading
from typing import Any

__all__ = ["graph_def"]


def _tensor_class() -> Any:
    from ...core.tensor import Tensor
    return Tensor


def _scopes(model: Any) -> dict[int, str]:
    """id(module) -> torch's scope string (``Net/Linear[fc1]``)."""
    root = type(model).__name__
    out = {id(model): root}
    for name, mod in model.named_modules():
        if not name:
            continue
        parent = model
        parts = [root]
        for part in name.split("."):
            parent = getattr(parent, part) if not part.isdigit() else parent[int(part)]
            parts.append(f"{type(parent).__name__}[{part}]")
        out.setdefault(id(mod), "/".join(parts))
    return out


class _Tracer:
    """A torch_ops listener building the node list of one forward call."""

    wants_modules = True

    def __init__(self, model: Any, inputs: tuple) -> None:
        self.Tensor = _tensor_class()
        self.scopes = _scopes(model)
        self.scope = [self.scopes[id(model)]]
        self.nodes: list[dict] = []
        self.made: dict[int, str] = {}  # id(tensor) -> the node that made it
        self.keep: list[Any] = []       # tensors whose ids are in ``made``
        self.depth = 0
        self.thread = threading.get_ident()
        self.ids = itertools.count()
        for name, t in itertools.chain(model.named_parameters(), model.named_buffers()):
            owner, _, leaf = name.rpartition(".")
            mod = model.get_submodule(owner) if owner else model
            self._add(f"{self.scopes[id(mod)]}/{leaf}", "prim::GetAttr", [], [t])
        for i, t in enumerate(inputs):
            if isinstance(t, self.Tensor):
                self._add(f"input/input.{i}", "IO Node", [], [t])

    def _add(self, name: str, op: str, inputs: list[str], outs: list) -> str:
        self.nodes.append({"name": name, "op": op, "inputs": inputs,
                           "shapes": [list(o.shape) for o in outs],
                           "device": str(outs[0].device) if outs else "cpu"})
        for o in outs:
            self.made[id(o)] = name
            self.keep.append(o)
        return name

    def _source(self, t: Any) -> str:
        name = self.made.get(id(t))
        if name is None:
            name = self._add(f"{self.scope[-1]}/constant.{next(self.ids)}", "prim::Constant",
                             [], [t])
        return name

    def _tensors(self, obj: Any) -> list:
        if isinstance(obj, self.Tensor):
            return [obj]
        if isinstance(obj, (tuple, list)):
            return [t for o in obj for t in self._tensors(o)]
        if isinstance(obj, dict):
            return [t for o in obj.values() for t in self._tensors(o)]
        return []

    def enter(self, name: str, args: tuple, kwargs: dict, kind: str = "op") -> Any:
        if threading.get_ident() != self.thread:
            return None
        self.depth += 1
        if self.depth > 1 or kind != "op":
            return None
        srcs = [self._source(t) for t in self._tensors(args) + self._tensors(kwargs)]
        return name, srcs

    def exit(self, token: Any, result: Any) -> None:
        if threading.get_ident() != self.thread:
            return
        self.depth -= 1
        if token is None:
            return
        name, srcs = token
        outs = self._tensors(result)
        if outs:  # an op giving no tensor (a query) is no node
            self._add(f"{self.scope[-1]}/{name}.{next(self.ids)}", name, srcs, outs)

    def module_enter(self, module: Any) -> Any:
        if threading.get_ident() != self.thread or self.depth:
            return None
        self.scope.append(self.scopes.get(id(module), type(module).__name__))
        return True

    def module_exit(self, token: Any) -> None:
        if token:
            self.scope.pop()

    def finish(self, result: Any) -> None:
        for i, t in enumerate(self._tensors(result)):
            self._add(f"output/output.{i}", "IO Node", [self._source(t)], [t])


def _trace(model: Any, inputs: tuple) -> list[dict]:
    from ...core.graph import no_grad_ctx
    from ...profiler import torch_ops
    tracer = _Tracer(model, inputs)
    was_training = model.training
    model.eval()
    torch_ops.add_listener(tracer)
    try:
        with no_grad_ctx():
            result = model(*inputs)
    finally:
        torch_ops.remove_listener(tracer)
        model.train(was_training)
    tracer.finish(result)
    return tracer.nodes


def _device(dev: str) -> str:
    kind, _, index = dev.partition(":")
    return f"/device:{kind.upper()}:{index or 0}"


def graph_def(model: Any, input_to_model: Any = None) -> Any:
    """The ``GraphDef`` of one call of ``model`` on ``input_to_model`` (a tensor, or a
    tuple/list of the positional arguments)."""
    from tensorboard.compat.proto import (attr_value_pb2, graph_pb2, node_def_pb2,
                                          tensor_shape_pb2, versions_pb2)
    from ...nn.module import Module
    if not isinstance(model, Module):
        raise TypeError(f"add_graph: model must be an nn.Module, got {type(model).__name__}")
    if input_to_model is None:
        inputs: tuple = ()
    elif isinstance(input_to_model, (tuple, list)):
        inputs = tuple(input_to_model)
    else:
        inputs = (input_to_model,)
    nodes = []
    for n in _trace(model, inputs):
        shapes = attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(shape=[
            tensor_shape_pb2.TensorShapeProto(
                dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in shape])
            for shape in n["shapes"]]))
        nodes.append(node_def_pb2.NodeDef(
            name=n["name"], op=n["op"], input=n["inputs"], device=_device(n["device"]),
            attr={"_output_shapes": shapes}))
    return graph_pb2.GraphDef(node=nodes, versions=versions_pb2.VersionDef(producer=22))
