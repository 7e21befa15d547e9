"""The recorder: run a function once, eagerly, and record the backend primitives it calls.

For the duration of :func:`trace` every loaded :class:`~omnitensor.Device` gets a recording
proxy in place of its ``backend`` (a plain instance attribute, see ``core/device.py``). The
proxy runs each primitive for real (so the traced call's results are the eager results) and
appends a :class:`~omnitensor.compiler.ir.Node`. Values are identified by the identity of
backend arrays; the recorder keeps every array it saw alive so identities are not reused.

An array the trace reads but did not produce becomes an :class:`~omnitensor.compiler.ir.Input`:
the caller passes ``sources`` (``id(array) -> (kind, name, tensor)``: arguments, parameters,
buffers, gradients, optimizer state) so that replay can read the *current* array of that
tensor; an array of no known tensor is a ``"const"`` input (read as captured).

What a graph cannot replay is recorded as a **break** (with the user's ``file:line``): a host
read (``to_numpy``/``host_view``: ``.item()``, ``bool(t)``, printing, ``.tolist()``), a
data-dependent shape (``nonzero``), a copy between devices, a host computation core
announces (:meth:`Recorder.host_compute`). With ``fullgraph=True`` the first break raises
:class:`Unsupported` instead.
"""
from __future__ import annotations

import inspect
import os
import sys
import threading
from typing import Any, Callable

import numpy as np

from ..backends.base import HOOK, HOST_READ, HOST_READS, HOST_VIEW, OP
from ..backends.interpose import Interposer, Policy
from ..core import capture_hooks
from ..core import device as _device_mod
from ..core.ops import random as _random
from ..core.tensor import Tensor
from .ir import (CHECK_ERRORS, INPLACE_OPS, VIEW_OPS, DTypeName, Graph, Input, Node, Region,
                 Value)

__all__ = ["trace", "Recorder", "Unsupported", "user_location"]

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_SCALARS = (bool, int, float, complex, str, type(None), slice)


class Unsupported(RuntimeError):
    """``fullgraph=True`` and the function does something a graph cannot hold (a host read,
    a data-dependent shape): torch's ``torch._dynamo.exc.Unsupported``. The message names
    the user's ``file:line``."""


def user_location() -> str:
    """``file:line (function)`` of the innermost frame outside omnitensor."""
    f = sys._getframe(1)
    while f is not None:
        path = os.path.abspath(f.f_code.co_filename)
        if not path.startswith(_PKG_DIR + os.sep):
            return f"{f.f_code.co_filename}:{f.f_lineno} (in {f.f_code.co_name})"
        f = f.f_back  # type: ignore[assignment]
    return "<unknown location>"


def _is_array(x: Any) -> bool:
    return (not isinstance(x, _SCALARS + (tuple, list, dict, np.dtype, type))
            and hasattr(x, "shape") and hasattr(x, "dtype"))


