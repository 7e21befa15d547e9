"""Replay: one pass over a planned list of kernel launches, no per-op Python dispatch.

:func:`build_plan` turns a :class:`~omnitensor.compiler.ir.Graph` into a :class:`Plan`: the
graph's nodes become *steps* (a node run as its bound backend primitive, or a
:class:`Launch` a planner pass put in place of several nodes), and the steps become one
generated Python function, ``v7 = f3(v1, v2); del v1; ...``: each step is one call of a
bound callable on local variables, with no dtype rules, shape rules, argument checks or
autograd. A value's last use drops it (``del``) so the backend's pool reuses its memory.

Planner passes (the fusion planner registers one with :func:`register_planner`) are
``pass(graph, steps, device) -> steps``: they may replace runs of :class:`Node` steps by
:class:`Launch` steps. :func:`run` (the unfused interpreter, no passes) is the reference
every faster plan is tested against.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..core.device import device as _device
from ..core.dtypes import as_dtype
from ..core.ops import random as _random
from ..core.shape_util import prod
from ..errors import IndexOutOfRangeError
from .ir import DTypeName, Graph, Node, Value, check_error

__all__ = ["Launch", "Plan", "build_plan", "run", "register_planner", "PLANNERS"]


@dataclass
class Launch:
    """A planner's replacement for one or more nodes: ``outputs = fn(*inputs)`` (``fn``
    returns one array, or a tuple of arrays when it has several outputs; a launch that
    writes into one of its inputs lists the written Value in ``writes``)."""

    fn: Callable[..., Any]
    inputs: tuple[Value, ...]
    outputs: tuple[Value, ...]
    name: str = "launch"
    writes: tuple[tuple[Value, Value], ...] = ()   # (output Value, input Value it aliases)


Step = Any  # Node | Launch
PLANNERS: list[Callable[[Graph, list, Any], list]] = []


def register_planner(fn: Callable[[Graph, list, Any], list]) -> Callable[[Graph, list, Any], list]:
    """Add a planner pass run by :func:`build_plan` (``passes=None``) in registration
    order."""
    PLANNERS.append(fn)
    return fn


class Plan:
    """A compiled replay of one graph: ``plan(inputs) -> outputs``, ``inputs`` the arrays of
    ``graph.inputs`` in order, ``outputs`` the arrays of ``graph.outputs`` then of
    ``extra_outputs``."""

    def __init__(self, graph: Graph, steps: list, fn: Callable[[Sequence[Any]], list],
                 source: str) -> None:
        self.graph = graph
        self.steps = steps
        self.fn = fn
        self.source = source

    def __call__(self, inputs: Sequence[Any]) -> list:
        return self.fn(inputs)

    @property
    def launches(self) -> int:
        """Steps per replay (nodes plus planner launches)."""
        return len(self.steps)


def _backend(label: str | None, default: Any) -> Any:
    return default if label is None else _device(label).backend


def build_plan(graph: Graph, *, extra_outputs: Sequence[Value] = (),
               generators: dict[int, Any] | None = None,
               passes: Sequence[Callable[[Graph, list, Any], list]] | None = None) -> Plan:
    """Plan ``graph`` for replay on its device (see the module docstring).
    ``generators`` maps node indices of ``random_bits`` nodes recorded with
    ``generator="arg"`` to their :class:`~omnitensor.Generator`."""
    dev = _device(graph.device)
    steps: list = list(graph.nodes)
    for p in (PLANNERS if passes is None else passes):
        steps = p(graph, steps, dev)
    w = _Source(graph, dev.backend, generators)
    for si, st in enumerate(steps):
        if isinstance(st, Launch):
            w.launch(si, st)
        else:
            w.node(si, st)
    source = w.source([w.names[v.id] for v in list(graph.outputs) + list(extra_outputs)])
    exec(compile(source, f"<omnitensor replay of {len(steps)} steps>", "exec"), w.ns)
    return Plan(graph, steps, w.ns["_replay"], source)


def _has_value(a: Any) -> bool:
    if isinstance(a, Value):
        return True
    if isinstance(a, (tuple, list)):
        return any(_has_value(x) for x in a)
    return False


def _resolve(a: Any) -> Any:
    """A recorded constant as the primitive expects it (DTypeName -> numpy dtype)."""
    if isinstance(a, DTypeName):
        return as_dtype(str(a)).np
    if isinstance(a, tuple):
        return tuple(_resolve(x) for x in a)
    if isinstance(a, list):
        return [_resolve(x) for x in a]
    return a


class _Source:
    """The generated replay function of one plan, written step by step: ``ns`` its
    globals (bound callables, constants), ``names`` each Value's local variable."""

    def __init__(self, graph: Graph, be: Any, generators: dict[int, Any] | None) -> None:
        self.be = be
        self.generators = generators or {}
        self.node_index = {id(n): i for i, n in enumerate(graph.nodes)}
        self.ns: dict[str, Any] = {"RuntimeError": RuntimeError}
        self.names: dict[int, str] = {}
        self.consts: dict[int, str] = {}
        self.body: list[tuple[str, list[str]]] = []   # (code, names it reads)
        self.head = ["def _replay(inputs):"]
        in_names = []
        for inp in graph.inputs:
            self.names[inp.value.id] = f"v{inp.value.id}"
            in_names.append(self.names[inp.value.id])
        if in_names:
            self.head.append(f"    {', '.join(in_names)}, = inputs")

    def const(self, obj: Any) -> str:
        key = id(obj)
        if key not in self.consts:
            self.consts[key] = f"c{len(self.consts)}"
            self.ns[self.consts[key]] = obj
        return self.consts[key]

    def expr(self, a: Any) -> str:
        if isinstance(a, Value):
            return self.names[a.id]
        if _has_value(a):
            inner = ", ".join(self.expr(x) for x in a)
            if isinstance(a, tuple):
                return f"({inner}{',' if len(a) == 1 else ''})"
            return f"[{inner}]"
        if a is None or isinstance(a, bool) or (isinstance(a, int) and -2**62 < a < 2**62):
            return repr(a)
        return self.const(_resolve(a))

    def launch(self, si: int, st: Launch) -> None:
        names = self.names
        fname = f"L{si}"
        self.ns[fname] = st.fn
        reads = [names[v.id] for v in st.inputs]
        alias = {o.id: i for o, i in st.writes}
        outs = []
        for o in st.outputs:
            if o.id in alias:
                names[o.id] = names[alias[o.id].id]
            else:
                names[o.id] = f"v{o.id}"
                outs.append(names[o.id])
        call = f"{fname}({', '.join(reads)})"
        if not outs:
            self.body.append((f"    {call}", reads))
        else:
            lhs = outs[0] if len(st.outputs) == 1 else ", ".join(
                names[o.id] if o.id not in alias else "_" for o in st.outputs) + ","
            self.body.append((f"    {lhs} = {call}", reads))

    def node(self, si: int, n: Node) -> None:
        names, expr = self.names, self.expr
        nb = _backend(n.device, self.be)
        reads = _names_in(n.args, names) + _names_in(list(n.kwargs.values()), names)
        if n.op == "check":
            fname = f"k{si}"
            self.ns[fname] = _checker(nb)
            self.ns[f"m{si}"] = (f"{n.kwargs.get('what', 'a check')} (found during a "
                                 f"compiled replay)")
            self.ns[f"e{si}"] = check_error(n.kwargs)
            self.body.append((f"    if not {fname}({expr(n.args[0])}): "
                              f"raise e{si}(m{si})", reads))
            return
        fname = f"f{si}"
        self.ns[fname] = primitive(nb, n.op)
        pre, args_code = self._arguments(si, n)
        call = f"{fname}({args_code})"
        if n.inplace_of is not None:
            for o in n.outputs:
                names[o.id] = names[n.inplace_of.id]
            self.body.append((pre + f"    {call}", reads))
        elif not n.outputs:
            self.body.append((pre + f"    {call}", reads))
        else:
            for o in n.outputs:
                names[o.id] = f"v{o.id}"
            lhs = ", ".join(names[o.id] for o in n.outputs)
            if len(n.outputs) > 1:
                lhs += ","
            self.body.append((pre + f"    {lhs} = {call}", reads))

    def _arguments(self, si: int, n: Node) -> tuple[str, str]:
        """(code run before the call, the call's argument list): a ``random_bits`` node
        of a generator takes a fresh key and counter from it."""
        expr = self.expr
        kwargs = dict(n.kwargs)
        if n.op != "random_bits":
            return "", ", ".join([expr(a) for a in n.args] +
                                 [f"{k}={expr(v)}" for k, v in kwargs.items()])
        which = kwargs.pop("generator", None)
        shape, _key, _counter, index = n.args
        if which is None:
            return "", ", ".join(expr(a) for a in n.args)
        gen = (_random.default_generator if which == "default"
               else self.generators.get(self.node_index[id(n)]))
        if gen is None:
            raise ValueError("build_plan: a random_bits node draws from a user's "
                             "Generator: pass it in generators=")
        self.ns[f"g{si}"] = gen
        return (f"    _k, _c = g{si}._take({prod(shape)})\n",
                f"{expr(shape)}, _k, _c, {expr(index)}")

    def source(self, results: list[str]) -> str:
        """The function's text, each value dropped after its last read (``results``, the
        returned names, are kept)."""
        keep = set(results)
        last: dict[str, int] = {}
        for i, (_code, reads) in enumerate(self.body):
            for r in reads:
                last[r] = i
        drops: dict[int, list[str]] = {}
        for nm, i in last.items():
            if nm not in keep:
                drops.setdefault(i, []).append(nm)
        lines = list(self.head)
        for i, (code, _reads) in enumerate(self.body):
            lines.append(code)
            if i in drops:
                lines.append(f"    del {', '.join(sorted(set(drops[i])))}")
        lines.append(f"    return [{', '.join(results)}]")
        return "\n".join(lines) + "\n"


