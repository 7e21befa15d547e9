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

from ..compiler.ir import GraphFormatError
from ..core.device import Device, device as as_device
from ..core.ops.creation import asarray
from . import _program, _verify
from ._program import ProgramError
from ._traced import ScriptFunction, ScriptModule, _Entry, host_consts, loaded_module

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
         _restore_shapes: bool = False, *, max_work: Any = None,
         max_bytes: Any = None) -> ScriptModule:
    """Read a program written by :func:`save` and bind it to ``map_location`` (default: the
    device it was traced on). Refuses pickles, TorchScript archives, anything that is not a
    regular file or stream, and any graph that is not one user code could have run
    (:class:`ProgramError`; see ``_verify``). One call of the program may do ``max_work``
    units of work (elements touched plus multiply-adds) and allocate ``max_bytes`` bytes,
    and the file may decompress to ``max_bytes``; by default both grow with the file's
    size (``_verify.default_limits``): pass larger ones for a file you trust."""
    raw = _program.read_bytes(f)
    limits = _verify.default_limits(len(raw), max_work, max_bytes)
    meta, arrays = _program.read(raw, limits.bytes)
    dev = _target(map_location, _saved_device(meta))
    try:
        return _build(meta, arrays, dev, limits)
    except ProgramError:
        raise
    except GraphFormatError as e:
        raise ProgramError(f"omnitensor.jit.load: invalid program: {e}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError,
            OverflowError, ZeroDivisionError) as e:
        raise ProgramError(f"omnitensor.jit.load: invalid program ({type(e).__name__}: "
                           f"{str(e)[:200]})") from None


def _saved_device(meta: dict) -> str:
    try:
        device = meta["entries"][0]["graph"]["device"]
        return str(as_device(device))
    except (KeyError, IndexError, TypeError, ValueError):
        raise ProgramError("omnitensor.jit.load: invalid program: no graph with a device") \
            from None


def _build(meta: dict, arrays: dict, dev: Device, limits: "_verify.Limits") -> ScriptModule:
    from ..compiler.ir import Graph
    entries_meta = meta.get("entries")
    weights_meta = meta.get("weights")
    if not isinstance(entries_meta, list) or not entries_meta or \
            not isinstance(weights_meta, dict):
        raise ProgramError("omnitensor.jit.load: invalid program: missing entries")
    weights = {}
    for name, kind in weights_meta.items():
        if kind not in ("param", "buffer") or name not in arrays or \
                not all(name.split(".")):
            raise ProgramError(f"omnitensor.jit.load: invalid program: weight {name!r}")
        weights[name] = (kind, asarray(np.array(arrays[name], order="C"), device=dev))
    specs = {name: (kind, tuple(arrays[name].shape), arrays[name].dtype.name)
             for name, kind in weights_meta.items()}
    entries: dict[str, _Entry] = {}
    saved_device = None
    for em in entries_meta:
        gd = em["graph"]
        if gd.get("constants"):
            raise ProgramError("omnitensor.jit.load: invalid program: inline constants")
        graph = Graph.from_json(json.dumps(gd))
        if saved_device not in (None, graph.device):
            raise ProgramError("omnitensor.jit.load: invalid program: graphs of several "
                               "devices")
        saved_device = graph.device
        key = em["key"]
        consts_meta = em["consts"]
        consts = {}
        for inp in graph.inputs:
            if inp.kind == "const":
                name = consts_meta.get(str(inp.value.id))
                if name not in arrays:
                    raise ProgramError(f"omnitensor.jit.load: invalid program: constant "
                                       f"{inp.value.id} missing")
                consts[inp.value.id] = arrays[name]
        entries[key] = _checked_entry(graph, key, em["out_spec"], em["n_args"], consts,
                                      specs, limits)
    first_key, first = next(iter(entries.items()))
    mod = loaded_module(first, weights, first_key, meta.get("training", False) is True)
    mod._entries.update(entries)
    mod._templates = _read_templates(meta.get("templates", []), arrays, specs, limits)
    object.__setattr__(mod, "_checks", (specs, limits))
    return mod


def _spec_tensors(spec: Any, depth: int = 0) -> list:
    """The ``[shape, dtype]`` of each tensor of an argument or result spec (``spec_of``),
    checking its structure."""
    if depth > 64 or not isinstance(spec, dict) or len(spec) != 1:
        raise ProgramError(f"omnitensor.jit.load: invalid program: spec {str(spec)[:80]}")
    (tag, body), = spec.items()
    if tag == "T":
        if not (isinstance(body, list) and len(body) == 2 and isinstance(body[0], list)
                and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                        for d in body[0]) and isinstance(body[1], str)):
            raise ProgramError("omnitensor.jit.load: invalid program: tensor spec")
        return [body]
    if tag in ("tuple", "list") and isinstance(body, list):
        return [t for s in body for t in _spec_tensors(s, depth + 1)]
    if tag == "dict" and isinstance(body, list) and all(
            isinstance(kv, list) and len(kv) == 2 and isinstance(kv[0], str) for kv in body):
        return [t for _k, s in body for t in _spec_tensors(s, depth + 1)]
    if tag == "c" and (body is None or isinstance(body, (bool, int, float, str))):
        return []
    raise ProgramError(f"omnitensor.jit.load: invalid program: spec tag {tag!r}")


