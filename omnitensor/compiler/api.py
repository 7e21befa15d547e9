"""``omnitensor.compile``: capture one call per guard key, replay it after.

The first call with a new guard key (see ``guards.py``) runs eagerly under the recorder
(``capture.py``): its results are the eager results, and it leaves a
:class:`~omnitensor.compiler.ir.Graph` of everything the call ran on the device, forward,
backward and optimizer update alike. Later calls with the same key replay the graph's plan
(``replay.py``) on the current arrays of the same tensors, then do what the Python call did
to Python-visible state:

* rebind the slots it rebound: new ``.grad`` tensors (``zero_grad()`` then ``backward``),
  optimizer state tensors; writes into parameters and state are real in-place writes;
* bump the version counters it bumped;
* draw fresh random numbers from the generators it drew from (dropout masks differ between
  calls, and a seeded compiled run equals a seeded eager run).

A call a graph cannot stand for runs eagerly for that key, with one warning naming why and
where (a graph break: ``.item()``, ``bool(t)``, printing, ``nonzero``, a changed Python
scalar such as an int step counter, outputs that require grad with the backward outside the
call); with ``fullgraph=True`` a break raises :class:`~omnitensor.compiler.Unsupported`
naming the user's line. A changed guard retraces; after ``config.cache_size_limit``
(8, torch's) traces a function warns once and runs eagerly for new keys.
"""
from __future__ import annotations

import functools
import os
import threading
import types
import warnings
import weakref
from typing import Any, Callable

from ..core import autocast_state as _autocast
from ..core import capture_hooks
from ..core.tensor import _make
from . import aot, capture, replay, segments
# importing the fusion package registers its planner passes with replay (every plan built
# with passes=None runs them), before the first capture rather than by the first one's path
from . import fusion  # noqa: F401
from .entry import (MISSING, Entry, NotGraph, StartState, bind_state, build_plan,
                    concurrent_build, result_template, upgrade_later)
from .guards import Discovery, discover
from .ir import Graph, state_writes

__all__ = ["CompiledFunction", "config"]

class _Config:
    """``omnitensor.compiler.config`` (torch's ``torch._dynamo.config`` names)."""

    cache_size_limit = 8
    #: ``False`` makes every compiled function run eagerly (a debugging switch)
    enabled = True
    #: fused kernels (``compiler/fusion``): False replays every graph unfused (the
    #: reference interpreter); True or None (default) runs the registered planner passes;
    #: read when a call is captured
    fuse: bool | None = None
    #: graph breaks: None (default) splits a call into compiled segments and keeps them
    #: when they measure faster than eager for that key (``compiler/segments.py``); True
    #: always splits; False runs such calls eagerly
    segments: bool | None = None
    #: a new key replays unfused at once while its fused kernels are compiled (numba,
    #: OpenCL, dpctl) on a background thread; the fused plan replaces it when ready. False
    #: (or ``OMNITENSOR_COMPILE_BACKGROUND=0``) builds them before the first replay
    fuse_in_background: bool = os.environ.get("OMNITENSOR_COMPILE_BACKGROUND", "1") != "0"


config = _Config()
_ALL: "weakref.WeakSet[CompiledFunction]" = weakref.WeakSet()


#: held by the thread whose compiled call may swap the backends (a capture, a segmented
#: replay); re-entrant for compiled calls nested in it
_SWAPPING = threading.RLock()


