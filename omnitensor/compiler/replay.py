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
from .ir import DTypeName, Graph, Node, Value

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
    be = dev.backend
    steps: list = list(graph.nodes)
    for p in (PLANNERS if passes is None else passes):
        steps = p(graph, steps, dev)
    node_index = {id(n): i for i, n in enumerate(graph.nodes)}
    ns: dict[str, Any] = {"RuntimeError": RuntimeError}
    names: dict[int, str] = {}
    consts: dict[int, str] = {}

    def const(obj: Any) -> str:
        key = id(obj)
        if key not in consts:
            consts[key] = f"c{len(consts)}"
            ns[consts[key]] = obj
        return consts[key]

    def has_value(a: Any) -> bool:
        if isinstance(a, Value):
            return True
        if isinstance(a, (tuple, list)):
            return any(has_value(x) for x in a)
        return False

    def resolve(a: Any) -> Any:   # constants as the primitive expects them
        if isinstance(a, DTypeName):
            return as_dtype(str(a)).np
        if isinstance(a, tuple):
            return tuple(resolve(x) for x in a)
        if isinstance(a, list):
            return [resolve(x) for x in a]
        return a

    def expr(a: Any) -> str:
        if isinstance(a, Value):
            return names[a.id]
        if has_value(a):
            inner = ", ".join(expr(x) for x in a)
            if isinstance(a, tuple):
                return f"({inner}{',' if len(a) == 1 else ''})"
            return f"[{inner}]"
        if a is None or isinstance(a, bool) or (isinstance(a, int) and -2**62 < a < 2**62):
            return repr(a)
        return const(resolve(a))

    lines = ["def _replay(inputs):"]
    in_names = []
    for inp in graph.inputs:
        names[inp.value.id] = f"v{inp.value.id}"
        in_names.append(names[inp.value.id])
    if in_names:
        lines.append(f"    {', '.join(in_names)}, = inputs")
    body: list[tuple[str, list[str]]] = []   # (code, names it reads)
    for si, st in enumerate(steps):
        if isinstance(st, Launch):
            fname = f"L{si}"
            ns[fname] = st.fn
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
                body.append((f"    {call}", reads))
            else:
                lhs = outs[0] if len(st.outputs) == 1 else ", ".join(
                    names[o.id] if o.id not in alias else "_" for o in st.outputs) + ","
                body.append((f"    {lhs} = {call}", reads))
            continue
        n: Node = st
        nb = _backend(n.device, be)
        reads = _names_in(n.args, names) + _names_in(list(n.kwargs.values()), names)
        if n.op == "check":
            fname = f"k{si}"
            ns[fname] = _checker(nb)
            ns[f"m{si}"] = (f"{n.kwargs.get('what', 'a check')} (found during a compiled "
                            f"replay)")
            body.append((f"    if not {fname}({expr(n.args[0])}): raise RuntimeError(m{si})",
                         reads))
            continue
        fname = f"f{si}"
        ns[fname] = nb.hook(n.op[5:]) if n.op.startswith("hook:") else getattr(nb, n.op)
        kwargs = dict(n.kwargs)
        pre = ""
        if n.op == "random_bits":
            which = kwargs.pop("generator", None)
            shape, _key, _counter, index = n.args
            if which is not None:
                gen = (_random.default_generator if which == "default"
                       else (generators or {}).get(node_index[id(n)]))
                if gen is None:
                    raise ValueError("build_plan: a random_bits node draws from a user's "
                                     "Generator: pass it in generators=")
                ns[f"g{si}"] = gen
                pre = f"    _k, _c = g{si}._take({prod(shape)})\n"
                args_code = f"{expr(shape)}, _k, _c, {expr(index)}"
            else:
                args_code = ", ".join(expr(a) for a in n.args)
        else:
            args_code = ", ".join([expr(a) for a in n.args] +
                                  [f"{k}={expr(v)}" for k, v in kwargs.items()])
        call = f"{fname}({args_code})"
        if n.inplace_of is not None:
            for o in n.outputs:
                names[o.id] = names[n.inplace_of.id]
            body.append((pre + f"    {call}", reads))
        elif not n.outputs:
            body.append((pre + f"    {call}", reads))
        else:
            for o in n.outputs:
                names[o.id] = f"v{o.id}"
            lhs = ", ".join(names[o.id] for o in n.outputs)
            if len(n.outputs) > 1:
                lhs += ","
            body.append((pre + f"    {lhs} = {call}", reads))
    results = [names[v.id] for v in list(graph.outputs) + list(extra_outputs)]
    # drop each value after its last read (outputs are kept)
    keep = set(results)
    last: dict[str, int] = {}
    for i, (_code, reads) in enumerate(body):
        for r in reads:
            last[r] = i
    drops: dict[int, list[str]] = {}
    for nm, i in last.items():
        if nm not in keep:
            drops.setdefault(i, []).append(nm)
    for i, (code, _reads) in enumerate(body):
        lines.append(code)
        if i in drops:
            lines.append(f"    del {', '.join(sorted(set(drops[i])))}")
    lines.append(f"    return [{', '.join(results)}]")
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<omnitensor replay of {len(steps)} steps>", "exec"), ns)
    return Plan(graph, steps, ns["_replay"], source)


def _names_in(a: Any, names: dict[int, str]) -> list[str]:
    if isinstance(a, Value):
        return [names[a.id]]
    if isinstance(a, (tuple, list)):
        out: list[str] = []
        for x in a:
            out += _names_in(x, names)
        return out
    return []


def _checker(be: Any) -> Callable[[Any], bool]:
    def check(flag: Any) -> bool:
        return bool(be.to_numpy(flag).reshape(()).item())
    return check


def run(graph: Graph, inputs: Sequence[Any]) -> list:
    """The unfused interpreter: replay ``graph`` on ``inputs`` (arrays of
    ``graph.inputs``), returning the arrays of ``graph.outputs``."""
    return build_plan(graph, passes=())(inputs)