def _checked_entry(graph: Any, key: Any, out_spec: Any, n_args: Any,
                   consts: dict[int, np.ndarray], weights: dict[str, tuple],
                   limits: "_verify.Limits") -> _Entry:
    """One signature's entry, after every check ``_verify`` and the signature allow.
    ``weights``: the loaded module's ``name -> (kind, shape, dtype)``."""
    _program.validate(graph)
    if not isinstance(key, str):
        raise ProgramError("omnitensor.jit.load: invalid program: entry key")
    sig = json.loads(key)
    if not (isinstance(sig, list) and len(sig) == 3 and isinstance(sig[2], bool)):
        raise ProgramError("omnitensor.jit.load: invalid program: signature")
    n_pos = len(_spec_tensors(sig[0]))
    call = _spec_tensors(sig[0]) + _spec_tensors(sig[1])
    if n_args != n_pos:
        raise ProgramError("omnitensor.jit.load: invalid program: argument count")
    if len(_spec_tensors(out_spec)) != len(graph.outputs):
        raise ProgramError("omnitensor.jit.load: invalid program: the result structure "
                           "does not match the graph's outputs")
    for inp in graph.inputs:
        v = inp.value
        if inp.kind in ("param", "buffer"):
            if weights.get(inp.name, ("",))[0] != inp.kind:
                raise ProgramError(f"omnitensor.jit.load: invalid program: weight "
                                   f"{inp.name} missing")
            _kind, shape, dtype = weights[inp.name]
            if shape != tuple(v.shape) or dtype != v.dtype:
                raise ProgramError(f"omnitensor.jit.load: invalid program: weight "
                                   f"{inp.name} is {dtype}{list(shape)}, the graph reads "
                                   f"it as {v.dtype}{list(v.shape)}")
        elif inp.kind == "arg":
            k = _arg_position(inp.name, n_pos)
            if k >= len(call) or call[k] != [list(v.shape), v.dtype]:
                raise ProgramError(f"omnitensor.jit.load: invalid program: input "
                                   f"{inp.name} does not match the signature")
    checked, cost = _verify.verify(graph, consts, host_consts(graph), limits)
    entry = _Entry(checked, out_spec, consts)
    entry.n_args = n_pos
    entry.cost = cost
    return entry


def _arg_position(name: str, n_pos: int) -> int:
    """The flat position of the call argument input ``args[k]`` / ``kwargs[k]``."""
    if not ((name.startswith("args[") or name.startswith("kwargs[")) and name.endswith("]")
            and name[name.index("[") + 1:-1].isdigit()):
        raise ProgramError(f"omnitensor.jit.load: invalid program: input {name!r}")
    k = int(name[name.index("[") + 1:-1])
    return k + n_pos if name.startswith("kwargs[") else k


def _read_templates(raw: Any, arrays: dict, weights: dict[str, tuple],
                    limits: "_verify.Limits") -> list[dict]:
    """Templates, each checked by instantiating it once (batch 2) as a loaded entry."""
    from . import _generic
    out = []
    if not isinstance(raw, list):
        raise ProgramError("omnitensor.jit.load: invalid program: templates")
    for t in raw:
        consts = {int(vid): arrays[name] for vid, name in t["consts"].items()}
        tmpl = {"key": t["key"], "graph": t["graph"], "out_spec": t["out_spec"],
                "n_args": t["n_args"], "consts": consts}
        _generic.check_template(tmpl)
        entry_for(tmpl, 2, weights, limits)
        out.append(tmpl)
    return out


def entry_for(tmpl: dict, n: int, weights: dict[str, tuple],
              limits: "_verify.Limits") -> _Entry:
    """The checked entry of template ``tmpl`` at batch size ``n``: it may do ``n / 2``
    times the work and allocation of a batch of 2 (its inputs grow with ``n`` too)."""
    from ..compiler.ir import Graph
    from . import _generic
    graph = Graph.from_json(json.dumps(_generic.instantiate(tmpl["graph"], n)))
    key = json.dumps(_generic.instantiate(tmpl["key"], n), sort_keys=True)
    consts = {i.value.id: tmpl["consts"].get(i.value.id) for i in graph.inputs
              if i.kind == "const"}
    if any(a is None for a in consts.values()):
        raise ProgramError("omnitensor.jit.load: invalid program: a template's constant is "
                           "missing")
    return _checked_entry(graph, key, _generic.instantiate(tmpl["out_spec"], n),
                          tmpl["n_args"], consts, weights, limits.scaled(max(1.0, n / 2)))
