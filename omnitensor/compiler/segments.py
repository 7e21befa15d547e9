"""Graph breaks as compiled segments: the Python runs, device work is deferred and fused.

A call with graph breaks (``.item()``, ``bool(t)``, printing, ``nonzero``, a host
computation) cannot be replayed as one plan: the Python between the breaks decides what
happens next. :class:`SegmentedCall` replays such a call by running the Python function
again with every loaded device's backend swapped for a *deferring* proxy:

* each primitive the Python calls is matched against the next node the capture recorded
  (same op, same scalars, the same values in the same places); it is not run, it answers
  with a new uninitialised array of the recorded shape and dtype (views run for real, on
  those arrays, so aliasing is the eager program's);
* at a break (a host read), the nodes deferred since the previous break run as one
  compiled plan (``replay.build_plan``, fused when fusion is on), and the values the Python
  program still holds there are copied into its arrays: the capture measured which
  (:meth:`~omnitensor.compiler.capture.Recorder.live_values`), so values used only inside
  the segment never leave the plan; then the host read runs on real data;
* after a host computation core announced (``randn``'s host transform) or a function marked
  ``disable``, the code up to the next break runs eagerly: it may read arrays directly.

Python-visible effects (new ``.grad`` tensors, optimizer state, version counters, the
result) are the Python program's own, because the Python program runs. When the Python
takes a path the capture did not (an op or a scalar differs, often because of a value read
at a break), the deferred nodes run eagerly on the program's arrays and the call finishes
eagerly: results are never stale. A key whose calls diverge twice runs eagerly after.
"""
from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Callable

from ..core.device import device as _device
from . import aliasing, capture, replay
from .deferral import Session, deferring
from .matching import _layout, _np_dtype
from .ir import VIEW_OPS, DTypeName, Graph, Input, Node, Value, state_writes

__all__ = ["SegmentedCall", "NotSegmentable"]


class NotSegmentable(Exception):
    """The capture cannot be split into segments (the message says why)."""


@dataclasses.dataclass
class _Segment:
    start: int                       # node range [start, end)
    end: int
    eager: bool                      # runs node by node (after a host computation)
    plan: replay.Plan | None = None
    inputs: tuple[int, ...] = ()     # value ids the plan reads, in plan-input order
    outs: tuple[tuple[int, str | None], ...] = ()   # (value id, device label) to copy out
    temps: tuple[int, ...] = ()      # values the program did not hold at the capture's break
    fused: bool = False              # its plan may reorder reads and writes (aliasing.py)


class _Draw:
    """Stands for a generator in a segment's plan: the Python program drew the
    ``(key, counter)`` itself when it called ``random_bits``; the plan takes those."""

    def __init__(self, owner: "SegmentedCall", node: int) -> None:
        self.owner, self.node = owner, node

    def _take(self, n: int) -> tuple:
        s = self.owner.session
        assert s is not None
        return s.draws[self.node]