class CompiledFunction:
    """What ``omnitensor.compile(fn)`` returns for a function (see the module docstring)."""

    def __init__(self, fn: Callable[..., Any], fullgraph: bool = False,
                 dynamic: bool | None = None) -> None:
        self._fn = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self._cache: dict[Any, Entry] = {}
        self.traces = 0
        self._limit_warned = False
        self._warned: set[str] = set()
        self._last_segmented: segments.SegmentedCall | None = None
        self._served: segments.SegmentedCall | None = None   # the last that served a call
        self._speculation_misses = 0
        self._segmented_calls = 0     # calls the last segmented capture served unguarded
        self._retraced: set[Any] = set()
        #: this function's cap on traces (torch.compile's recompile_limit); None: the config's
        self.recompile_limit: int | None = None
        self.name: str | None = None
        functools.update_wrapper(self, fn, updated=())
        _ALL.add(self)

    # ---------------------------------------------------------------- the call
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn = self._fn
        if not config.enabled or capture_hooks.active() is not None:
            return fn(*args, **kwargs)   # nested in an outer capture: part of its graph
        if not _SWAPPING.acquire(blocking=False):
            # another thread captures or replays segments (the backends are swapped
            # process-wide): this call runs eagerly, on the real backends
            return fn(*args, **kwargs)
        try:
            return self._call(fn, args, kwargs)
        finally:
            _SWAPPING.release()

    def _call(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        sc = self._last_segmented
        if sc is not None and self._speculation_misses < 4:
            # a segmented replay needs no guards (it checks every primitive against the
            # capture as the Python runs): the last one that served goes first
            served, result = self._speculate(sc, args, kwargs)
            if served:
                self._served = sc
            else:                     # it finished eagerly; the next call looks up its key
                self._last_segmented = None
            return result
        d = discover(fn, args, kwargs)
        try:
            key = tuple(d.key)
            entry = self._cache.get(key)
        except TypeError:   # an unhashable argument
            return self._eager("an argument that cannot be guarded (unhashable)", fn,
                               args, kwargs)
        if entry is not None and entry.segments is not None:
            return self._segmented(entry, key, args, kwargs)
        if entry is not None and entry.reason is not None:
            result = fn(*args, **kwargs)   # this key cannot be replayed: eager
            return result
        if entry is not None:
            return self._replay(entry, d)
        sc = self._served
        if sc is not None and self._speculation_misses < 4:
            # a new key (another scalar argument: a batch number) after one call took
            # another path: the capture that served before goes first again, unguarded
            served, result = self._speculate(sc, args, kwargs)
            if served:
                self._last_segmented = sc
            else:
                self._served = None            # the next new key is traced
            return result
        limit = config.cache_size_limit if self.recompile_limit is None \
            else self.recompile_limit
        if self.traces >= limit:
            if not self._limit_warned:
                self._limit_warned = True
                what = "config.cache_size_limit" if self.recompile_limit is None \
                    else "recompile_limit"
                warnings.warn(
                    f"omnitensor.compile: {getattr(fn, '__qualname__', fn)!s} hit "
                    f"{what} ({limit}) recompiles; new "
                    f"guard keys run eagerly. The last change that retraced: shapes, "
                    f"dtypes, grad mode, train/eval, parameters, optimizer state or "
                    f"hyperparameters, scalar arguments (torch._dynamo's warning).",
                    UserWarning, stacklevel=2)
            return fn(*args, **kwargs)
        self.traces += 1
        entry = Entry()
        result = self._trace(entry, d, args, kwargs)
        self._cache[key] = entry
        tag = entry.reason
        if tag is not None and tag.startswith("the call changes"):
            tag = tag.split(" (")[0]    # the same Python value with other contents
        if tag is not None and tag not in self._warned:   # once per kind of break
            self._warned.add(tag)
            if entry.segments is not None:
                n = len(entry.segments.segments)
                warnings.warn(f"omnitensor.compile: graph break: {entry.reason}; calls like "
                              f"this one run as {n} segments, the device work of each "
                              f"replayed compiled, the Python between them eagerly",
                              UserWarning, stacklevel=2)
            else:
                warnings.warn(f"omnitensor.compile: graph break: {entry.reason}; calls like "
                              f"this one run eagerly", UserWarning, stacklevel=2)
        return result

    def _speculate(self, sc: segments.SegmentedCall, args: tuple, kwargs: dict
                   ) -> tuple[bool, Any]:
        """Run the segmented capture ``sc`` without guards: ``(True, result)`` when it
        served the call, ``(False, result)`` when the call took another path (it finished
        eagerly, so the result is right either way)."""
        before = sc.divergences
        result = sc(self._fn, args, kwargs, config.segments)
        if sc.divergences == before:
            self._segmented_calls += 1
            self._speculation_misses = 0   # (a print every N calls must not end it)
            return True, result
        sc.divergences = before           # a miss is not the capture's divergence
        self._speculation_misses += 1
        return False, result

    def _segmented(self, e: Entry, key: Any, args: tuple, kwargs: dict) -> Any:
        sc = e.segments
        assert sc is not None
        before = sc.divergences
        result = sc(self._fn, args, kwargs, config.segments)
        e.replays += 1
        if sc.divergences == before:
            self._last_segmented = self._served = sc
            self._speculation_misses = 0
            return result
        if key not in self._retraced:
            # the capture may have filled caches (a class range, autocast casts) that later
            # calls read instead of recomputing: capture again once
            self._retraced.add(key)
            del self._cache[key]
            if self._last_segmented is sc:
                self._last_segmented = None
            if self._served is sc:
                self._served = None
        else:   # this key's path depends on data: eager from now on
            if self._served is sc:
                self._served = None
            e.segments = None
            e.reason = f"the call takes another path after its graph breaks ({sc.diverged_at})"
            if e.reason not in self._warned:
                self._warned.add(e.reason)
                warnings.warn(f"omnitensor.compile: {e.reason}; calls like this one run "
                              f"eagerly", UserWarning, stacklevel=3)
        return result

    def _eager(self, why: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
        if why not in self._warned:
            self._warned.add(why)
            warnings.warn(f"omnitensor.compile: {why}: running eagerly", UserWarning,
                          stacklevel=3)
        return fn(*args, **kwargs)

    # ---------------------------------------------------------------- capture
    def _trace(self, e: Entry, d0: Discovery, args: tuple, kwargs: dict) -> Any:
        """Run the call once under the recorder and fill ``e`` with its replay (or with the
        reason it runs eagerly); returns the call's result."""
        fn = self._fn
        # inputs that are different arrays over shared memory: a fused plan could read one
        # after writing the other where eager read first; the recorded order is eager's
        unfused = config.fuse is False or d0.overlapping
        start = StartState(d0)
        if _autocast.state.active:
            # casts autocast cached before the call would be read as constants: recast
            _autocast.clear_cache()
        rec = capture.Recorder(capture.graph_device(args, kwargs, fn), d0.sources(),
                               hooks=True, fullgraph=self.fullgraph)
        sp = None
        with capture.recording(rec):
            result = fn(*args, **kwargs)
            # what the program still holds at the end (a segmented replay copies it out)
            live_end = rec.live_values() if rec.breaks else frozenset()
            rg = self._outputs_needing_backward(result, d0, start.slots, start.versions)
            if rg and not rec.breaks:
                try:
                    sp = aot.capture_backward(rec, rg)
                except Exception as err:  # noqa: BLE001 - an uncapturable backward: eager
                    e.reason = f"the backward of the result cannot be captured ({err})"
                    return result
        try:
            self._replay_of(e, rec, result, live_end, start, sp, rg, unfused, args, kwargs)
        except NotGraph as err:
            e.reason = str(err)
        return result

    def _replay_of(self, e: Entry, rec: capture.Recorder, result: Any, live_end: frozenset,
                   start: StartState, sp: aot.Split | None, rg: list, unfused: bool,
                   args: tuple, kwargs: dict) -> None:
        """Fill ``e`` from a finished recording; raises :class:`NotGraph` with the reason
        the call must run eagerly."""
        if isinstance(result, (types.GeneratorType, types.CoroutineType,
                               types.AsyncGeneratorType)):
            # its body runs after the call returns, outside the capture: nothing to replay
            raise NotGraph("the function returns a generator or coroutine (its body runs "
                            "later)")
        d0 = start.discovery
        d1 = discover(self._fn, args, kwargs)
        why = self._why_not(rec, d0, d1)
        if why is not None:
            e.reason = why
            if rec.breaks and config.segments is not False:
                try:
                    e.segments = segments.SegmentedCall(rec, live_end, () if unfused else None)
                    self._last_segmented = e.segments
                except segments.NotSegmentable as err:
                    e.reason = f"{why} (and it cannot be split there: {err})"
            return
        extra, grads_changed = bind_state(e, rec.values, start, d1)
        outs, requires_grad, out_index = result_template(e, result, rec.values, d1)
        if requires_grad and not grads_changed and sp is None:
            raise NotGraph("the result requires grad and the backward runs outside the "
                            "compiled function, with respect to nothing the capture can see")
        # outputs: the result's tensors, then what the call stored in Python slots
        graph = rec.graph(outs + extra, state_writes([i.value for i in rec.inputs], rec.nodes))
        graph.input_arrays = {}   # (trace() keeps them for exporters; a cache must not)
        gens = {i: g for i, g in rec.random_gens.items()}
        planned = graph
        if sp is not None:
            try:
                planned = aot.split(graph, sp, gens, passes=() if unfused else None)
            except Exception as err:  # a backward we cannot plan: eager
                raise NotGraph(f"the captured backward cannot be planned ({err})") from err
            names0 = {id(t): n for n, t in d0.tensors.items()}
            e.aot = sp
            e.aot_outs = [out_index[id(t)] for t in rg]
            e.aot_inputs = [names0[id(t)] for t, _v in sp.diff_inputs]
            e.n_extra = len(extra)
        tiered = (sp is None and not unfused and config.fuse_in_background
                  and bool(replay.PLANNERS) and concurrent_build(graph.device))
        e.plan = build_plan(planned, gens, unfused=unfused or tiered)
        if tiered:
            # replay unfused now, swap in the fused plan when its kernels are built
            e.upgrade = upgrade_later(e, graph, gens)
        self._finish_entry(e, graph, outs, rec, d0)

    @staticmethod
    def _finish_entry(e: Entry, graph: Graph, outs: list, rec: capture.Recorder,
                      d0: Discovery) -> None:
        e.graph = graph
        e.n_out = len(outs)
        names = {id(t): n for n, t in d0.tensors.items()}
        for _inp, owner, arr in zip(rec.inputs, rec.input_tensors, rec.input_arrays):
            if owner is not None and id(owner) in names:
                e.inputs.append((names[id(owner)], None))
            else:
                e.inputs.append((None, arr))

    def wait_for_kernels(self, timeout: float | None = None) -> bool:
        """Wait until the fused plans being built in the background
        (``config.fuse_in_background``) replace the unfused ones; True when none is left
        building."""
        for e in list(self._cache.values()):
            t = e.upgrade
            if t is not None:
                t.join(timeout)
                if t.is_alive():
                    return False
        return True

    @staticmethod
    def _outputs_needing_backward(result: Any, d0: Discovery, start_slots: dict,
                                  start_versions: dict) -> list:
        """The result's tensors with an autograd history, when the call ran no backward
        itself (a compiled forward whose backward the caller runs)."""
        found: list = []
        capture.tensors_in(result, found)
        known = {id(t) for t in d0.tensors.values()}
        rg = [t for t in dict.fromkeys(found) if t.grad_fn is not None and id(t) not in known]
        if not rg:
            return []
        for name, slot in d0.iter_slots():
            if name.endswith(".grad") and slot.get() is not start_slots.get(name):
                return []
        for name, t in d0.tensors.items():
            if name.endswith(".grad") and t._version != start_versions[name]:
                return []
        return rg

    @staticmethod
    def _why_not(rec: capture.Recorder, d0: Discovery, d1: Discovery) -> str | None:
        if rec.breaks:
            return rec.breaks[0]
        for i, n in enumerate(rec.nodes):
            if n.op == "random_bits" and i not in rec.random_gens:
                return "a random draw the capture cannot attribute to a generator"
        changed = [k for k in set(d0.scalars) | set(d1.scalars)
                   if d0.scalars.get(k, MISSING) != d1.scalars.get(k, MISSING)]
        if changed:
            k = sorted(changed)[0]
            return (f"the call changes the Python value {k} "
                    f"({d0.scalars.get(k, '<unset>')!r} -> {d1.scalars.get(k, '<unset>')!r}), "
                    f"which a replay cannot repeat")
        return None

    # ---------------------------------------------------------------- replay
    def _replay(self, e: Entry, d: Discovery) -> Any:
        tensors = d.tensors
        arrays = [tensors[n]._data if n is not None else a for n, a in e.inputs]
        res = e.plan(arrays)  # type: ignore[misc]
        n_out = e.n_out
        for slot, i, dev, dt in e.bindings:
            slot.set(None if i is None else _make(res[n_out + i], dev, dt))
        for name, i in e.data_bindings:
            tensors[name]._data = res[n_out + i]
        for name, delta in e.bumps:
            t = tensors[name]
            base = t._base if t._base is not None else t
            base._vc += delta
        e.replays += 1
        meta = e.out_meta
        made = [_make(res[i], dev, dt) for i, (dev, dt) in enumerate(meta)]
        if e.aot is not None:
            aot.attach(e.aot, [made[i] for i in e.aot_outs], res[n_out + e.n_extra:],
                       [tensors[n] for n in e.aot_inputs])

        def build(t: Any) -> Any:
            tag, x = t
            if tag == "T":
                return made[x]
            if tag == "S":
                return tensors[x]
            if tag == "C":
                return x
            if tag is dict:
                return {k: build(v) for k, v in x}
            if hasattr(tag, "_fields"):
                return tag(*(build(v) for v in x))
            return tag(build(v) for v in x)
        return build(e.template)

    # ---------------------------------------------------------------- introspection
    def graphs(self) -> list[Graph]:
        """The captured graphs of this function's replayable guard keys."""
        return [e.graph for e in self._cache.values() if e.graph is not None]

    def cache_info(self) -> dict[str, Any]:
        """``traces`` (captures so far), ``entries`` (guard keys), ``replayable`` keys,
        ``replays`` and the ``breaks`` (reasons a key runs eagerly)."""
        es = list(self._cache.values())
        return {"traces": self.traces, "entries": len(es),
                "replayable": sum(e.reason is None for e in es),
                "segmented": sum(e.segments is not None for e in es),
                "replays": sum(e.replays for e in es) + self._segmented_calls,
                "breaks": [e.reason for e in es if e.reason is not None]}

    def _reset(self) -> None:
        self._cache.clear()
        self.traces = 0
        self._limit_warned = False
        self._warned.clear()
        self._last_segmented = self._served = None
        self._speculation_misses = 0
        self._segmented_calls = 0
        self._retraced.clear()
