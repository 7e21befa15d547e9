"""A loaded program is checked like user code before it runs (``jit.load``).

Replay calls backend primitives directly, and a primitive trusts its caller: core has
broadcast and cast its operands, normalised its axes and checked its indices (see
``backends/base.py``). A program read from a file has no core in front of it, so
:func:`verify` does core's part once for the whole graph, at load:

* **shape and dtype inference**: every node's outputs are computed from its operands'
  declared shapes and dtypes by the primitive's own rule and must equal what the file
  declares; every Value is defined once, before use, and used with its defined shape and
  dtype; every argument is checked against its primitive's contract (axes, slices, pads,
  reshape sizes, broadcast shapes, matmul dimensions, scalars that fit the dtype, one
  dtype per elementwise call, host arrays only where a primitive reads the host);
* **indices**: ``gather_nd``/``scatter_nd`` indices are int64 of one shape; where the
  indices' range is known at load (constants, ``arange``, ``full`` and views of them) it
  is checked there; otherwise a range check is inserted before the node (replay raises
  ``RuntimeError`` naming it, as eager code does), on every device;
* **memory**: writes go only into memory the program may write (not a broadcast view);
  ``empty`` is replayed as a zero fill, so no call returns what memory held before;
* **limits**: the work a call does (elements touched, multiply-adds) and the bytes it
  allocates are summed over the graph and bounded (:class:`Limits`).

Anything else raises :class:`~omnitensor.jit.ProgramError` naming the node.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..compiler.ir import DTypeName, Graph, Node, Value
from ._primitive_rules import EXTRA_KWARGS, INFO, OUT_OK, RULES, VIEWS, fits, is_int, numel
from ._program import ProgramError

__all__ = ["Limits", "Cost", "verify", "default_limits"]

#: the least a loaded program may do per call, whatever its size: 2**32 elements touched
#: (seconds, not hours, on a CPU) and 1 GiB allocated
WORK_FLOOR, BYTES_FLOOR = 1 << 32, 1 << 30
#: and what each byte of the file adds (a model's work grows with its weights)
WORK_PER_BYTE, BYTES_PER_BYTE = 1 << 16, 64
_MAX_RANK = 64

@dataclass(frozen=True)
class Limits:
    """What one call of a loaded program may do: ``work`` elements touched plus
    multiply-adds, ``bytes`` allocated (summed over the call)."""

    work: int
    bytes: int

    def scaled(self, factor: float) -> "Limits":
        return Limits(int(self.work * factor), int(self.bytes * factor))


def default_limits(file_bytes: int, max_work: Any = None, max_bytes: Any = None) -> Limits:
    """The limits of a file of ``file_bytes`` bytes (see the floors above); explicit
    ``max_work``/``max_bytes`` replace them (``float('inf')`` lifts one)."""
    def pick(given: Any, floor: int, per_byte: int, name: str) -> int:
        if given is None:
            return max(floor, per_byte * file_bytes)
        if isinstance(given, bool) or not isinstance(given, (int, float)) or \
                not given > 0:
            raise TypeError(f"omnitensor.jit.load: {name} must be a positive number, got "
                            f"{given!r}")
        return 1 << 126 if math.isinf(given) else int(given)
    return Limits(pick(max_work, WORK_FLOOR, WORK_PER_BYTE, "max_work"),
                  pick(max_bytes, BYTES_FLOOR, BYTES_PER_BYTE, "max_bytes"))


@dataclass
class Cost:
    """What one call does (:func:`verify` computes it)."""

    work: int = 0
    bytes: int = 0


@dataclass
class _Info:
    shape: tuple[int, ...]
    dtype: str
    place: str                  # "dev" (the graph's device), "cpu" (a host node's), "host"
    root: int                   # the storage it views (writes through a view reach it)
    readonly: bool = False      # a broadcast view (or a view of one)
    bounds: tuple[float, float] | None = None   # min/max of the values, when known
    const: bool = False         # an input constant (host array)


def _bad(where: str, msg: str) -> ProgramError:
    return ProgramError(f"omnitensor.jit.load: invalid program: {where}: {msg}")


class _Checker:
    """One pass over a graph (see the module docstring)."""

    def __init__(self, graph: Graph, consts: dict[int, np.ndarray],
                 host: set[int]) -> None:
        self.graph = graph
        self.consts = consts
        self.host = host
        self.defs: dict[int, _Info] = {}
        self.cost = Cost()
        self.nodes: list[Node] = []
        self.next_id = 1 + max([v.id for n in graph.nodes for v in n.outputs
                                if isinstance(v, Value)] +
                               [i.value.id for i in graph.inputs] + [0])
        self.where = ""
        self.place = "dev"
        self.root_of_new = 0

    # ------------------------------------------------------------------ values
    def fail(self, msg: str) -> ProgramError:
        return _bad(self.where, msg)

    def define(self, v: Any, info: _Info) -> None:
        if not isinstance(v, Value):
            raise self.fail(f"output {v!r} is not a value")
        if v.id in self.defs:
            raise self.fail(f"value %{v.id} is defined twice")
        if tuple(v.shape) != info.shape or v.dtype != info.dtype:
            raise self.fail(f"declares %{v.id} as {v.dtype}{list(v.shape)}, but the "
                            f"primitive makes {info.dtype}{list(info.shape)}")
        self.defs[v.id] = info

    def use(self, v: Any, place: str | None = None) -> _Info:
        if not isinstance(v, Value):
            raise self.fail(f"expected a value, got {type(v).__name__}")
        info = self.defs.get(v.id)
        if info is None:
            raise self.fail(f"reads %{v.id} before it is defined")
        if tuple(v.shape) != info.shape or v.dtype != info.dtype:
            raise self.fail(f"reads %{v.id} as {v.dtype}{list(v.shape)}, but it is "
                            f"{info.dtype}{list(info.shape)}")
        want = self.place if place is None else place
        if info.place != want:
            raise self.fail(f"reads %{v.id}, which lives on the {info.place}, on the "
                            f"{want}")
        return info

    def new(self, shape: tuple[int, ...], dtype: str, bounds: Any = None) -> _Info:
        self.root_of_new += 1
        return _Info(tuple(shape), dtype, self.place, -self.root_of_new, bounds=bounds)

    def written(self, target: _Info) -> None:
        """A write into ``target``'s storage: what was known of its values is void."""
        if target.readonly:
            raise self.fail("writes into a broadcast view (its elements share memory)")
        for info in self.defs.values():
            if info.root == target.root:
                info.bounds = None

    def charge(self, work: int, nbytes: int = 0) -> None:
        self.cost.work += work
        self.cost.bytes += nbytes

    # ------------------------------------------------------------------ arguments
    def shape_arg(self, s: Any, what: str = "shape") -> tuple[int, ...]:
        if not isinstance(s, (tuple, list)) or len(s) > _MAX_RANK or \
                not all(is_int(d) and d >= 0 for d in s):
            raise self.fail(f"{what} {s!r} is not a tuple of sizes")
        return tuple(s)

    def axis_arg(self, a: Any, ndim: int) -> int:
        if not is_int(a) or not 0 <= a < ndim:
            raise self.fail(f"axis {a!r} is out of range for {ndim} dimensions")
        return int(a)

    def axes_arg(self, axes: Any, ndim: int, what: str = "axes") -> tuple[int, ...]:
        if not isinstance(axes, (tuple, list)) or not axes:
            raise self.fail(f"{what} {axes!r} must be a non-empty tuple")
        out = tuple(self.axis_arg(a, ndim) for a in axes)
        if len(set(out)) != len(out):
            raise self.fail(f"{what} {axes!r} repeat an axis")
        return out

    def bool_arg(self, b: Any, what: str) -> bool:
        if not isinstance(b, bool):
            raise self.fail(f"{what} must be a bool, got {b!r}")
        return b

    def dtype_arg(self, d: Any) -> str:
        if not isinstance(d, DTypeName) or str(d) not in INFO:
            raise self.fail(f"dtype {d!r}")
        return str(d)

    def device_index(self, i: Any) -> None:
        if not is_int(i) or not 0 <= i < 1 << 16:
            raise self.fail(f"device index {i!r}")

    def scalar(self, x: Any, dtype: str) -> None:
        if not isinstance(x, (bool, int, float, complex)) or not fits(x, dtype):
            raise self.fail(f"the scalar {x!r} is not a {dtype} value")

    # ------------------------------------------------------------------ the pass
    def run(self) -> tuple[list[Node], Cost]:
        g = self.graph
        for inp in g.inputs:
            v = inp.value
            place = "host" if v.id in self.host else "dev"
            self.where = f"input {inp.name}"
            info = self.new(self.shape_arg(v.shape), self.dtype_arg(DTypeName(v.dtype)))
            info.place = place
            if inp.kind == "const":
                arr = self.consts.get(v.id)
                if arr is None or tuple(arr.shape) != info.shape or \
                        arr.dtype.name != info.dtype:
                    raise self.fail("its constant array does not have its declared shape "
                                    "and dtype")
                info.const = True
                if arr.dtype.kind in "iub" and arr.size:
                    info.bounds = (float(arr.min()), float(arr.max()))
            elif place == "host":
                raise self.fail("only constants may be read from the host")
            self.define(v, info)
        for k, n in enumerate(g.nodes):
            self.where = f"node {k} ({n.op})"
            self.node(n)
        self.where = "the outputs"
        for v in g.outputs:
            self.use(v, "dev")
        return self.nodes, self.cost

    def node(self, n: Node) -> None:
        if n.device is not None and (n.device != "cpu" or self.graph.device == "cpu"):
            raise self.fail(f"node device {n.device!r}")
        self.place = "cpu" if n.device is not None else "dev"
        out = n.kwargs.get("out")
        rule = RULES.get(n.op)
        if rule is None:
            raise self.fail("not a portable backend primitive")
        extra = set(n.kwargs) - {"out"} - EXTRA_KWARGS.get(n.op, set())
        if extra:
            raise self.fail(f"unexpected keyword(s) {sorted(extra)}")
        if out is not None and n.op not in OUT_OK:
            raise self.fail("out= on a primitive that takes none")
        results = rule(self, n)           # [(shape, dtype, bounds)] or None (in place)
        if n.op == "empty":                # never hand out what memory held before
            shape, dtype, index = n.args
            zero = False if dtype == "bool" else 0
            n = Node("full", (shape, zero, dtype, index), {}, n.outputs, None, n.region,
                     n.device)
        if results is None:
            self.nodes.append(n)
            return
        if out is not None:
            if len(results) != 1:
                raise self.fail("out= on a primitive of several results")
            shape, dtype, _b = results[0]
            target = self.use(out)
            if target.shape != shape or target.dtype != dtype:
                raise self.fail(f"out= is {target.dtype}{list(target.shape)}, the result "
                                f"{dtype}{list(shape)}")
            if n.inplace_of is None or n.inplace_of.id != out.id or len(n.outputs) != 1:
                raise self.fail("out= must name the written value as inplace_of")
            self.written(target)
            self.define(n.outputs[0], _Info(shape, dtype, target.place, target.root))
            self.nodes.append(n)
            return
        if n.inplace_of is not None:
            raise self.fail("names a written value but writes nothing")
        if len(n.outputs) != len(results):
            raise self.fail(f"declares {len(n.outputs)} outputs, the primitive makes "
                            f"{len(results)}")
        view_of = self.defs[n.args[0].id] if n.op in VIEWS else None
        for v, (shape, dtype, bounds) in zip(n.outputs, results):
            info = self.new(shape, dtype, bounds)
            if view_of is not None:
                info.root = view_of.root
                info.readonly = view_of.readonly or n.op == "broadcast_to"
            self.define(v, info)
        self.nodes.append(n)

    def in_place(self, n: Node, target_arg: Any) -> None:
        """The bookkeeping of a primitive that writes into its first argument."""
        target = self.use(target_arg)
        if n.inplace_of is None or n.inplace_of.id != target_arg.id or len(n.outputs) != 1:
            raise self.fail("must name its first argument as the written value")
        self.written(target)
        self.define(n.outputs[0], _Info(target.shape, target.dtype, target.place,
                                        target.root))

    # ------------------------------------------------------------------ indices
    def index_arrays(self, idx: Any, ndim: int) -> tuple[tuple[int, ...], list]:
        if not isinstance(idx, (tuple, list)) or len(idx) != ndim or ndim == 0:
            raise self.fail(f"needs one index array per axis ({ndim})")
        infos = [self.use(i) for i in idx]
        shape = infos[0].shape
        for i in infos:
            if i.dtype != "int64" or i.shape != shape:
                raise self.fail("index arrays must be int64 and of one shape")
        return shape, infos

    def guard_indices(self, n: Node, idx: Any, dims: tuple[int, ...]) -> None:
        """Range-check the index arrays of ``n``: at load where their values are known,
        else by nodes inserted before it."""
        for axis, (v, size) in enumerate(zip(idx, dims)):
            info = self.defs[v.id]
            if numel(info.shape) == 0:
                continue
            if info.bounds is not None:
                lo, hi = info.bounds
                if lo < 0 or hi >= size:
                    raise self.fail(f"index {int(lo) if lo < 0 else int(hi)} is out of "
                                    f"range for axis {axis} of size {size}")
                continue
            self.nodes.extend(self._range_check(v, size, axis, n.op))

    def _range_check(self, v: Value, size: int, axis: int, op: str) -> list[Node]:
        def fresh(shape: tuple[int, ...], dtype: str) -> Value:
            self.next_id += 1
            return Value(self.next_id - 1, shape, dtype)
        shape = tuple(v.shape)
        ge, lt, both = (fresh(shape, "bool") for _ in range(3))
        ok = fresh((), "bool")
        nodes = [Node("greater_equal", (v, 0), {}, (ge,)), Node("less", (v, size), {}, (lt,)),
                 Node("logical_and", (ge, lt), {}, (both,))]
        if shape:
            nodes.append(Node("all", (both, tuple(range(len(shape))), False), {}, (ok,)))
        else:
            ok = both
        what = (f"omnitensor.jit: the loaded program's {op} has an index out of range "
                f"for axis {axis} of size {size}")
        nodes.append(Node("check", (ok,), {"what": what}, ()))
        dev = None if self.place == "dev" else "cpu"
        for nd in nodes:
            nd.device = dev
        self.charge(4 * numel(shape))
        return nodes


def verify(graph: Graph, consts: dict[int, np.ndarray], host: set[int],
           limits: Limits) -> tuple[Graph, Cost]:
    """``(graph to replay, cost of one call)`` for a graph read from a file (see the module
    docstring); raises :class:`ProgramError`."""
    import copy
    try:
        nodes, cost = _Checker(graph, consts, host).run()
    except RecursionError:
        raise _bad("the graph", "nested too deeply") from None
    if cost.work > limits.work or cost.bytes > limits.bytes:
        raise ProgramError(
            f"omnitensor.jit.load: the program would do {cost.work:.3g} units of work and "
            f"allocate {cost.bytes:.3g} bytes per call, over this file's limits "
            f"(max_work={limits.work:.3g}, max_bytes={limits.bytes:.3g}, set by its size); "
            f"if you trust the file, pass larger max_work=/max_bytes= to "
            f"omnitensor.jit.load")
    g = copy.copy(graph)
    g.nodes = nodes
    return g, cost
