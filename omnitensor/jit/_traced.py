"""Traced and scripted modules: a captured graph replayed by ``compiler.replay``.

``trace(fn, example_inputs)`` runs ``fn`` once under the capture (``capture.trace`` with
hooks off, so the graph holds only the portable primitives every backend implements) and
returns a module that replays that graph. A graph is specialized to the signature it was
captured for (argument shapes, dtypes, device, non-tensor arguments, training flag):

* a traced module that still has its Python model captures again for a new signature (one
  graph per signature, as ``omnitensor.compile`` does), so it runs on other shapes with the
  control flow the example took, like torch's traced modules;
* a saved program (no Python code) runs every batch size when ``save`` could fit one graph
  template over three batch sizes (see ``_generic``), else only the signatures it was saved
  with, and says so for any other.

Replay has no autograd: when gradients are wanted (grad mode on and a parameter or input
requires grad) an in-session module runs its Python model eagerly instead, so training
through a traced module stays correct; a loaded program refuses. Anything the capture cannot
hold (a host read: ``.item()``, ``bool(tensor)`` in an ``if``/``while``, ``.tolist()``; a
data-dependent shape) is a clear error naming the construct and the user's line.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Iterator

import numpy as np

from ..core.device import device as as_device
from ..core.dtypes import as_dtype
from ..core.graph import is_grad_enabled, no_grad_ctx
from ..core.tensor import Tensor, _make
from ..compiler.capture import tensors_in as _flat
from ..nn.module import Module
from ..nn.parameter import Parameter
from ._retarget import host_consts, retarget

__all__ = ["ScriptModule", "ScriptFunction", "TracedModule", "TracingError", "trace",
           "script", "is_tracing"]

_TRACING = [False]


class TracingError(RuntimeError):
    """The function does something a captured graph cannot replay."""


def is_tracing() -> bool:
    """True while :func:`trace` or a scripted module's first call captures the model."""
    return _TRACING[0]


# ------------------------------------------------------------------------ structure
def spec_of(obj: Any) -> Any:
    """A JSON-able description of a (nested) argument or result; tensors as their
    shape and dtype (a graph replays on any device), other leaves as their values."""
    if isinstance(obj, Tensor):
        return {"T": [list(obj.shape), obj.dtype.name]}
    if isinstance(obj, tuple):
        return {"tuple": [spec_of(o) for o in obj]}
    if isinstance(obj, list):
        return {"list": [spec_of(o) for o in obj]}
    if isinstance(obj, dict):
        return {"dict": [[str(k), spec_of(v)] for k, v in obj.items()]}
    if isinstance(obj, (bool, int, float, str, type(None))):
        return {"c": obj}
    raise TracingError(f"omnitensor.jit: cannot trace an argument or result of type "
                       f"{type(obj).__name__} (tensors, numbers, strings, None and "
                       f"tuples/lists/dicts of them)")


def rebuild(spec: Any, tensors: Iterator[Tensor]) -> Any:
    if "T" in spec:
        return next(tensors)
    if "tuple" in spec:
        return tuple(rebuild(s, tensors) for s in spec["tuple"])
    if "list" in spec:
        return [rebuild(s, tensors) for s in spec["list"]]
    if "dict" in spec:
        return {k: rebuild(s, tensors) for k, s in spec["dict"]}
    return spec["c"]


def _key(args: tuple, kwargs: dict, training: bool) -> str:
    return json.dumps([spec_of(args), spec_of(kwargs), bool(training)], sort_keys=True)


def _describe(key: str) -> str:
    args, kwargs, training = json.loads(key)

    def show(s: Any) -> str:
        if "T" in s:
            shape, dt = s["T"]
            return f"Tensor{tuple(shape)} {dt}"
        if "tuple" in s or "list" in s:
            return "(" + ", ".join(show(x) for x in s.get("tuple", s.get("list"))) + ")"
        if "dict" in s:
            return "{" + ", ".join(f"{k}: {show(v)}" for k, v in s["dict"]) + "}"
        return repr(s["c"])
    text = show(args)
    if kwargs["dict"]:
        text += " with " + ", ".join(f"{k}={show(v)}" for k, v in kwargs["dict"])
    return text + (" in training mode" if training else "")


