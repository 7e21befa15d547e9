"""A segmented replay's deferral: the Python program runs, its device work waits for a break.

:class:`Session` is one replay of a :class:`~omnitensor.compiler.segments.SegmentedCall`
(the capture split at its breaks). While it runs, every loaded device's backend is an
:class:`~omnitensor.backends.interpose.Interposer` under the :class:`_Deferring` policy
(:class:`deferring`): each primitive the program calls is matched against the next
recorded node and answered with a stand-in array of the recorded shape and dtype (views run
for real); at a break the segment's plan runs and the values the program holds are copied
into its arrays; when the program leaves the capture's path, what was deferred runs
eagerly and the call finishes eagerly. See ``segments.py`` for the whole design.
"""
from __future__ import annotations

import os
import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..backends.base import HOOK, HOST_READ, HOST_VIEW, OP
from ..backends.interpose import Interposer, Policy
from ..core import capture_hooks
from ..core.device import device as _device
from . import aliasing, capture
from .replay import SELF_CHECKED, primitive
from .ir import INPLACE_OPS, VIEW_OPS, DTypeName, Node, Value, check_error
from .matching import Matcher, _np_dtype

if TYPE_CHECKING:
    from .segments import SegmentedCall, _Segment

__all__ = ["Session", "deferring"]

_DEBUG = os.environ.get("OMNITENSOR_DEBUG_SEGMENTS") == "1"


#: breaks whose result shares memory with a device array (the program may read it later,
#: with no break, or write into it)
_SHARES = frozenset(("host_view", "dlpack_export", "from_dlpack"))


def _shares(r: Any, args: tuple) -> bool:
    """Whether ``to_numpy``'s result ``r`` is the device array's own memory (cpu)."""
    x = args[0] if args else None
    return (isinstance(r, np.ndarray) and isinstance(x, np.ndarray)
            and (r is x or np.may_share_memory(r, x)))


class Session(Matcher):
    """One segmented replay: where the Python program is in the recorded nodes, and (a
    :class:`~omnitensor.compiler.matching.Matcher`) the program's array for each value."""

    def __init__(self, owner: "SegmentedCall") -> None:
        super().__init__(owner)
        self.nodes = owner.nodes
        self.k = 0                              # current segment
        self.pos = 0                            # next node
        self.draws: dict[int, tuple] = {}
        self.diverged = False
        self.eager_here = owner.segments[0].eager   # this segment runs node by node
        self.shared = False                     # host memory shared: eager to the end
        self.exports: list[Any] = []            # weak refs to host arrays sharing memory
        self.imports: list[Any] = []            # NumPy arrays from_numpy shares (cpu)
        self.index: dict[str | None, int] = {}
        self._overlap_checked = 0               # how many of them were checked
        self._overlap = False                   # two of them are different arrays over
        #                                         shared memory (a fused plan is unsafe)
        self._thread = threading.get_ident()

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
        if op in SELF_CHECKED and not self.eager_here and \
                self.real[label].checks_index_bounds:
            # it checks its indices itself (NumPy's, on cpu: core recorded no check node):
            # run for real here, as check() does, so an index out of range raises where
            # eager raises, before the program runs on
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

    def check(self, flag: Any, what: str, error: type[Exception] = RuntimeError) -> bool:
        if self.diverged or threading.get_ident() != self._thread:
            return self._read_flag(flag)
        i = self.pos
        seg = self.owner.segments[self.k]
        n = self.nodes[i] if i < seg.end else None
        if n is None or n.op != "check" or not self._same(n.args[0], flag._data):
            self.diverge("a validation differs from the capture")
            return self._read_flag(flag)
        if not self.eager_here:
            # the program must not run past a validation that fails: eager raised there,
            # before any later .grad, optimizer step or log entry (a plan checking it at
            # the break left those done with unwritten arrays). What was deferred runs
            # now; the segment goes on eagerly to its break
            self._run_pending(seg)
            self.eager_here = True
        self.pos = i + 1
        return self._read_flag(flag)

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

    def _flush_or_run(self, seg: "_Segment") -> None:
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

    def _holds_a_temp(self, seg: "_Segment") -> bool:
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

    def _flush(self, seg: "_Segment") -> None:
        if seg.plan is None:
            return
        try:
            res = seg.plan([self.py[v] for v in seg.inputs])
        except BaseException:
            # (the program's checks ran before the plan, see check(): not one of them)
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

    def _run_pending(self, seg: "_Segment") -> None:
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
                    raise check_error(n.kwargs)(n.kwargs.get("what", "a check"))
                continue
            if n.op == "random_bits":
                key, counter = self.draws[i]
                a = (a[0], key, counter, a[3])
            r = primitive(be, n.op)(*a, **kw)
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


class _Deferring(Policy):
    """A segmented replay's policy for one device's backend: each primitive and hook is
    matched against the capture and deferred (:meth:`Session.call`); each host read is a
    break, where the segment's plan runs first."""

    kinds = frozenset((OP, HOST_READ, HOST_VIEW, HOOK))

    def __init__(self, s: Session, label: str | None) -> None:
        self.s, self.label = s, label

    def wrap(self, name: str, kind: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        s, label = self.s, self.label
        if kind in (HOST_READ, HOST_VIEW):
            always = name in _SHARES

            def broken(*args: Any, **kwargs: Any) -> Any:
                s.at_break()
                r = fn(*args, **kwargs)
                if always or (r is not None and _shares(r, args)):
                    if r is args[0]:   # (cpu: the device array itself; a view of it
                        r = r.view()   # is gone after .item(), kept with .numpy())
                    s.exported(r)
                return r
            return broken
        op = "hook:" + name if kind == HOOK else name

        def deferred(*args: Any, **kwargs: Any) -> Any:
            return s.call(op, fn, label, args, kwargs)
        return deferred


class deferring:
    """Install the session as the running recorder and every loaded device's backend
    under the deferring policy; restore both on exit."""

    def __init__(self, s: Session) -> None:
        self.s = s
        self.swapped: list[tuple[Any, Any]] = []

    def __enter__(self) -> Session:
        s = self.s
        for d in capture._loaded_devices():
            real = d.__dict__["backend"]
            label = None if str(d) == s.owner.device else str(d)
            s.real[label], s.index[label] = real, d.index
            self.swapped.append((d, real))
            d.backend = Interposer(real, _Deferring(s, label))
        if None not in s.real:   # the graph's device was not loaded: load it
            d = _device(s.owner.device)
            s.real[None], s.index[None] = d.backend, d.index
        capture_hooks.set_active(s)
        return s

    def __exit__(self, *exc: Any) -> None:
        capture_hooks.set_active(None)
        for d, real in self.swapped:
            d.backend = real
        self.swapped.clear()