class SegmentedCall:
    """One guard key's capture split at its breaks (see the module docstring)."""

    def __init__(self, rec: capture.Recorder, live_end: frozenset[int], passes: Any) -> None:
        self.device = rec.device
        self.nodes: list[Node] = list(rec.nodes)
        self.kinds = dict(rec.result_kinds)
        self.strided = frozenset(rec.strided_nodes)
        # the layout of each input (a transposed argument gives results in its layout)
        be = _device(rec.device).backend
        self.in_layout = {i.value.id: _layout(a, be)
                          for i, a in zip(rec.inputs, rec.input_arrays)}
        self.input_ids = frozenset(i.value.id for i in rec.inputs)
        self.divergences = 0
        self.calls = 0
        self.held_temps = 0      # segments run node by node: the program held a temporary
        self.session: Session | None = None
        self.diverged_at: str | None = None
        self.verdict: str | None = None        # "segments" or "eager" (policy=None)
        self.timings: dict[str, list[float]] = {"S": [], "E": []}
        self._specs: dict[int, tuple] = {}
        self._outs: dict[int, list] = {}
        self.view_ids: set[int] = set()        # values a view op produced
        self.segments, lives = _cut(rec, live_end)
        produced = {o.id: k for k, seg in enumerate(self.segments)   # value id -> segment
                    for n in self.nodes[seg.start:seg.end] for o in n.outputs}
        real_at = set(self.input_ids)          # values real in the program's arrays
        for k, seg in enumerate(self.segments):
            reads: dict[int, Value] = {}
            for n in self.nodes[seg.start:seg.end]:
                for v in _values_in((n.args, n.kwargs)):
                    if produced.get(v.id) != k:
                        if v.id not in real_at:
                            raise NotSegmentable(f"a value of an earlier segment ({v}) is "
                                                 f"read after a break without being held")
                        reads.setdefault(v.id, v)
            here = [o for n in self.nodes[seg.start:seg.end] for o in n.outputs]
            if seg.eager:
                real_at.update(o.id for o in here)
                continue
            # a write into an array the program holds for real (an input, a value kept at
            # an earlier break) happens in place in the plan: nothing to copy out
            for n in self.nodes[seg.start:seg.end]:
                if n.inplace_of is not None and n.inplace_of.id in real_at:
                    real_at.update(o.id for o in n.outputs)
            # a view the program holds is right once its base is: keep the bases too
            # (the program's views run for real on the program's arrays)
            live = set(lives[k])
            base_of = {o.id: n.args[0] for n in reversed(self.nodes[seg.start:seg.end])
                       if n.op in VIEW_OPS and isinstance(n.args[0], Value)
                       for o in n.outputs}
            work = [v for v in live if v in base_of]
            while work:
                b = base_of[work.pop()]
                if b.id not in live:
                    live.add(b.id)
                    if b.id in base_of:
                        work.append(b.id)
            keep = [o for o in dict((o.id, o) for o in here).values()
                    if o.id in live and o.id not in real_at]
            self.view_ids.update(base_of)
            label = {o.id: n.device for n in self.nodes[seg.start:seg.end] for o in n.outputs}
            seg.inputs = tuple(reads)
            seg.outs = tuple((o.id, label[o.id]) for o in keep)
            seg.temps = tuple(dict.fromkeys(o.id for o in here
                                            if o.id not in live and o.id not in real_at))
            real_at.update(o.id for o in keep)
            if seg.end > seg.start:
                # reads over shared memory (a view of an input and the input): the recorded
                # order is eager's; a fused plan could read one after writing the other
                shared = aliasing.any_overlap([rec.array_of[v] for v in reads], be)
                seg.fused = not shared and passes != ()
                seg.plan = self._plan(seg, list(reads.values()), keep, rec,
                                      () if shared else passes)

    def _plan(self, seg: _Segment, reads: list[Value], keep: list[Value],
              rec: capture.Recorder, passes: Any) -> replay.Plan:
        nodes, gens = [], {}
        for i in range(seg.start, seg.end):
            n = self.nodes[i]
            if n.op == "random_bits":
                n = dataclasses.replace(n, kwargs=dict(n.kwargs, generator="arg"))
                gens[i - seg.start] = _Draw(self, i)
            nodes.append(n)
        inputs = [Input(v, "arg", f"segment[{j}]") for j, v in enumerate(reads)]
        g = Graph(self.device, inputs, nodes, list(keep),
                  state_writes([i.value for i in inputs], nodes), dict(rec.regions), {},
                  [], [])
        try:
            return replay.build_plan(g, generators=gens, passes=passes)
        except Exception:  # noqa: BLE001 - a planner pass failed: unfused
            return replay.build_plan(g, generators=gens, passes=())

    def arg_specs(self, n: Node) -> tuple:
        """``(kind, recorded)`` per positional argument of ``n``: 0 a value, 1 a plain
        scalar or a tuple of them (compared with ``==``), 2 anything else."""
        spec = self._specs.get(id(n))
        if spec is None:
            spec = tuple((0 if isinstance(r, Value) else
                          1 if _plain(r) else 2, r) for r in n.args)
            self._specs[id(n)] = spec
        return spec

    def out_specs(self, n: Node) -> list:
        spec = self._outs.get(id(n))
        if spec is None:
            spec = [(v.shape, _np_dtype(v.dtype)) for v in n.outputs]
            self._outs[id(n)] = spec
        return spec

    @property
    def compiled_segments(self) -> int:
        """Segments replayed as plans (the others run eagerly)."""
        return sum(s.plan is not None for s in self.segments)

    #: ``policy=None`` (auto): calls 2-8 alternate segmented and plain eager runs, and the
    #: faster (best of each) serves the key after: on a host device the Python between the
    #: breaks costs as much as the ops it defers, so eager can win
    _PATTERN = "SSESESES"

    def __call__(self, fn: Callable[..., Any], args: tuple, kwargs: dict,
                 policy: bool | None = None) -> Any:
        if policy is False or self.verdict == "eager":
            return fn(*args, **kwargs)
        probing = policy is None and self.verdict is None
        n = len(self.timings["S"]) + len(self.timings["E"])
        mode = self._PATTERN[n] if probing and n < len(self._PATTERN) else "S"
        t0 = time.perf_counter()
        if mode == "E":
            result = fn(*args, **kwargs)
        else:
            s = Session(self)
            self.session = s
            self.calls += 1
            with deferring(s):
                try:
                    result = fn(*args, **kwargs)
                except BaseException:
                    s.abandon()   # what ran before the exception is real, as in eager
                    raise
                s.finish()
        if probing:
            self.timings[mode].append(time.perf_counter() - t0)
            if n + 1 == len(self._PATTERN):
                seg, eager = min(self.timings["S"][1:]), min(self.timings["E"])
                self.verdict = "segments" if seg < eager else "eager"
        return result


def _cut(rec: capture.Recorder, live_end: frozenset[int]) -> tuple[list[_Segment], list]:
    """The capture's segments (cut at its breaks; a segment after a host computation runs
    eagerly) and the values the program held at the end of each."""
    segments: list[_Segment] = []
    lives: list[frozenset[int]] = []
    start, eager = 0, False
    for pos, resumable, live_there in list(rec.flush_points) + [(len(rec.nodes), True,
                                                                   live_end)]:
        segments.append(_Segment(start, pos, eager))
        lives.append(live_there)
        start, eager = pos, not resumable
    return segments, lives


def _plain(r: Any) -> bool:
    """A scalar ``==`` compares exactly (NaN and DTypeName need ``_same``)."""
    if isinstance(r, tuple):
        return all(_plain(x) for x in r)
    if isinstance(r, float):
        return not math.isnan(r)
    return r is None or (isinstance(r, (bool, int, str)) and not isinstance(r, DTypeName))


def _values_in(a: Any) -> list[Value]:
    if isinstance(a, Value):
        return [a]
    if isinstance(a, (tuple, list)):
        return [v for x in a for v in _values_in(x)]
    if isinstance(a, dict):
        return [v for x in a.values() for v in _values_in(x)]
    return []