# ------------------------------------------------------------------------ one graph
class _Entry:
    """One captured signature: its graph, the result's structure, constants, plans."""

    def __init__(self, graph: Any, out_spec: Any, consts: dict[int, np.ndarray]) -> None:
        self.graph = graph
        self.out_spec = out_spec
        self.consts = consts                  # host copies of "const" inputs, by value id
        self.host = host_consts(graph)
        self.plans: dict[str, tuple[Any, dict[int, Any]]] = {}

    def plan(self, device: str) -> tuple[Any, dict[int, Any]]:
        if device not in self.plans:
            from ..compiler import replay
            g = self.graph if device == self.graph.device else retarget(self.graph, device)
            dev = as_device(device)
            be = dev.backend
            consts = {vid: (a if vid in self.host else be.from_numpy(np.array(a, order="C"),
                                                                     dev.index or 0))
                      for vid, a in self.consts.items()}
            self.plans[device] = (replay.build_plan(g, passes=()), consts)
        return self.plans[device]

    def run(self, flat: list[Tensor], tensor_of: Callable[[Any], Tensor], device: str) -> Any:
        plan, consts = self.plan(device)
        dev = as_device(device)
        inputs = []
        for inp in self.graph.inputs:
            if inp.kind == "arg":
                k = int(inp.name[inp.name.index("[") + 1:-1])
                if inp.name.startswith("kwargs["):
                    k += self.n_args
                t = flat[k]
            elif inp.kind == "const":
                inputs.append(consts[inp.value.id])
                continue
            else:
                t = tensor_of(inp)
            if t.device != dev:
                raise RuntimeError(f"omnitensor.jit: {inp.kind} {inp.name} is on {t.device}, "
                                   f"the call runs on {dev}: move the module and its inputs "
                                   f"to one device")
            v = inp.value
            if tuple(t.shape) != tuple(v.shape) or t.dtype.name != v.dtype:
                # (the graph's primitives were planned for these shapes: a weight replaced
                # by one of another shape would be read out of bounds)
                raise RuntimeError(f"omnitensor.jit: {inp.kind} {inp.name} is "
                                   f"{t.dtype.name}{list(t.shape)}, the program was traced "
                                   f"for {v.dtype}{list(v.shape)}")
            inputs.append(t._data)
        if self.cost is None:
            arrays = plan(inputs)
        else:
            arrays = _replay_loaded(plan, inputs, dev)
        outs = [_make(a, dev, as_dtype(v.dtype)) for a, v in zip(arrays, self.graph.outputs)]
        return rebuild(self.out_spec, iter(outs))

    #: what one call of a loaded entry does (``_verify.Cost``); None for a traced one
    cost: Any = None
    n_args = 0
    example: tuple | None = None


def _replay_loaded(plan: Any, inputs: list, dev: Any) -> list:
    """A loaded program's replay: its checks raise as eager code does; anything a backend
    raises is said to come from the loaded program (never a raw backend error)."""
    from ..errors import OmnitensorError
    try:
        return plan(inputs)
    except (OmnitensorError, RuntimeError, MemoryError):
        raise
    except Exception as e:  # noqa: BLE001 - translated, with its type and message
        raise RuntimeError(f"omnitensor.jit: the loaded program failed on {dev}: "
                           f"{type(e).__name__}: {e}") from None


def capture(fn: Any, args: tuple, kwargs: dict, who: str) -> tuple[Any, _Entry]:
    """Capture one call of ``fn``; refuse what a graph cannot replay."""
    from ..compiler import capture as _capture
    _TRACING[0] = True
    try:
        with no_grad_ctx():
            result, graph = _capture.trace(fn, args, kwargs, hooks=False)
    finally:
        _TRACING[0] = False
    if graph.breaks:
        raise TracingError(
            f"{who}: {graph.breaks[0]} cannot be traced: the graph would replay the value "
            f"seen while tracing. Data-dependent control flow (if/while on a tensor, "
            f"bool(tensor)), .item() and .tolist() must move out of the traced code (or be "
            f"computed with tensor ops such as torch.where)")
    states = [i for i in graph.inputs if i.kind == "state"]
    if states:
        raise TracingError(f"{who}: the function reads optimizer state or gradients "
                           f"({states[0].name}); trace the model's forward only")
    consts = {}
    for i in graph.inputs:
        if i.kind == "const":
            a = graph.constants.get(i.value.id)
            if a is None:
                arr = graph.input_arrays[i.value.id]
                a = arr if isinstance(arr, np.ndarray) else \
                    as_device(graph.device).backend.to_numpy(arr)
            consts[i.value.id] = np.asarray(a)
    entry = _Entry(graph, spec_of(result), consts)
    entry.n_args = len(_flat(args, []))
    entry.example = (args, kwargs)      # for save's batch-generic template (torch keeps them too)
    return result, entry


