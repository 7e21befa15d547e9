"""``omnitensor.onnx.export``: torch's signature, written from the graph ``omnitensor.compile``
captures (one capture, one IR).

    omnitensor.onnx.export(model, (x,), "model.onnx", input_names=["x"],
                           output_names=["y"], dynamic_axes={"x": {0: "batch"}})

The model runs once under the capture (``compiler.capture.trace`` with hooks off, so the
graph holds only portable backend primitives) in eval mode and without autograd; composite
regions become their ONNX ops and the remaining primitives map one by one (``_emit``).
Parameters and buffers become initializers named by their module path (``fc1.weight``).
Dynamic axes: see ``_dynamic`` (the model is captured once more per dynamic axis and once
for validation, with the example inputs tiled along the axis). The model is built and checked
with the ``onnx`` package (``onnx.checker.check_model(full_check=True)``).
"""
from __future__ import annotations

import inspect
import os
from typing import Any, Mapping, Sequence

import numpy as np

from ..core.tensor import Tensor
from ..compiler.capture import tensors_in as _flat
from ._builder import Builder
from ._dynamic import dim_label, fit, materialize
from ._emit import Emitter, Unmappable
from ._prims import onnx_dtype

__all__ = ["export", "ONNXProgram", "Unmappable", "DEFAULT_OPSET", "MIN_OPSET"]

DEFAULT_OPSET = 18
MIN_OPSET = 17

#: torch.onnx.export keywords accepted for compatibility; what each changes here
_IGNORED = ("custom_translation_table", "report", "optimize", "verify", "profile",
            "dump_exported_program", "artifacts_dir", "keep_initializers_as_inputs",
            "do_constant_folding", "operator_export_type", "custom_opsets",
            "export_modules_as_functions", "autograd_inlining", "external_data")


class ONNXProgram:
    """What ``export`` returns (torch's ``ONNXProgram``, in part): ``model_proto`` and
    ``save(path)``."""

    def __init__(self, model_proto: Any) -> None:
        self.model_proto = model_proto

    def save(self, destination: Any) -> None:
        _write(self.model_proto, destination)

    def __repr__(self) -> str:
        g = self.model_proto.graph
        return (f"ONNXProgram({len(g.node)} nodes, inputs {[i.name for i in g.input]}, "
                f"outputs {[o.name for o in g.output]})")


def _write(proto: Any, f: Any) -> None:
    data = proto.SerializeToString()
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    elif hasattr(f, "write"):
        f.write(data)
    else:
        raise TypeError(f"omnitensor.onnx.export: f must be a path or a writable file-like "
                        f"object, got {type(f).__name__}")


# ------------------------------------------------------------------------ arguments
def _map(obj: Any, fn: Any) -> Any:
    if isinstance(obj, Tensor):
        return fn(obj)
    if isinstance(obj, tuple):
        return tuple(_map(o, fn) for o in obj)
    if isinstance(obj, list):
        return [_map(o, fn) for o in obj]
    if isinstance(obj, dict):
        return {k: _map(v, fn) for k, v in obj.items()}
    return obj


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy())


