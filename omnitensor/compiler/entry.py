"""One guard key's capture (:class:`Entry`) and the steps that fill it from a finished
recording: the state a replay stores back (:func:`bind_state`), the result's structure
(:func:`result_template`) and the plan (:func:`build_plan`, :func:`upgrade_later`). A step
that finds the call cannot be replayed raises :class:`NotGraph` with the reason
(``api.CompiledFunction`` then runs that key eagerly)."""
from __future__ import annotations

import atexit
import threading
import time
import warnings
import weakref
from typing import Any

from ..core.tensor import Tensor
from . import aot, capture, replay, segments
from .guards import Discovery
from .ir import Graph

#: "no value" for slot and scalar lookups (None is a value)
MISSING = object()


class Entry:
    """One guard key's capture: its plan, or why it runs eagerly."""

    def __init__(self) -> None:
        self.reason: str | None = None          # None: replayable
        self.plan: replay.Plan | None = None
        self.graph: Graph | None = None
        self.inputs: list[tuple[str | None, Any]] = []   # (tensor name, or None + array)
        self.n_out = 0
        self.template: Any = None
        self.out_meta: list[tuple[Any, Any]] = []         # (device, dtype) per output
        self.bindings: list[tuple[Any, int | None, Any, Any]] = []  # slot, index, dev, dtype
        self.data_bindings: list[tuple[str, int]] = []
        self.bumps: list[tuple[str, int]] = []
        self.replays = 0
        self.aot: aot.Split | None = None         # a forward whose backward runs outside
        self.aot_outs: list[int] = []
        self.aot_inputs: list[str] = []
        self.n_extra = 0
        self.segments: segments.SegmentedCall | None = None   # a call with graph breaks
        self.upgrade: threading.Thread | None = None   # building the fused plan
        self.upgrade_error: str | None = None



class NotGraph(Exception):
    """Why a recorded call cannot be replayed (it runs eagerly): the message says."""


class StartState:
    """What a call's tensors and Python slots held before it ran (a capture compares the
    state after the call with it)."""

    def __init__(self, d0: Discovery) -> None:
        self.discovery = d0
        self.slots = {n: s.get() for n, s in d0.iter_slots()}
        self.data = {n: t._data for n, t in d0.tensors.items()}
        self.versions = {n: t._version for n, t in d0.tensors.items()}


def bind_state(e: Entry, values: dict, start: StartState, d1: Discovery) -> tuple[list, bool]:
    """The graph values a replay must store back: slots the call rebound (new ``.grad``
    tensors, new optimizer state) and storages it replaced, recorded in ``e``; and the
    version bumps of the tensors it wrote. Returns (extra outputs, whether a grad changed)."""
    extra: list = []
    grads_changed = False
    for name, slot in d1.iter_slots():
        new = slot.get()
        if new is start.slots.get(name, MISSING):
            continue
        if not (name.endswith(".grad") or ".state[" in name):
            raise NotGraph(f"the call rebinds the parameter or buffer {name}")
        grads_changed = grads_changed or name.endswith(".grad")
        if new is None:
            e.bindings.append((slot, None, None, None))
            continue
        v = values.get(id(new._data))
        if v is None:
            raise NotGraph(f"the call stores a tensor the graph did not produce in {name}")
        e.bindings.append((slot, len(extra), new._device, new._dtype))
        extra.append(v)
    bumped: set[int] = set()     # one bump per storage (a tensor passed twice)
    for name, t in start.discovery.tensors.items():
        if d1.tensors.get(name) is not t:
            continue
        if t._data is not start.data[name]:
            v = values.get(id(t._data))
            if v is None:
                raise NotGraph(f"the call replaced the storage of {name}")
            e.data_bindings.append((name, len(extra)))
            extra.append(v)
        delta = t._version - start.versions[name]
        base = t._base if t._base is not None else t
        if delta and id(base) not in bumped:
            bumped.add(id(base))
            e.bumps.append((name, delta))
            grads_changed = grads_changed or name.endswith(".grad")
    return extra, grads_changed