class _Recording(Policy):
    """Capture's policy for one device's backend: each primitive and hook is recorded (a
    node, run for real), each host read is a break."""

    kinds = frozenset((OP, HOST_READ, HOST_VIEW, HOOK))

    def __init__(self, real: Any, rec: "Recorder", label: str | None) -> None:
        self.real, self.rec, self.label = real, rec, label

    def wrap(self, name: str, kind: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        rec = self.rec
        if kind in (HOST_READ, HOST_VIEW):
            why = HOST_READS[name]

            def broken(*args: Any, **kwargs: Any) -> Any:
                rec.host_read(why, resumable=True)
                return fn(*args, **kwargs)
            broken.__name__ = name
            return broken
        return rec.wrap("hook:" + name if kind == HOOK else name, fn, self.label, self.real)

    def hook(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any] | None:
        # hooks=False (jit, onnx): the graph holds only portable primitives
        return self.wrap(name, HOOK, fn) if self.rec.hooks else None


class Recorder:
    """Records the primitives of one call (implements ``capture_hooks.Recorder``)."""

    def __init__(self, device: str, sources: dict[int, tuple[str, str, Tensor]],
                 hooks: bool = True, fullgraph: bool = False) -> None:
        self.device = device
        self.sources = sources
        self.hooks = hooks
        self.fullgraph = fullgraph
        self.values: dict[int, Value] = {}     # id(array) -> its current Value
        self.alive: list[Any] = []             # every array seen (ids stay unique)
        self.array_of: dict[int, Any] = {}     # Value id -> its array
        self.inputs: list[Input] = []
        self.input_tensors: list[Tensor | None] = []   # parallel to inputs (None: const)
        self.input_arrays: list[Any] = []              # the array each input had
        self.nodes: list[Node] = []
        self.regions: dict[int, Region] = {}
        self.constants: dict[int, Any] = {}
        self.breaks: list[str] = []
        self.break_regions: list[int | None] = []   # innermost region of each break
        self.random_gens: dict[int, Any] = {}  # node index -> Generator of a random_bits
        self._pending_gen: Any = None
        # for segmented replay (segments.py): where each break fell (node count), whether
        # the code after it may be deferred again (a host read) or runs eagerly until the
        # next break (a host computation core announced), and which values the Python
        # program still held there; the result kind of each node (kinds_of_result)
        self.flush_points: list[tuple[int, bool, frozenset[int]]] = []
        self.result_kinds: dict[int, Any] = {}
        self.strided_nodes: set[int] = set()    # nodes whose new arrays are not C order
        self._region_stack: list[int] = []
        self._next = 0
        self._inner = 0                         # >0 while running the recorder's own reads
        # only the capturing thread is recorded: another thread's eager ops (a pin-memory
        # thread, a second caller) run on the real backend, unseen
        self._thread = threading.get_ident()

    def _other_thread(self) -> bool:
        return threading.get_ident() != self._thread

    # ------------------------------------------------------------------ values
    def _fresh(self, arr: Any) -> Value:
        v = Value(self._next, tuple(int(s) for s in arr.shape), str(arr.dtype))
        self._next += 1
        self.values[id(arr)] = v
        self.alive.append(arr)
        self.array_of[v.id] = arr
        return v

    def value_of(self, arr: Any) -> Value:
        """The Value of ``arr``, making it an Input when the trace did not produce it."""
        v = self.values.get(id(arr))
        if v is not None:
            return v
        v = self._fresh(arr)
        src = self.sources.get(id(arr))
        if src is None:
            kind, name, owner = "const", f"const[{len(self.inputs)}]", None
            if isinstance(arr, np.ndarray):
                self.constants[v.id] = arr
        else:
            kind, name, owner = src
        self.inputs.append(Input(v, kind, name))
        self.input_tensors.append(owner)
        self.input_arrays.append(arr)
        return v

    def _encode(self, a: Any) -> Any:
        if isinstance(a, _SCALARS):
            return a
        if isinstance(a, np.dtype):
            return DTypeName(a.name)
        if isinstance(a, tuple):
            return tuple(self._encode(x) for x in a)
        if isinstance(a, list):
            return [self._encode(x) for x in a]
        if isinstance(a, dict):
            return {k: self._encode(x) for k, x in a.items()}
        if isinstance(a, np.generic):
            return a.item()
        if _is_array(a):
            return self.value_of(a)
        if isinstance(a, type):         # a NumPy scalar type given as a dtype
            return DTypeName(np.dtype(a).name)
        raise TypeError(f"capture: cannot record an argument of type {type(a).__name__}")

    # ------------------------------------------------------------------ recording
    def wrap(self, op: str, fn: Callable[..., Any], label: str | None,
             backend: Any = None) -> Callable[..., Any]:
        """``fn`` recording each call as a node ``op``."""
        inplace_arg0 = op in INPLACE_OPS
        view = op in VIEW_OPS

        get_ident, owner = threading.get_ident, self._thread

        def recorded(*args: Any, **kwargs: Any) -> Any:
            if self._inner or get_ident() != owner:
                return fn(*args, **kwargs)
            enc_args = self._encode(args)
            enc_kwargs = self._encode(kwargs) if kwargs else {}
            gen = None
            if op == "random_bits":
                gen, self._pending_gen = self._pending_gen, None
            result = fn(*args, **kwargs)
            inplace_of = None
            if kwargs.get("out") is not None:
                inplace_of = enc_kwargs["out"]
                outs: tuple = (self._fresh(kwargs["out"]),)
            elif inplace_arg0:
                inplace_of = enc_args[0]
                outs = (self._fresh(args[0]),)
            elif result is None:
                outs = ()
            elif isinstance(result, (tuple, list)):
                outs = tuple(self._fresh(r) for r in result)
            elif _is_array(result):
                # (a primitive may return its operand itself, as contiguous does: a new
                # SSA name for the same array)
                outs = (self._fresh(result),)
            else:
                raise TypeError(f"capture: primitive {op} returned {type(result).__name__}")
            kind = self.result_kinds[len(self.nodes)] = _result_kind(result, args, kwargs)
            if kind in ("one", "tuple", "list") and not view and backend is not None and \
                    not all(_c_order(r, backend) for r in
                            (result if isinstance(result, (tuple, list)) else (result,))):
                # a new array in another layout than C order (NumPy keeps a transposed
                # operand's): a segmented replay's stand-in would be C order, and a
                # reshape of it a view where the program's was a copy
                self.strided_nodes.add(len(self.nodes))
            if gen is not None:
                self.random_gens[len(self.nodes)] = gen
                enc_kwargs = dict(enc_kwargs, generator=(
                    "default" if gen is _random.default_generator else "arg"))
            self.nodes.append(Node(op, enc_args, enc_kwargs, outs, inplace_of,
                                   self._region_stack[-1] if self._region_stack else None,
                                   label))
            return result
        return recorded

    # ------------------------------------------------------------- capture_hooks API
    def region(self, name: str, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        """Run the composite ``fn`` as region ``name``. ``Region.inputs`` are its tensor
        arguments in pytree order (nested tuples/lists included); ``Region.attrs`` its
        arguments bound to ``fn``'s signature (defaults applied), each tensor replaced by
        ``{"$in": k}`` (its index in ``inputs``)."""
        if self._other_thread():
            return fn(*args, **kwargs)
        rid = len(self.regions)
        ins: list = []

        def attr(v: Any) -> Any:
            if isinstance(v, Tensor):
                ins.append(self.value_of(v._data))
                return {"$in": len(ins) - 1}
            if isinstance(v, (tuple, list)):
                return [attr(x) for x in v]
            return _jsonable(v)
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
            bound.apply_defaults()
            attrs = {k: attr(v) for k, v in bound.arguments.items()}
        except (TypeError, ValueError):
            attrs = {f"arg{i}": attr(a) for i, a in enumerate(args)}
            attrs.update({k: attr(v) for k, v in kwargs.items()})
        parent = self._region_stack[-1] if self._region_stack else None
        self._region_stack.append(rid)
        try:
            result = fn(*args, **kwargs)
        finally:
            self._region_stack.pop()
        res: list = []
        tensors_in(result, res)
        outs = tuple(self.value_of(r._data) for r in res)
        self.regions[rid] = Region(rid, name, attrs, tuple(ins), outs, parent)
        return result

    def host_read(self, what: str, resumable: bool = False) -> None:
        """A break: the call did something a graph cannot replay. ``resumable``: a host
        read through the backend, after which a segmented replay defers device work
        again; otherwise (a host computation, a disabled function) the code after the
        break runs eagerly until the next break."""
        if self._inner or self._other_thread():
            return
        where = user_location()
        msg = f"{what} at {where}"
        if self.fullgraph:
            raise Unsupported(f"omnitensor.compile(fullgraph=True): graph break: {msg}. "
                              f"Move it out of the compiled function, or compile with "
                              f"fullgraph=False to split there.")
        self.breaks.append(msg)
        self.break_regions.append(self._region_stack[-1] if self._region_stack else None)
        self.flush_points.append((len(self.nodes), resumable, self.live_values()))

    def live_values(self) -> frozenset[int]:
        """The Values (latest of each array) of the arrays the call produced that something
        besides the recorder still references now: what code after this point can reach
        (a segmented replay materializes exactly these at a break)."""
        inputs = {id(a) for a in self.input_arrays}
        counts: dict[int, int] = {}
        first: dict[int, Any] = {}
        for a in self.alive:
            i = id(a)
            counts[i] = counts.get(i, 0) + 1
            first.setdefault(i, a)
        live = set()
        getrefcount = sys.getrefcount
        for a in first.values():   # (not .items(): its result tuple holds a reference)
            i = id(a)
            # references: the recorder's own (counts), ``first``, ``a`` and the argument
            if i not in inputs and getrefcount(a) > counts[i] + 3:
                live.add(self.values[i].id)
        return frozenset(live)

    def host_compute(self, what: str) -> None:
        """Core announces a computation it runs on the host, invisible to the backend."""
        self.host_read(what, resumable=False)

    def random_draw(self, generator: Any) -> None:
        """The next ``random_bits`` draws from ``generator``: replay draws again from it."""
        if not self._other_thread():
            self._pending_gen = generator

    def check(self, flag: Tensor, what: str, error: type[Exception] = RuntimeError) -> bool:
        """A validation read (``flag`` a 0-d bool tensor that must be True): a ``check``
        node, not a break; replay raises ``error(what)`` when it is False (eager's
        exception: a compiled call raises what the eager call does)."""
        if self._other_thread():
            return bool(flag.item())
        dev = flag._device
        v = self.value_of(flag._data)
        kw: dict[str, Any] = {"what": what}
        if error is not RuntimeError:
            kw["error"] = error.__name__ if error.__name__ in CHECK_ERRORS else "RuntimeError"
        self.nodes.append(Node("check", (v,), kw, (), None,
                               self._region_stack[-1] if self._region_stack else None,
                               None if str(dev) == self.device else str(dev)))
        self._inner += 1
        try:
            return bool(flag.item())
        finally:
            self._inner -= 1

    # ------------------------------------------------------------------ the graph
    def graph(self, outputs: list[Value], state_writes: list[tuple[Value, Value]]) -> Graph:
        g = Graph(self.device, list(self.inputs), list(self.nodes), outputs,
                  state_writes, dict(self.regions), dict(self.constants), list(self.breaks),
                  list(self.break_regions))
        g.input_arrays = {i.value.id: a for i, a in zip(self.inputs, self.input_arrays)}
        return g


def _c_order(arr: Any, backend: Any) -> bool:
    """Whether ``arr`` is laid out in C order (dimensions of size 1 aside)."""
    flags = getattr(arr, "flags", None)
    if flags is not None and hasattr(flags, "c_contiguous"):
        return bool(flags.c_contiguous)
    try:
        strides = backend.strides(arr)
    except Exception:  # noqa: BLE001 - no layout query: assume C order
        return True
    expect = 1
    for n, st in zip(reversed(tuple(arr.shape)), reversed(tuple(strides))):
        if n != 1 and st != expect:
            return False
        expect *= int(n)
    return True


def _result_kind(result: Any, args: tuple, kwargs: dict) -> Any:
    """How a primitive answered: None, ``"out"`` (its ``out=`` array), ``"tuple"`` or
    ``"list"`` of new arrays, ``"one"`` new array, or the int position of the argument it
    returned itself (``contiguous`` of a contiguous array)."""
    if result is None:
        return None
    if result is kwargs.get("out"):
        return "out"
    if isinstance(result, tuple):
        return "tuple"
    if isinstance(result, list):
        return "list"
    for k, a in enumerate(args):
        if a is result:
            return k
    return "one"


def _jsonable(v: Any) -> Any:
    if isinstance(v, (bool, int, float, str, type(None))):
        return v
    if isinstance(v, (tuple, list)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.dtype):
        return v.name
    name = getattr(v, "name", None)   # an omnitensor DType
    if isinstance(name, str) and hasattr(v, "np"):
        return name
    return repr(v)


def _loaded_devices() -> list[Any]:
    seen: dict[int, Any] = {}
    for d in list(_device_mod._interned.values()):
        if "backend" in d.__dict__:
            seen[id(d)] = d
    return list(seen.values())


class recording:
    """Context manager: install ``rec`` as the running recorder and proxy every loaded
    device's backend; restore both on exit."""

    def __init__(self, rec: Recorder) -> None:
        self.rec = rec
        self.swapped: list[tuple[Any, Any]] = []

    def __enter__(self) -> Recorder:
        if capture_hooks.active() is not None:
            raise RuntimeError("omnitensor.compile: a capture is already running (nested "
                               "compiled calls run inside the outer capture)")
        for d in _loaded_devices():
            real = d.__dict__["backend"]
            label = None if str(d) == self.rec.device else str(d)
            self.swapped.append((d, real))
            d.backend = Interposer(real, _Recording(real, self.rec, label))
        capture_hooks.set_active(self.rec)
        return self.rec

    def __exit__(self, *exc: Any) -> None:
        capture_hooks.set_active(None)
        for d, real in self.swapped:
            d.backend = real
        self.swapped.clear()


def tensors_in(obj: Any, out: list | None = None) -> list:
    """The tensors of a nest of tuples, lists and dict values, in order (appended to
    ``out`` when given); the one flattening that capture, jit and onnx export share."""
    if out is None:
        out = []
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            tensors_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            tensors_in(o, out)
    return out


def default_sources(fn: Any, args: tuple, kwargs: dict) -> dict[int, tuple[str, str, Tensor]]:
    """Arguments and, for a module, its parameters and buffers, by array identity."""
    src: dict[int, tuple[str, str, Tensor]] = {}
    if hasattr(fn, "named_parameters") and hasattr(fn, "named_buffers"):
        for n, p in fn.named_parameters():
            src.setdefault(id(p._data), ("param", n, p))
        for n, b in fn.named_buffers():
            src.setdefault(id(b._data), ("buffer", n, b))
    ts: list = []
    tensors_in(args, ts)
    for i, t in enumerate(ts):
        src.setdefault(id(t._data), ("arg", f"args[{i}]", t))
    ts = []
    tensors_in(kwargs, ts)
    for i, t in enumerate(ts):
        src.setdefault(id(t._data), ("arg", f"kwargs[{i}]", t))
    return src


def graph_device(args: tuple, kwargs: dict, fn: Any = None) -> str:
    """The device a call computes on: its first tensor argument's, else the module's."""
    ts: list = []
    tensors_in((args, kwargs), ts)
    if not ts and hasattr(fn, "parameters"):
        ts = list(fn.parameters())[:1]
    if ts:
        return str(ts[0].device)
    return str(_device_mod.get_default_device())


def trace(fn: Callable[..., Any], args: tuple = (), kwargs: dict | None = None, *,
          hooks: bool = True, fullgraph: bool = False,
          sources: dict[int, tuple[str, str, Tensor]] | None = None) -> tuple[Any, Graph]:
    """Run ``fn(*args, **kwargs)`` once under the recorder; return ``(result, Graph)``.

    ``hooks=False`` makes ``backend.hook(name)`` answer None during the trace, so the graph
    holds only portable primitives (jit, onnx). The graph's outputs are the ``_data`` of the
    result's tensors (flattened: tuples, lists, dict values in order); ``Graph.regions`` the
    composite calls. Breaks are in ``Graph.breaks`` (a list of messages; empty when the graph
    is the whole call)."""
    kwargs = kwargs or {}
    rec = Recorder(graph_device(args, kwargs, fn),
                   default_sources(fn, args, kwargs) if sources is None else sources,
                   hooks=hooks, fullgraph=fullgraph)
    with recording(rec):
        result = fn(*args, **kwargs)
    outs: list = []
    tensors_in(result, outs)
    return result, rec.graph([rec.value_of(t._data) for t in outs], [])