def _default_names(model: Any, args: tuple, n: int) -> list[str]:
    fwd = getattr(model, "forward", model)
    try:
        params = [p for p in inspect.signature(fwd).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if len(params) >= len(args) and all(isinstance(a, Tensor) for a in args) and \
            len(args) == n:
        return [p.name for p in params[:n]]
    return [f"input_{i}" for i in range(n)]


def _parse_dynamic(dynamic_axes: Any, in_names: list[str], out_names: list[str],
                   in_shapes: list[tuple]) -> tuple[dict, dict, dict]:
    """``({input index: {axis: symbol}}, {output name: {axis: symbol}},
    {symbol: (input name, axis)})``."""
    per_in: dict[int, dict[int, str]] = {}
    per_out: dict[str, dict[int, str]] = {}
    sources: dict[str, tuple[str, int]] = {}
    if not dynamic_axes:
        return per_in, per_out, sources
    if not isinstance(dynamic_axes, Mapping):
        raise TypeError("omnitensor.onnx.export: dynamic_axes must be a dict {name: [axes]} "
                        "or {name: {axis: 'symbol'}}")
    for key, spec in dynamic_axes.items():
        if isinstance(spec, Mapping):
            axes = {int(a): str(s) for a, s in spec.items()}
        elif isinstance(spec, (list, tuple)):
            axes = {int(a): f"{key}_dynamic_axes_{i + 1}" for i, a in enumerate(spec)}
        else:
            raise TypeError(f"omnitensor.onnx.export: dynamic_axes[{key!r}] must be a list "
                            f"of axes or a dict {{axis: name}}, got {type(spec).__name__}")
        if key in in_names:
            k = in_names.index(key)
            nd = len(in_shapes[k])
            fixed = {}
            for a, s in axes.items():
                if not -nd <= a < nd:
                    raise ValueError(f"omnitensor.onnx.export: dynamic_axes[{key!r}]: axis "
                                     f"{a} is out of range for an input of {nd} dims")
                fixed[a % nd] = s
                sources.setdefault(s, (key, a % nd))
            per_in[k] = fixed
        elif key in out_names:
            per_out[key] = axes
        else:
            raise ValueError(f"omnitensor.onnx.export: dynamic_axes names {key!r}, which is "
                             f"neither an input ({in_names}) nor an output ({out_names})")
    return per_in, per_out, sources


def _resized(args: Any, kwargs: dict, per_in: dict, sizes: dict[str, int]) -> tuple:
    """The example arguments tiled (cyclically) along each dynamic axis to ``sizes``."""
    from ..core.ops.creation import asarray
    counter = [0]

    def fn(t: Tensor) -> Tensor:
        k = counter[0]
        counter[0] += 1
        axes = per_in.get(k)
        if not axes:
            return t
        arr = _host(t)
        for a, s in axes.items():
            arr = np.take(arr, np.arange(sizes[s]) % max(arr.shape[a], 1), axis=a)
        return asarray(np.array(arr, order="C"), device=t.device)
    new_args = _map(args, fn)
    new_kwargs = _map(kwargs, fn)
    return new_args, new_kwargs


# ------------------------------------------------------------------------ capture
class _Layers:
    """Which module ran each captured node (for error messages): forward hooks on every
    submodule note the recorder's node count on entry and exit."""

    def __init__(self, model: Any) -> None:
        self.spans: list[tuple[int, int, str, str]] = []
        self.handles: list[Any] = []
        if not hasattr(model, "named_modules"):
            return
        from ..core import capture_hooks
        for name, mod in model.named_modules():
            if not name:
                continue
            starts: list[int] = []

            def pre(m: Any, a: Any, _s: list = starts) -> None:
                rec = capture_hooks.active()
                _s.append(len(getattr(rec, "nodes", ())))

            def post(m: Any, a: Any, out: Any, _s: list = starts, _n: str = name) -> None:
                rec = capture_hooks.active()
                if _s:
                    self.spans.append((_s.pop(), len(getattr(rec, "nodes", ())), _n,
                                       type(m).__name__))
            self.handles.append(mod.register_forward_pre_hook(pre))
            self.handles.append(mod.register_forward_hook(post))

    def where(self, i: int) -> str:
        best = None
        for s, e, n, t in self.spans:
            if s <= i < e and (best is None or s >= best[0]):
                best = (s, e, n, t)
        return f" in layer '{best[2]}' ({best[3]})" if best else ""

    def close(self) -> None:
        for h in self.handles:
            h.remove()


def _capture(model: Any, args: tuple, kwargs: dict) -> tuple[Any, Any, _Layers]:
    """One capture (hooks off, autograd off): (result, graph, layers)."""
    from ..compiler import capture
    from ..core.graph import no_grad_ctx
    layers = _Layers(model)
    try:
        with no_grad_ctx():
            result, graph = capture.trace(model, args, kwargs, hooks=False)
    finally:
        layers.close()
    return result, graph, layers


def _emit_one(model: Any, args: tuple, kwargs: dict, opset: int, in_names: list[str],
              out_names: list[str] | None) -> tuple[Builder, Any]:
    from ..core.device import device as as_device
    result, graph, layers = _capture(model, args, kwargs)
    arrays = graph.input_arrays
    outs = _flat(result, [])
    if not outs:
        raise ValueError("omnitensor.onnx.export: the model returned no tensor")
    if out_names is None:
        out_names = ["output"] if len(outs) == 1 else [f"output_{i}" for i in range(len(outs))]
    out_names = list(out_names) + [f"output_{i}" for i in range(len(out_names), len(outs))]
    be = as_device(graph.device).backend
    named: dict[str, Any] = {}
    if hasattr(model, "named_parameters"):
        named.update(dict(model.named_parameters()))
        named.update(dict(model.named_buffers()))

    def array_of(inp: Any) -> np.ndarray:
        if inp.kind in ("param", "buffer") and inp.name in named:
            return _host(named[inp.name])
        if inp.value.id in graph.constants:
            return np.asarray(graph.constants[inp.value.id])
        arr = arrays[inp.value.id]
        return arr if isinstance(arr, np.ndarray) else np.asarray(be.to_numpy(arr))

    def input_name(inp: Any) -> str | None:
        nm = inp.name
        if nm.startswith("args[") or nm.startswith("kwargs["):
            k = int(nm[nm.index("[") + 1:-1])
            if nm.startswith("kwargs["):
                k += len(_flat(args, []))
            return in_names[k] if k < len(in_names) else None
        return None

    b = Builder()
    flat_in = _flat((args, kwargs), [])
    for nm, t in zip(in_names, flat_in):
        b.inputs.append((nm, t.dtype.name, tuple(t.shape)))
    em = Emitter(graph, b, opset, input_name, array_of, layers.where)
    em.run(out_names[:len(outs)])
    for nm, t in zip(out_names, outs):
        b.outputs.append((nm, t.dtype.name, tuple(t.shape)))
    parents = {rid: r.parent for rid, r in graph.regions.items()}

    def covered(rid: int | None) -> bool:     # inside a region exported as one ONNX op
        while rid is not None:
            if rid in em.done:
                return True
            rid = parents.get(rid)
        return False
    breaks = [msg for msg, rid in zip(graph.breaks, graph.break_regions) if not covered(rid)]
    if breaks:
        raise Unmappable(f"omnitensor.onnx.export: the model reads tensor values on the host "
                         f"while it runs ({breaks[0]}); data-dependent Python cannot be "
                         f"exported")
    return b, result


# ------------------------------------------------------------------------ export
def export(model: Any, args: Any = (), f: Any = None, *, kwargs: dict | None = None,
           verbose: bool | None = None, input_names: Sequence[str] | None = None,
           output_names: Sequence[str] | None = None, opset_version: int | None = None,
           dynamo: bool = True, dynamic_shapes: Any = None, export_params: bool = True,
           dynamic_axes: Any = None, training: Any = None, **ignored: Any) -> ONNXProgram:
    """Export ``model`` (an ``nn.Module`` or a function of tensors) called on ``args`` as an
    ONNX model written to ``f`` (a path or a binary file-like; None: only returned).

    torch's signature. ``input_names``/``output_names`` name the flattened tensor inputs
    and outputs; ``dynamic_axes`` (``{"x": {0: "batch"}}`` or ``{"x": [0]}``) makes axes
    dynamic; ``opset_version`` (default 18, at least 17); ``training`` (torch's
    ``TrainingMode``: EVAL by default, as torch: the model is put in eval mode for the
    export and restored); ``export_params=False`` makes the weights graph inputs. ``dynamo``,
    ``do_constant_folding``, ``external_data``, ``optimize``, ``verify`` and the rest of
    torch's keywords are accepted and change nothing (one exporter here). ``dynamic_shapes``
    (torch.export's form) is refused: use ``dynamic_axes``. Returns an
    :class:`ONNXProgram`."""
    try:
        import onnx
    except ImportError as e:
        raise ImportError("omnitensor.onnx.export needs the onnx package: pip install onnx") \
            from e
    opset = _check_call(model, opset_version, dynamic_shapes, ignored)
    args, kwargs = _call_args(args, kwargs)
    flat_in = _flat((args, kwargs), [])
    in_names = _input_names(model, args, len(flat_in), input_names)
    mode = str(getattr(training, "name", training)).upper()
    was_training = getattr(model, "training", None)
    set_mode = hasattr(model, "train") and was_training is not None and mode != "PRESERVE"
    if set_mode:
        model.train(mode == "TRAINING")
    try:
        base, _ = _emit_one(model, args, kwargs, opset, in_names,
                            list(output_names) if output_names else None)
        out_names = [o[0] for o in base.outputs]
        dynamic = _parse_dynamic(dynamic_axes, in_names, out_names,
                                 [tuple(t.shape) for t in flat_in])
        builders, sizes = _capture_resized(model, args, kwargs, opset, in_names, out_names,
                                           base, flat_in, dynamic)
    finally:
        if set_mode:
            model.train(bool(was_training))
    proto = _model_proto(builders, sizes, dynamic, type(model).__name__, opset,
                         export_params)
    onnx.checker.check_model(proto, full_check=True)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    if f is not None:
        _write(proto, f)
    _ = dynamo
    return ONNXProgram(proto)


def _check_call(model: Any, opset_version: int | None, dynamic_shapes: Any,
                ignored: dict) -> int:
    """Refuse what export cannot do; return the opset."""
    import onnx
    unknown = sorted(set(ignored) - set(_IGNORED))
    if unknown:
        raise TypeError(f"omnitensor.onnx.export() got unexpected keyword argument(s) "
                        f"{', '.join(unknown)}")
    if dynamic_shapes is not None:
        raise NotImplementedError("omnitensor.onnx.export: dynamic_shapes (torch.export's "
                                  "form) is not supported; pass dynamic_axes={'x': {0: "
                                  "'batch'}} instead")
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= onnx.defs.onnx_opset_version():
        raise ValueError(f"omnitensor.onnx.export: opset_version {opset} is not supported "
                         f"(supported: {MIN_OPSET} to {onnx.defs.onnx_opset_version()})")
    if not callable(model):
        raise TypeError(f"omnitensor.onnx.export: model must be an nn.Module or a callable, "
                        f"got {type(model).__name__}")
    return opset


def _call_args(args: Any, kwargs: dict | None) -> tuple[tuple, dict]:
    """torch's forms: one Tensor, a list or tuple, a trailing dict of keyword arguments."""
    if isinstance(args, Tensor):
        args = (args,)
    elif isinstance(args, list):
        args = tuple(args)
    elif not isinstance(args, tuple):
        raise TypeError(f"omnitensor.onnx.export: args must be a tuple of inputs (or one "
                        f"Tensor), got {type(args).__name__}")
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict) and not kwargs:
        args, kwargs = args[:-1], dict(args[-1])      # torch: a trailing dict is kwargs
    return args, kwargs


