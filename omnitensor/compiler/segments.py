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
import sys
import threading
import time
import weakref
from typing import Any, Callable

import numpy as np

from ..core import capture_hooks
from ..core.device import device as _device
from ..core.dtypes import as_dtype
from . import aliasing, capture, replay
from .ir import INPLACE_OPS, VIEW_OPS, DTypeName, Graph, Input, Node, Value, state_writes

__all__ = ["SegmentedCall", "NotSegmentable"]


import os
_DEBUG = os.environ.get("OMNITENSOR_DEBUG_SEGMENTS") == "1"


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


def _np_dtype(name: str) -> np.dtype:
    try:
        return np.dtype(name)
    except TypeError:
        return np.dtype(as_dtype(name).np)


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
        self.session: _Session | None = None
        self.diverged_at: str | None = None
        self.verdict: str | None = None        # "segments" or "eager" (policy=None)
        self.timings: dict[str, list[float]] = {"S": [], "E": []}
        self._specs: dict[int, tuple] = {}
        self._outs: dict[int, list] = {}
        self.view_ids: set[int] = set()        # values a view op produced
        produced: dict[int, int] = {}          # value id -> segment index
        self.segments: list[_Segment] = []
        start, eager = 0, False
        points = list(rec.flush_points) + [(len(self.nodes), True, live_end)]
        lives: list[frozenset[int]] = []
        for pos, resumable, live_there in points:
            self.segments.append(_Segment(start, pos, eager))
            lives.append(live_there)
            start, eager = pos, not resumable
        for k, seg in enumerate(self.segments):
            for n in self.nodes[seg.start:seg.end]:
                for o in n.outputs:
                    produced[o.id] = k
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
            s = _Session(self)
            self.session = s
            self.calls += 1
            with _deferring(s):
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