# ------------------------------------------------------------------------ modules
class ScriptModule(Module):
    """A module that runs captured graphs (torch's ``ScriptModule``). ``graph`` prints the
    captured primitives; ``save(path)`` writes a self-contained program."""

    _entries: dict[str, _Entry]
    _python: Any        # the traced Python callable, None for a loaded program

    def _tensor_of(self, inp: Any) -> Tensor:
        mod: Any = self
        *path, last = inp.name.split(".")
        for p in path:
            mod = mod._modules[p]
        table = mod._parameters if inp.kind == "param" else mod._buffers
        t = table.get(last)
        if t is None:
            raise RuntimeError(f"omnitensor.jit: the module has no {inp.kind} {inp.name}")
        return t

    def _grad_needed(self, flat: list[Tensor]) -> bool:
        return is_grad_enabled() and (any(t.requires_grad for t in flat) or
                                      any(p.requires_grad for p in self.parameters()))

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        flat = _flat((args, kwargs), [])
        if self._grad_needed(flat):
            if self._python is not None:
                return self._python(*args, **kwargs)   # autograd: the eager model
            raise RuntimeError("omnitensor.jit: a loaded program runs without autograd; "
                               "call it under omnitensor.no_grad() (or with inputs that do "
                               "not require grad)")
        key = _key(args, kwargs, self.training)
        entry = self._entries.get(key)
        if entry is None and self._python is None:
            entry = self._from_template(key)
        if entry is None:
            if self._python is None:
                known = "; ".join(_describe(k) for k in self._entries
                                  if k not in self._instantiated)
                raise RuntimeError(f"omnitensor.jit: this program was traced for arguments "
                                   f"{known}, not {_describe(key)}; a loaded program holds "
                                   f"no Python code to trace again: trace and save it at "
                                   f"this signature")
            _, entry = capture(self._python, args, kwargs, self._who)
            self._entries[key] = entry
        device = str(flat[0].device) if flat else entry.graph.device
        return entry.run(flat, self._tensor_of, device)

    _who = "omnitensor.jit.trace"
    #: batch-generic templates of a loaded program (see _generic), and the keys made from them
    _templates: list = []
    _instantiated: set = set()
    #: a loaded program's weights (name -> (kind, shape, dtype)) and limits, for templates
    _checks: Any = None

    def _from_template(self, key: str) -> "_Entry | None":
        from . import _generic
        from .serialize import entry_for
        weights, limits = self._checks
        for t in self._templates:
            n = _generic.solve(t["key"], key)
            if n is None:
                continue
            entry = entry_for(t, n, weights, limits)
            if len(self._instantiated) >= 16:        # keep a few sizes' plans
                for k in list(self._instantiated)[:8]:
                    self._entries.pop(k, None)
                    self._instantiated.discard(k)
            self._entries[key] = entry
            self._instantiated.add(key)
            return entry
        return None

    @property
    def graph(self) -> str:
        """The captured graph(s), one primitive per line."""
        return "\n\n".join(e.graph.pretty() for e in self._entries.values())

    @property
    def code(self) -> str:
        return self.graph

    def save(self, f: Any, _extra_files: Any = None) -> None:
        """Write the program (graph as JSON, weights in safetensors; no pickle) to ``f``."""
        from .serialize import save
        save(self, f)

    def forward_entries(self) -> list[_Entry]:
        return list(self._entries.values())


class TracedModule(ScriptModule):
    """What :func:`trace` returns for an ``nn.Module``: shares the module's parameters,
    buffers and submodules (its state_dict is the module's)."""

    def __init__(self, module: Any, who: str = "omnitensor.jit.trace") -> None:
        super().__init__()
        set_ = object.__setattr__
        set_(self, "_parameters", module._parameters)
        set_(self, "_buffers", module._buffers)
        set_(self, "_modules", module._modules)
        set_(self, "_non_persistent_buffers_set", module._non_persistent_buffers_set)
        set_(self, "_entries", {})
        set_(self, "_python", module)
        set_(self, "_who", who)
        set_(self, "original_name", type(module).__name__)
        self.training = module.training

    def train(self, mode: bool = True) -> "TracedModule":
        self._python.train(mode)
        object.__setattr__(self, "training", mode)
        return self

    def extra_repr(self) -> str:
        return f"original_name={self.original_name}"


class ScriptFunction:
    """What :func:`trace` returns for a plain function."""

    def __init__(self, fn: Callable[..., Any], who: str = "omnitensor.jit.trace") -> None:
        self._python = fn
        self._entries: dict[str, _Entry] = {}
        self._who = who
        self.__name__ = getattr(fn, "__name__", "traced_function")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        flat = _flat((args, kwargs), [])
        if is_grad_enabled() and any(t.requires_grad for t in flat):
            return self._python(*args, **kwargs)
        key = _key(args, kwargs, False)
        entry = self._entries.get(key)
        if entry is None:
            _, entry = capture(self._python, args, kwargs, self._who)
            self._entries[key] = entry
        device = str(flat[0].device) if flat else entry.graph.device

        def no_params(inp: Any) -> Tensor:
            raise RuntimeError(f"omnitensor.jit: unexpected {inp.kind} {inp.name}")
        return entry.run(flat, no_params, device)

    @property
    def graph(self) -> str:
        return "\n\n".join(e.graph.pretty() for e in self._entries.values())

    def save(self, f: Any) -> None:
        from .serialize import save
        save(self, f)