def _input_names(model: Any, args: tuple, n_in: int,
                 input_names: Sequence[str] | None) -> list[str]:
    """The given names, completed by the defaults, checked unique."""
    in_names = list(input_names or [])
    if len(in_names) > n_in:
        raise ValueError(f"omnitensor.onnx.export: {len(in_names)} input_names for {n_in} "
                         f"tensor inputs")
    in_names += _default_names(model, args, n_in)[len(in_names):]
    if len(set(in_names)) != len(in_names):
        raise ValueError(f"omnitensor.onnx.export: input names must be unique, got "
                         f"{in_names}")
    return in_names


def _capture_resized(model: Any, args: tuple, kwargs: dict, opset: int, in_names: list,
                     out_names: list, base: Builder, flat_in: list,
                     dynamic: tuple) -> tuple[list, list]:
    """With dynamic axes, the model captured again at other sizes of each (``_dynamic``
    fits the integer constants across them): the builders and their sizes, the base's
    first. Without, just the base."""
    per_in, _, sources = dynamic
    if not sources:
        return [base], []
    builders = [base]
    base_sizes = {s: flat_in[in_names.index(i)].shape[a] for s, (i, a) in sources.items()}
    if any(v < 2 for v in base_sizes.values()):
        # size-1 axes broadcast: capture the base again at size 2
        base_sizes = {s: max(v, 2) for s, v in base_sizes.items()}
        a2, k2 = _resized(args, kwargs, per_in, base_sizes)
        builders[0] = _emit_one(model, a2, k2, opset, in_names, out_names)[0]
    sizes = [base_sizes]
    sizes += [dict(base_sizes, **{s: base_sizes[s] + 3}) for s in sources]
    sizes.append({s: v + 7 for s, v in base_sizes.items()})
    for sz in sizes[1:]:
        a2, k2 = _resized(args, kwargs, per_in, sz)
        builders.append(_emit_one(model, a2, k2, opset, in_names, out_names)[0])
    return builders, sizes