class _Session:
    """One segmented replay: where the Python program is in the recorded nodes, and the
    program's array for each value."""

    def __init__(self, owner: SegmentedCall) -> None:
        self.owner = owner
        self.nodes = owner.nodes
        self.k = 0                              # current segment
        self.pos = 0                            # next node
        self.py: dict[int, Any] = {}            # value id -> the program's array
        self.vid: dict[int, int] = {}           # id(array) -> its latest value id
        self.keep: list[Any] = []               # arrays kept alive (ids stay unique)
        self.binds: dict[int, int] = {}         # id(array) -> times bound (py, keep refs)
        self.viewed: dict[int, int] = {}        # id(array) -> views of it in keep
        self.draws: dict[int, tuple] = {}
        self.diverged = False
        self.eager_here = owner.segments[0].eager   # this segment runs node by node
        self.shared = False                     # host memory shared: eager to the end
        self.exports: list[Any] = []            # weak refs to host arrays sharing memory
        self.imports: list[Any] = []            # NumPy arrays from_numpy shares (cpu)
        self._loose = False                         # matching ignores scalars
        self.real: dict[str | None, Any] = {}   # device label -> real backend
        self.index: dict[str | None, int] = {}
        self.bound_inputs: list[Any] = []       # the program's arrays of graph inputs
        self._overlap_checked = 0               # how many of them were checked
        self._overlap = False                   # two of them are different arrays over
        #                                         shared memory (a fused plan is unsafe)
        self._thread = threading.get_ident()

    # ----------------------------------------------------------- matching
    def _bind(self, v: Value, arr: Any) -> None:
        self.py[v.id] = arr
        i = id(arr)
        self.vid[i] = v.id
        self.keep.append(arr)
        n = self.binds.get(i, 0)
        self.binds[i] = n + 1
        if not n:   # a view (NumPy's) references its base: keep's reference, not the program's
            b = getattr(arr, "base", None)
            if b is not None and id(b) in self.binds:
                self.viewed[id(b)] = self.viewed.get(id(b), 0) + 1

    def _same(self, r: Any, a: Any) -> bool:
        if isinstance(r, Value):
            if not capture._is_array(a):
                return False
            j = self.vid.get(id(a))
            if j is not None:
                return j == r.id
            if r.id not in self.owner.input_ids or r.id in self.py:
                return False
            if tuple(int(s) for s in a.shape) != r.shape or str(a.dtype) != r.dtype:
                return False
            if _layout(a, self.real[None]) != self.owner.in_layout.get(r.id):
                return False
            self._bind(r, a)
            self.bound_inputs.append(a)
            return True
        if isinstance(r, DTypeName):
            try:
                return _np_dtype(str(r)) == np.dtype(a)
            except TypeError:
                return False
        if isinstance(r, (tuple, list)):
            # a tuple subclass (Size, a NamedTuple) was recorded as its tuple
            return (isinstance(a, tuple) == isinstance(r, tuple)
                    and isinstance(a, (tuple, list)) and len(a) == len(r)
                    and all(self._same(x, y) for x, y in zip(r, a)))
        if isinstance(r, dict):
            return (isinstance(a, dict) and a.keys() == r.keys()
                    and all(self._same(r[k], a[k]) for k in r))
        if isinstance(a, np.generic):
            a = a.item()
        if type(a) is not type(r):
            return False
        if self._loose and isinstance(r, (int, float, complex)) and not isinstance(r, bool):
            return True
        if isinstance(r, float) and math.isnan(r):
            return math.isnan(a)
        return bool(a == r)

    def _matches(self, n: Node, args: tuple, kwargs: dict) -> bool:
        rk = n.kwargs
        if n.op == "random_bits":   # (shape, key, counter, index): the key is fresh
            rk = {k: v for k, v in rk.items() if k != "generator"}
            return (len(args) == 4 and self._same(n.args[0], args[0])
                    and self._same(n.args[3], args[3]) and self._same(rk, kwargs))
        if self._loose:
            return self._same(n.args, args) and self._same(rk, kwargs)
        # the common case, flat: values by identity, plain scalars by equality
        spec = self.owner.arg_specs(n)
        if len(args) != len(spec) or len(kwargs) != len(rk):
            return False
        vid = self.vid
        for (kind, r), a in zip(spec, args):
            if kind == 0:
                j = vid.get(id(a))
                if j == r.id:
                    continue
                if j is not None or not self._same(r, a):
                    return False
            elif kind == 1:
                try:
                    if a.__class__ is r.__class__ and a == r:
                        continue
                except (TypeError, ValueError):
                    return False
                if not self._same(r, a):
                    return False
            elif not self._same(r, a):
                return False
        return not rk or self._same(rk, kwargs)

    # ----------------------------------------------------------- primitives
    def call(self, op: str, fn: Callable[..., Any], label: str | None, args: tuple,
             kwargs: dict) -> Any:
        if self.diverged or threading.get_ident() != self._thread:
            return fn(*args, **kwargs)
        if self.exports and self._export_kept():
            self.shared_memory()   # (an item() view is gone by now; a kept .numpy() is not)
        if self.imports and self._import_kept():
            self.shared_memory()
        i = self.pos
        seg = self.owner.segments[self.k]
        n = self.nodes[i] if i < seg.end else None
        if n is None or n.op != op or n.device != label:
            # (another device than the capture's: a speculative replay is unguarded)
            self.diverge(f"{op} where the capture had {n.op if n else 'a break'}"
                         + ("" if n is None or n.device == label else
                            f" on {n.device or self.owner.device}"))
            return fn(*args, **kwargs)
        if not self._matches(n, args, kwargs):
            # the same primitive on the same values with other scalars (a number read at a
            # break, scaled into the next op): this segment goes on eagerly
            self._loose = True
            try:
                same_values = self._matches(n, args, kwargs)
            finally:
                self._loose = False
            if not same_values:
                if _DEBUG:
                    print("mismatch", i, n, [(type(a).__name__, self.vid.get(id(a)),
                                              getattr(a, "shape", a)) for a in args], kwargs)
                self.diverge(f"{op} differs from the capture")
                return fn(*args, **kwargs)
            if not self.eager_here:
                self._run_pending(seg)
                self.eager_here = True
        if i in self.owner.strided and not self.eager_here:
            # its array was not C order at the capture: a stand-in would be, and views of
            # it would alias where the program's copies did not; the segment goes on eagerly
            self._run_pending(seg)
            self.eager_here = True
        self.pos = i + 1
        if op == "random_bits":
            self.draws[i] = (args[1], args[2])
        kind = self.owner.kinds.get(i)
        if self.eager_here or op in VIEW_OPS or isinstance(kind, int) or op == "from_numpy":
            result = fn(*args, **kwargs)
            if not self._bind_result(n, kind, args, kwargs, result):
                self.diverge(f"{op} gave other shapes than the capture")
            elif op == "from_numpy" and not self.shared and _shares(result, args):
                # the device array is the program's NumPy array (cpu): it may read or
                # write that array with no break (checked at the next primitive)
                self.imports.append(args[0])
            return result
        if n.inplace_of is not None:
            target = kwargs["out"] if kwargs.get("out") is not None else args[0]
            self._bind(n.outputs[0], target)
            return target if kind == "out" else None
        be, idx = self.real[label], self.index[label]
        outs = [be.empty(shape, dt, idx) for shape, dt in self.owner.out_specs(n)]
        for v, a in zip(n.outputs, outs):
            self._bind(v, a)
        if kind == "tuple":
            return tuple(outs)
        if kind == "list":
            return outs
        return outs[0] if outs else None

    def _bind_result(self, n: Node, kind: Any, args: tuple, kwargs: dict,
                     result: Any) -> bool:
        """Bind what a primitive that ran returned; False when its shapes or dtypes are
        not the capture's (later plans could not use them)."""
        if n.inplace_of is not None:
            arrs: Any = (kwargs["out"] if kwargs.get("out") is not None else args[0],)
        elif kind in ("tuple", "list"):
            arrs = result
        elif n.outputs:
            arrs = (result,)
        else:
            return True
        ok = len(arrs) == len(n.outputs)
        for v, a in zip(n.outputs, arrs):
            ok = ok and tuple(int(x) for x in a.shape) == v.shape and str(a.dtype) == v.dtype
            self._bind(v, a)
        return ok

    # ----------------------------------------------------------- capture_hooks API
    def region(self, name: str, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        return fn(*args, **kwargs)

    def check(self, flag: Any, what: str) -> bool:
        if self.diverged or threading.get_ident() != self._thread:
            return self._read_flag(flag)
        i = self.pos
        seg = self.owner.segments[self.k]
        n = self.nodes[i] if i < seg.end else None
        if n is None or n.op != "check" or not self._same(n.args[0], flag._data):
            self.diverge("a validation differs from the capture")
            return self._read_flag(flag)
        self.pos = i + 1
        if self.eager_here:
            return self._read_flag(flag)
        return True   # the segment's plan checks it and raises there

    def _read_flag(self, flag: Any) -> bool:
        label = None if str(flag._device) == self.owner.device else str(flag._device)
        return bool(self.real[label].to_numpy(flag._data).reshape(()).item())

    def host_compute(self, what: str) -> None:
        self.at_break()

    def host_read(self, what: str, resumable: bool = False) -> None:
        self.at_break()

    def random_draw(self, generator: Any) -> None:
        pass

    # ----------------------------------------------------------- breaks
    def at_break(self) -> None:
        """A break: run the segment's plan, copy out what the program holds, go on."""
        if self.diverged or threading.get_ident() != self._thread:
            return
        segs = self.owner.segments
        seg = segs[self.k]
        if self.pos != seg.end or self.k + 1 >= len(segs):
            self.diverge("a graph break where the capture had none")
            return
        if not self.eager_here:
            self._flush_or_run(seg)
        self.k += 1
        self.eager_here = segs[self.k].eager or self.shared

    def exported(self, r: Any) -> None:
        """A host read returned ``r``: when it shares memory with a device array (``.numpy()``
        on cpu, a DLPack export) and the program keeps it, the program may read it later
        with no break, so from then on nothing is deferred (see :meth:`call`)."""
        if self.diverged or self.shared or threading.get_ident() != self._thread:
            return
        try:
            self.exports.append(weakref.ref(r))
        except TypeError:   # no weak reference: assume it is kept
            self.shared_memory()

    def _import_kept(self) -> bool:
        """Whether the program holds a NumPy array a device array shares (``from_numpy``);
        references besides the program's: the session's (py, keep, views of it)."""
        binds, viewed, getrefcount = self.binds, self.viewed, sys.getrefcount
        for a in self.imports:
            i = id(a)
            # (+ the list's entry, ``a`` and getrefcount's argument)
            if getrefcount(a) > 2 * binds.get(i, 0) + viewed.get(i, 0) + 3:
                return True
        self.imports.clear()
        return False

    def _export_kept(self) -> bool:
        self.exports = [w for w in self.exports if w() is not None]
        return bool(self.exports)

    def shared_memory(self) -> None:
        """The rest of the call runs node by node (what was deferred runs now)."""
        if not self.eager_here:
            self._run_pending(self.owner.segments[self.k])
        self.shared = self.eager_here = True

    def finish(self) -> None:
        if self.diverged:
            return
        segs = self.owner.segments
        if self.k != len(segs) - 1 or self.pos != len(self.nodes):
            self.diverge("the call ended elsewhere than the capture")
            return
        if not self.eager_here:
            self._flush_or_run(segs[self.k])

    def abandon(self) -> None:
        """The program raised: run what this segment deferred; nothing more."""
        if not self.diverged and not self.eager_here:
            self.diverged = True
            self._run_pending(self.owner.segments[self.k])
        self.diverged = True

    def _inputs_overlap(self) -> bool:
        """Whether two of the arrays bound to graph inputs so far are different arrays over
        shared memory (the capture's were not, or its plans would be unfused)."""
        bound = self.bound_inputs
        if len(bound) > self._overlap_checked:
            self._overlap_checked = len(bound)
            self._overlap = len(bound) > 1 and aliasing.any_overlap(bound, self.real[None])
        return self._overlap

    def _flush_or_run(self, seg: _Segment) -> None:
        """At a break: the segment's plan, unless the program now holds a value the capture
        saw dropped (stored on some calls only: ``if step % 10 == 0: saved.append(h)``),
        or its inputs share memory where the capture's did not (a fused plan may reorder
        a read and a write): the segment's nodes run one by one then."""
        if seg.fused and self._inputs_overlap():
            self._run_pending(seg)
        elif self._holds_a_temp(seg):
            self.owner.held_temps += 1
            if _DEBUG:
                print("omnitensor segments: a value the capture dropped is held: eager "
                      f"segment at {capture.user_location()}")
            self._run_pending(seg)
        else:
            self._flush(seg)

    def _holds_a_temp(self, seg: _Segment) -> bool:
        py, binds, viewed, getrefcount = self.py, self.binds, self.viewed, sys.getrefcount
        done = {id(py[v]) for v, _ in seg.outs}
        for v in seg.temps:
            a = py.get(v)
            if a is None:
                continue
            i = id(a)
            if i in done:
                continue
            done.add(i)
            # references besides the program's: py and keep (one each per bind), views
            # of it in keep, ``a`` and getrefcount's argument
            if getrefcount(a) > 2 * binds.get(i, 0) + viewed.get(i, 0) + 2:
                if _DEBUG:
                    print("omnitensor segments: held:", v, getrefcount(a) - 2,
                          binds.get(i, 0), viewed.get(i, 0))
                return True
        return False

    def _flush(self, seg: _Segment) -> None:
        if seg.plan is None:
            return
        try:
            res = seg.plan([self.py[v] for v in seg.inputs])
        except BaseException:
            # a check failed inside the plan (cross_entropy's target range): what ran before
            # it stays done, as in eager; nothing is run again
            self.diverged = True
            raise
        views = self.owner.view_ids
        for (v, label), r in zip(seg.outs, res):
            dst = self.py[v]
            if r is dst:
                continue
            if v in views:   # a copy (reshape of a strided array) needs it; a view
                try:         # holds it already, and a broadcast is read-only
                    self.real[label].assign(dst, r)
                except Exception:  # noqa: BLE001
                    pass
            else:
                self.real[label].assign(dst, r)

    def diverge(self, why: str) -> None:
        """The program left the capture's path: run what this segment deferred, eagerly,
        into the program's arrays; the rest of the call runs eagerly."""
        owner = self.owner
        self.diverged = True
        owner.divergences += 1
        owner.diverged_at = f"{why} at {capture.user_location()}"
        if _DEBUG:
            print("omnitensor segments: diverged:", owner.diverged_at)
        if not self.eager_here:
            self._run_pending(owner.segments[self.k])

    def _run_pending(self, seg: _Segment) -> None:
        """Run the nodes this segment deferred so far, one by one, into the program's
        arrays (views ran already; they run again so copies of then-stale data are
        refreshed)."""
        for i in range(seg.start, self.pos):
            n = self.nodes[i]
            be = self.real[n.device]
            a = self._resolve(n.args)
            kw = {k: self._resolve(v) for k, v in n.kwargs.items() if k != "generator"}
            if n.op == "check":
                if not bool(be.to_numpy(a[0]).reshape(()).item()):
                    raise RuntimeError(n.kwargs.get("what", "a check"))
                continue
            if n.op == "random_bits":
                key, counter = self.draws[i]
                a = (a[0], key, counter, a[3])
            f = be.hook(n.op[5:]) if n.op.startswith("hook:") else getattr(be, n.op)
            r = f(*a, **kw)
            if n.inplace_of is not None or n.op in INPLACE_OPS or not n.outputs:
                continue
            rs = r if isinstance(r, (tuple, list)) else (r,)
            for v, x in zip(n.outputs, rs):
                dst = self.py[v.id]
                if x is dst:
                    continue
                if n.op in VIEW_OPS:   # a copy of stale data, or a view of its operand
                    try:               # (now real; broadcasts are read-only)
                        be.assign(dst, x)
                    except Exception:  # noqa: BLE001
                        pass
                else:
                    be.assign(dst, x)

    def _resolve(self, a: Any) -> Any:
        if isinstance(a, Value):
            return self.py[a.id]
        if isinstance(a, DTypeName):
            return _np_dtype(str(a))
        if isinstance(a, tuple):
            return tuple(self._resolve(x) for x in a)
        if isinstance(a, list):
            return [self._resolve(x) for x in a]
        return a


def _layout(a: Any, backend: Any) -> tuple[int, ...]:
    """An input's layout as the graph device's backend reports it: its strides (a
    transposed argument gives results in its layout, ``contiguous()`` copies it, and a
    fused kernel was generated for the capture's strides)."""
    return tuple(backend.strides(a))


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


#: breaks whose result shares memory with a device array (the program may read it later,
#: with no break, or write into it)
_SHARES = frozenset(("host_view", "dlpack_export", "from_dlpack"))


def _shares(r: Any, args: tuple) -> bool:
    """Whether ``to_numpy``'s result ``r`` is the device array's own memory (cpu)."""
    x = args[0] if args else None
    return (isinstance(r, np.ndarray) and isinstance(x, np.ndarray)
            and (r is x or np.may_share_memory(r, x)))


class _DeferringProxy:
    """Stands for one device's backend during a segmented replay."""

    def __init__(self, real: Any, s: _Session, label: str | None) -> None:
        d = self.__dict__
        d["_real"], d["_s"], d["_label"] = real, s, label

    def __getattr__(self, name: str) -> Any:
        real, s, label = self._real, self._s, self._label
        attr = getattr(real, name)
        if not callable(attr) or name in capture._PASSTHROUGH:
            return attr
        if name in capture._BREAKS:
            always = name in _SHARES

            def broken(*args: Any, **kwargs: Any) -> Any:
                s.at_break()
                r = attr(*args, **kwargs)
                if always or (r is not None and _shares(r, args)):
                    if r is args[0]:   # (cpu: the device array itself; a view of it
                        r = r.view()   # is gone after .item(), kept with .numpy())
                    s.exported(r)
                return r
            w: Any = broken
        elif name == "hook":
            def hook(hname: str) -> Any:
                fn = real.hook(hname)
                if fn is None:
                    return None
                op = "hook:" + hname
                return lambda *a, **k: s.call(op, fn, label, a, k)
            w = hook
        else:
            op = "hook:" + name if name in capture.OPTIONAL_HOOKS else name

            def deferred(*args: Any, **kwargs: Any) -> Any:
                return s.call(op, attr, label, args, kwargs)
            w = deferred
        self.__dict__[name] = w
        return w

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._real, name, value)


class _deferring:
    """Install the session as the running recorder and the deferring proxies."""

    def __init__(self, s: _Session) -> None:
        self.s = s
        self.swapped: list[tuple[Any, Any]] = []

    def __enter__(self) -> _Session:
        s = self.s
        for d in capture._loaded_devices():
            real = d.__dict__["backend"]
            label = None if str(d) == s.owner.device else str(d)
            s.real[label], s.index[label] = real, d.index
            self.swapped.append((d, real))
            d.backend = _DeferringProxy(real, s, label)
        if None not in s.real:   # the graph's device was not loaded: load it
            d = _device(s.owner.device)
            s.real[None], s.index[None] = d.backend, d.index
        capture_hooks.set_active(s)  # type: ignore[arg-type]
        return s

    def __exit__(self, *exc: Any) -> None:
        capture_hooks.set_active(None)
        for d, real in self.swapped:
            d.backend = real
        self.swapped.clear()
