"""``omnitensor.jit.save`` / ``omnitensor.jit.load``: a traced module as one file.

The file (see :mod:`._program`) holds each captured graph as JSON and the weights and
constant arrays in safetensors; loading never unpickles and never runs code from the file:
the graph is validated against the portable primitive set and replayed by
``compiler.replay`` on the device ``map_location`` names (every backend implements the same
primitives, so a program traced on cpu runs on opencl:0 or sycl:0 and back).
"""
from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np

from ..core.device import Device, device as as_device
from ..core.ops.creation import asarray
from . import _program
from ._program import ProgramError
from ._traced import ScriptFunction, ScriptModule, _Entry, loaded_module

__all__ = ["save", "load", "ProgramError"]


def _host(t: Any) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy())


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Write the traced module or function ``m`` to ``f`` (a path or a binary file)."""
    if not isinstance(m, (ScriptModule, ScriptFunction)):
        raise TypeError(f"omnitensor.jit.save: expected a module from omnitensor.jit.trace "
                        f"or omnitensor.jit.script, got {type(m).__name__} (save an "
                        f"nn.Module's weights with omnitensor.save(model.state_dict()))")
    if not m._entries:
        raise ValueError("omnitensor.jit.save: nothing was captured yet: call the scripted "
                         "module once (or use omnitensor.jit.trace) before saving")
    arrays: dict[str, np.ndarray] = {}
    weights: dict[str, str] = {}
    entries = []
    for k, (key, e) in enumerate(m._entries.items()):
        g = copy.copy(e.graph)
        g.constants = {}
        g.breaks, g.break_regions = [], []
        consts = {}
        for inp in e.graph.inputs:
            if inp.kind in ("param", "buffer"):
                if inp.name not in weights:
                    if not isinstance(m, ScriptModule):
                        raise ValueError(f"omnitensor.jit.save: {inp.name} belongs to no "
                                         f"module")
                    weights[inp.name] = inp.kind
                    arrays[inp.name] = _host(m._tensor_of(inp))
            elif inp.kind == "const":
                name = f"__const__.{k}.{inp.value.id}"
                consts[str(inp.value.id)] = name
                arrays[name] = e.consts[inp.value.id]
        entries.append({"key": key, "graph": json.loads(g.to_json()),
                        "out_spec": e.out_spec, "n_args": e.n_args, "consts": consts})
    templates = []
    for j, t in enumerate(_templates_of(m)):
        names = {}
        for vid, arr in t["consts"].items():
            names[str(vid)] = f"__tconst__.{j}.{vid}"
            arrays[names[str(vid)]] = arr
        templates.append(dict(t, consts=names))
    meta = {"kind": "module" if isinstance(m, ScriptModule) else "function",
            "training": bool(getattr(m, "training", False)), "weights": weights,
            "entries": entries, "templates": templates}
    _program.write(f, meta, arrays)


def _resize(args: Any, kwargs: dict, b: int, n: int) -> tuple:
    """The arguments with every tensor whose first axis is ``b`` long tiled to ``n``."""
    from ..core.tensor import Tensor

    def fn(t: Any) -> Any:
        if isinstance(t, Tensor):
            if t.ndim == 0 or t.shape[0] != b:
                return t
            arr = _host(t)
            return asarray(np.array(np.take(arr, np.arange(n) % b, axis=0), order="C"),
                           device=t.device)
        if isinstance(t, tuple):
            return tuple(fn(x) for x in t)
        if isinstance(t, list):
            return [fn(x) for x in t]
        if isinstance(t, dict):
            return {k: fn(v) for k, v in t.items()}
        return t
    return fn(args), fn(kwargs)


def _templates_of(m: Any) -> list[dict]:
    """Batch-generic templates (``_generic``) of ``m``'s captured signatures, made by
    capturing it at two more batch sizes; none for a program that cannot be generalized
    (it stays specialized), a module in training mode (a capture runs the model, which would
    update its running statistics) or a loaded program (its templates are kept)."""
    from . import _generic
    from ._traced import _flat, _key, capture
    if m._python is None:
        return [dict(t, consts=dict(t["consts"])) for t in m._templates]
    training = bool(getattr(m, "training", False))
    if training:
        return []
    out = []
    for key, e in list(m._entries.items()):
        if e.example is None:
            continue
        args, kwargs = e.example
        flat = _flat((args, kwargs), [])
        if not flat or flat[0].ndim == 0:
            continue
        b = flat[0].shape[0]
        sizes = [b, b + 3, b + 7] if b >= 2 else [2, 5, 9]
        entries, keys = [], []
        try:
            for n in sizes:
                if n == b:
                    entries.append(e)
                    keys.append(key)
                    continue
                a2, k2 = _resize(args, kwargs, b, n)
                _, e2 = capture(m._python, a2, k2, "omnitensor.jit.save")
                entries.append(e2)
                keys.append(_key(a2, k2, training))
            t = _generic.generalize(entries, keys, sizes)
        except Exception:  # noqa: BLE001 - any failure: the program stays specialized
            continue
        t["consts"] = dict(entries[0].consts)
        out.append(t)
    return out


def _target(map_location: Any, saved: str) -> Device:
    if map_location is None:
        return as_device(saved)
    if isinstance(map_location, (str, Device)):
        return as_device(map_location)
    raise TypeError(f"omnitensor.jit.load: map_location must be a device or a device "
                    f"string ('cpu', 'opencl:0', 'sycl:0'), got "
                    f"{type(map_location).__name__}")


def load(f: Any, map_location: Any = None, _extra_files: Any = None,
         _restore_shapes: bool = False) -> ScriptModule:
    """Read a program written by :func:`save` and bind it to ``map_location`` (default: the
    device it was traced on). Refuses pickles, TorchScript archives and anything whose
    graph names an op outside the portable primitives (:class:`ProgramError`)."""
    from ..compiler.ir import Graph
    meta, arrays = _program.read(f)
    try:
        entries_meta = list(meta["entries"])
        weights_meta = dict(meta["weights"])
    except (KeyError, TypeError):
        raise ProgramError("omnitensor.jit.load: invalid program: missing entries") from None
    if not entries_meta:
        raise ProgramError("omnitensor.jit.load: invalid program: no graph")
    entries: dict[str, _Entry] = {}
    saved_device = "cpu"
    for em in entries_meta:
        try:
            gd = em["graph"]
            if gd.get("constants"):
                raise ProgramError("omnitensor.jit.load: invalid program: inline constants")
            graph = Graph.from_json(json.dumps(gd))
            out_spec, n_args, consts_meta = em["out_spec"], int(em["n_args"]), em["consts"]
            key = str(em["key"])
        except ProgramError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ProgramError(f"omnitensor.jit.load: invalid program graph ({e})") from None
        _program.validate(graph)
        saved_device = graph.device
        consts = {}
        for inp in graph.inputs:
            if inp.kind == "const":
                name = consts_meta.get(str(inp.value.id))
                if name not in arrays:
                    raise ProgramError(f"omnitensor.jit.load: invalid program: constant "
                                       f"{inp.value.id} missing")
                consts[inp.value.id] = arrays[name]
            elif inp.kind in ("param", "buffer"):
                if inp.name not in arrays or inp.name not in weights_meta:
                    raise ProgramError(f"omnitensor.jit.load: invalid program: weight "
                                       f"{inp.name} missing")
            elif inp.kind == "arg":
                nm = inp.name
                if not ((nm.startswith("args[") or nm.startswith("kwargs[")) and
                        nm.endswith("]") and nm[nm.index("[") + 1:-1].isdigit()):
                    raise ProgramError(f"omnitensor.jit.load: invalid program: input {nm!r}")
        entry = _Entry(graph, out_spec, consts)
        entry.n_args = n_args
        entries[key] = entry
    dev = _target(map_location, saved_device)
    weights = {}
    for name, kind in weights_meta.items():
        if kind not in ("param", "buffer") or name not in arrays:
            raise ProgramError(f"omnitensor.jit.load: invalid program: weight {name!r}")
        weights[name] = (kind, asarray(np.array(arrays[name], order="C"), device=dev))
    first_key, first = next(iter(entries.items()))
    mod = loaded_module(first, weights, first_key, bool(meta.get("training", False)))
    mod._entries.update(entries)
    mod._templates = _read_templates(meta.get("templates", []), arrays)
    return mod


def _read_templates(raw: Any, arrays: dict) -> list[dict]:
    """Templates, each checked by instantiating it once and validating that graph."""
    from ..compiler.ir import Graph
    from . import _generic
    out = []
    if not isinstance(raw, list):
        raise ProgramError("omnitensor.jit.load: invalid program: templates")
    for t in raw:
        try:
            consts = {int(vid): arrays[name] for vid, name in t["consts"].items()}
            tmpl = {"key": t["key"], "graph": t["graph"], "out_spec": t["out_spec"],
                    "n_args": int(t["n_args"]), "consts": consts}
            graph = Graph.from_json(json.dumps(_generic.instantiate(tmpl["graph"], 2)))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ProgramError(f"omnitensor.jit.load: invalid program template ({e})") \
                from None
        _program.validate(graph)
        out.append(tmpl)
    return out