def _model_proto(builders: list, sizes: list, dynamic: tuple, name: str, opset: int,
                 export_params: bool) -> Any:
    """The ONNX ModelProto of the base capture, its dynamic dimensions labelled."""
    from onnx import helper, numpy_helper
    base = builders[0]
    per_in, per_out, sources = dynamic
    fitted = fit(builders, sizes) if sources else {
        k: np.asarray(v.values, dtype=np.int64) for k, v in base.ints.items()}
    if sources:
        pre_nodes, int_consts = materialize(base, fitted, sources)
    else:
        pre_nodes, int_consts = [], {k: (v.reshape(()) if base.ints[k].scalar else v)
                                     for k, v in fitted.items()}

    def value_info(name: str, dtype: str, dims: list) -> Any:
        return helper.make_tensor_value_info(name, onnx_dtype(dtype), dims)

    inputs = []
    for k, (nm, dt, shape) in enumerate(base.inputs):
        axes = per_in.get(k, {})
        inputs.append(value_info(nm, dt, [axes.get(a, d) for a, d in enumerate(shape)]))
    outputs = [value_info(nm, dt, _output_dims(builders, sizes, per_out, j, nm, len(shape)))
               for j, (nm, dt, shape) in enumerate(base.outputs)]
    nodes = [helper.make_node(n.op_type, list(n.inputs), list(n.outputs), **dict(n.attrs))
             for n in list(pre_nodes) + base.nodes]
    # only what a node reads: constants read inside regions exported as one op are dropped
    used = {i for n in nodes for i in n.input}
    inits = [numpy_helper.from_array(np.array(v, order="C"), k)
             for k, v in list(base.consts.items()) + list(int_consts.items())
             if (k not in fitted or k in int_consts) and k in used]
    params = {k: v for k, v in base.params.items() if k in used}
    if export_params:
        inits += [numpy_helper.from_array(np.array(v, order="C"), k) for k, v in params.items()]
    else:
        inputs += [value_info(k, v.dtype.name, list(v.shape)) for k, v in params.items()]
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    opsets = [helper.make_opsetid("", opset)]
    return helper.make_model(graph, opset_imports=opsets, producer_name="omnitensor",
                             ir_version=helper.find_min_ir_version_for(opsets))


def _output_dims(builders: list, sizes: list, per_out: dict, j: int, nm: str,
                 ndim: int) -> list:
    """Output ``j``'s dimensions: sizes, or labels of the axes that vary with an input's
    (named by ``dynamic_axes`` where it names them)."""
    dims = []
    for a in range(ndim):
        lab = dim_label([b.outputs[j][2][a] for b in builders], sizes or [{}])
        named = per_out.get(nm, {})
        if a in named or (a - ndim) in named:
            lab = named.get(a, named.get(a - ndim))
        dims.append(f"{nm}_dim_{a}" if lab == "?" else lab)
    return dims