def result_template(e: Entry, result: Any, values: dict,
                     d1: Discovery) -> tuple[list, list, dict[int, int]]:
    """``e.template``: the result's structure with its tensors by output index (or, for a
    tensor the call was given, by name). Returns (output values, the outputs that require
    grad, output index by tensor id)."""
    by_id = {id(t): n for n, t in d1.tensors.items()}
    outs: list = []
    requires_grad: list = []
    out_index: dict[int, int] = {}

    def tmpl(o: Any) -> Any:
        if isinstance(o, Tensor):
            if id(o) in by_id:
                return ("S", by_id[id(o)])
            v = values.get(id(o._data))
            if v is None:
                raise NotGraph("the result holds a tensor the graph did not produce")
            if o.requires_grad:
                requires_grad.append(o)
            outs.append(v)
            out_index[id(o)] = len(outs) - 1
            e.out_meta.append((o._device, o._dtype))
            return ("T", len(outs) - 1)
        if type(o) in (tuple, list) or (isinstance(o, tuple) and hasattr(o, "_fields")):
            return (type(o), [tmpl(x) for x in o])
        if type(o) is dict:
            return (dict, [(k, tmpl(x)) for k, x in o.items()])
        found: list = []
        capture.tensors_in(o, found)
        if found:
            raise NotGraph(f"the result holds tensors in a {type(o).__name__}")
        return ("C", o)
    e.template = tmpl(result)
    return outs, requires_grad, out_index


def build_plan(graph: Graph, gens: dict, unfused: bool) -> replay.Plan:
    """The replay of ``graph``: with the planner passes unless ``unfused``; a failing pass
    warns and replays unfused; a graph no plan can run raises :class:`NotGraph`."""
    try:
        return replay.build_plan(graph, generators=gens, passes=() if unfused else None)
    except Exception as err:  # a planner pass failed: replay unfused
        if unfused:
            raise NotGraph(f"the captured graph cannot be planned ({err})") from err
        if replay.PLANNERS:
            warnings.warn(f"omnitensor.compile: planning fused kernels failed ({err!r}); "
                          f"replaying unfused", UserWarning, stacklevel=5)
    try:
        return replay.build_plan(graph, generators=gens, passes=())
    except Exception as err2:  # a plan we cannot build runs eagerly
        raise NotGraph(f"the captured graph cannot be planned ({err2})") from err2


def concurrent_build(device: str) -> bool:
    """Whether the device's fused kernels may be built while replays run (its fused-kernel
    launcher's ``CONCURRENT_BUILD``, default True)."""
    from ..backends.registry import get_backend
    from ..errors import BackendUnavailableError
    from .fusion.passes import launcher_for
    try:
        make = launcher_for(get_backend(device.split(":")[0]))
    except BackendUnavailableError:  # the device's runtime is not installed
        return True
    return bool(getattr(make, "CONCURRENT_BUILD", True))


def upgrade_later(e: Entry, graph: Graph, gens: dict) -> threading.Thread:
    """Build ``graph``'s fused plan on a thread; it replaces ``e.plan`` when done (an
    assignment: a replay reads ``e.plan`` once per call). A failure keeps the unfused plan
    and is kept in ``e.upgrade_error``."""
    def build() -> None:
        try:
            plan = replay.build_plan(graph, generators=gens, passes=None)
        except Exception as err:  # noqa: BLE001 - fusion is an optimisation
            e.upgrade_error = repr(err)
            return
        e.plan = plan
    t = threading.Thread(target=build, name="omnitensor-fusion", daemon=True)
    t.start()
    _upgrades.add(t)
    return t


#: fused-plan builds still running (see :func:`_finish_upgrades`)
_upgrades: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


@atexit.register
def _finish_upgrades() -> None:
    """At exit, let running builds finish (within 60 s in all). A daemon thread caught in
    a driver call while the interpreter finalizes is unwound by force, and drivers whose
    entry points catch every exception abort the process there (Intel's OpenCL CPU runtime:
    "FATAL: exception not rethrown")."""
    deadline = time.monotonic() + 60
    for t in list(_upgrades):
        t.join(max(0.0, deadline - time.monotonic()))