def _as_args(example_inputs: Any) -> tuple:
    if example_inputs is None:
        return ()
    if isinstance(example_inputs, tuple):
        return example_inputs
    if isinstance(example_inputs, list):
        return tuple(example_inputs)
    return (example_inputs,)


def trace(func: Any, example_inputs: Any = None, optimize: Any = None,
          check_trace: bool = True, check_inputs: Any = None, check_tolerance: float = 1e-5,
          strict: bool = True, _force_outplace: bool = False, _module_class: Any = None,
          _compilation_unit: Any = None, example_kwarg_inputs: dict | None = None,
          _store_inputs: bool = True) -> Any:
    """torch.jit.trace: capture ``func(*example_inputs)`` and return a module (for an
    ``nn.Module``) or function replaying the captured graph (see the module docstring for
    how shapes other than the example's run). ``check_trace`` replays the graph once on
    the example inputs and compares with the eager result (``check_tolerance``);
    ``check_inputs`` adds more argument tuples to check. ``optimize``, ``strict`` and
    ``_*`` are accepted and change nothing."""
    args = _as_args(example_inputs)
    kwargs = dict(example_kwarg_inputs or {})
    if not args and not kwargs:
        raise ValueError("omnitensor.jit.trace: example_inputs (or example_kwarg_inputs) "
                         "are required")
    if isinstance(func, ScriptModule) or isinstance(func, ScriptFunction):
        return func
    if isinstance(func, Module):
        traced: Any = TracedModule(func)
        training = func.training
    elif callable(func):
        traced = ScriptFunction(func)
        training = False
    else:
        raise TypeError(f"omnitensor.jit.trace: expected an nn.Module or a function, got "
                        f"{type(func).__name__}")
    result, entry = capture(func, args, kwargs, "omnitensor.jit.trace")
    traced._entries[_key(args, kwargs, training)] = entry
    if check_trace:
        for a in [args] + [_as_args(c) for c in (check_inputs or [])]:
            _check(traced, func, a, kwargs, check_tolerance)
    return traced


def _check(traced: Any, func: Any, args: tuple, kwargs: dict, tol: float) -> None:
    if any(n.op == "random_bits" for e in traced._entries.values() for n in e.graph.nodes):
        return                         # fresh random draws differ by design
    with no_grad_ctx():
        want = _flat(func(*args, **kwargs), [])
        got = _flat(traced(*args, **kwargs), [])
    for w, g in zip(want, got):
        a, b = w.cpu().numpy(), g.cpu().numpy()
        if a.shape != b.shape or not np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True):
            raise TracingError("omnitensor.jit.trace: the traced graph's output differs from "
                               "the Python function's on the example inputs (check_trace); "
                               "the function may not be deterministic")


def script(obj: Any, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    """torch.jit.script, honestly: omnitensor does not compile Python source. A module or
    function is captured on each new signature at its first call (as :func:`trace`); code
    whose flow depends on tensor values (``if``/``while`` on a tensor, ``.item()``,
    ``.tolist()``) raises :class:`TracingError` naming the construct and line, where
    TorchScript would have compiled it."""
    if isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    if isinstance(obj, Module):
        return TracedModule(obj, who="omnitensor.jit.script")
    if isinstance(obj, type):
        raise TypeError("omnitensor.jit.script: script an instance (or a function), not a "
                        "class")
    if callable(obj):
        return ScriptFunction(obj, who="omnitensor.jit.script")
    raise TypeError(f"omnitensor.jit.script: expected an nn.Module or a function, got "
                    f"{type(obj).__name__}")


def loaded_module(entry: _Entry, weights: dict[str, tuple[str, Tensor]],
                  key: str, training: bool) -> ScriptModule:
    """A ScriptModule for a loaded program: a tree of plain modules holding its weights
    (so ``state_dict``, ``parameters`` and ``.to`` work), replaying ``entry``."""
    root = ScriptModule()
    object.__setattr__(root, "_entries", {key: entry})
    object.__setattr__(root, "_python", None)
    object.__setattr__(root, "_templates", [])
    object.__setattr__(root, "_instantiated", set())
    for name, (kind, t) in weights.items():
        mod: Any = root
        *path, last = name.split(".")
        for p in path:
            if p not in mod._modules:
                mod._modules[p] = Module()
            mod = mod._modules[p]
        if kind == "param":
            mod._parameters[last] = Parameter(t, requires_grad=False)
        else:
            mod._buffers[last] = t
    root.training = training
    return root