def _names_in(a: Any, names: dict[int, str]) -> list[str]:
    if isinstance(a, Value):
        return [names[a.id]]
    if isinstance(a, (tuple, list)):
        out: list[str] = []
        for x in a:
            out += _names_in(x, names)
        return out
    return []


#: hooks that index with tensors and, on a backend whose ``checks_index_bounds``, check the
#: bounds themselves (core records no check node there): their IndexError is eager's
#: IndexOutOfRangeError (``core/ops/indexing.py`` converts it the same way)
SELF_CHECKED = frozenset(("hook:index_advanced", "hook:index_put_advanced"))


def primitive(be: Any, op: str) -> Callable[..., Any]:
    """The callable a node of ``op`` runs on backend ``be``, raising what eager raises."""
    fn = be.hook(op[5:]) if op.startswith("hook:") else getattr(be, op)
    if op not in SELF_CHECKED or not be.checks_index_bounds:
        return fn

    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except IndexError as e:
            if isinstance(e, IndexOutOfRangeError):
                raise
            raise IndexOutOfRangeError(str(e)) from None
    return checked


def _checker(be: Any) -> Callable[[Any], bool]:
    def check(flag: Any) -> bool:
        return bool(be.to_numpy(flag).reshape(()).item())
    return check


def run(graph: Graph, inputs: Sequence[Any]) -> list:
    """The unfused interpreter: replay ``graph`` on ``inputs`` (arrays of
    ``graph.inputs``), returning the arrays of ``graph.outputs``."""
    return build_plan(graph, passes=())(inputs)
