"""``profile``: torch.profiler.profile's interface and step/schedule state machine.

``prepare_trace`` sets a recording session up (backend wrappers installed: the warm-up
steps pay the set-up), ``start_trace`` starts keeping events, ``stop_trace`` stops, drains
the devices and reads device times; ``on_trace_ready`` runs at the end of each cycle, and
at ``stop()`` for a profile without a schedule, exactly where torch calls it.
"""
from __future__ import annotations

import json
import warnings
from functools import partial
from typing import Any, Callable, Iterable

from .activity import DEVICE_ACTIVITIES, ProfilerActivity, supported_activities
from .events import EventList, link
from .record_function import record_function
from .schedule import ProfilerAction, default_schedule
from .session import Session

A = ProfilerAction


class profile:  # torch's name
    """Profile the ops run inside it (a context manager, or ``start()``/``stop()``).

    ``activities``: ``ProfilerActivity.CPU`` for host times of every op, any other member
    (``CUDA``, ``XPU``, ...) for device times on the accelerator the ops run on (default:
    both). ``schedule``: a :func:`schedule` (advance it with :meth:`step`).
    ``on_trace_ready(prof)``: called when a cycle's trace is ready
    (:func:`tensorboard_trace_handler`). ``record_shapes``: keep each op's input shapes.
    ``profile_memory``: keep the bytes each op allocated (its new result arrays).
    ``with_stack``: keep the Python stack of each op (``key_averages(group_by_stack_n=N)``,
    :meth:`export_stacks`). ``with_flops``: count the FLOPs of matrix products (linear,
    convolutions, matmul; forward and backward). ``with_modules``: an event per
    ``nn.Module`` call (``nn.Module: Linear_0``) holding its ops.
    """

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[["profile"], Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: Any = None,
                 use_cuda: bool | None = None, **kwargs: Any) -> None:
        acts = set(supported_activities() if activities is None else activities)
        for a in acts:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"profile(activities=...): expected ProfilerActivity "
                                f"members, got {a!r}")
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=2)
            if use_cuda:
                acts.add(ProfilerActivity.CUDA)
            else:
                acts -= DEVICE_ACTIVITIES
        if not acts:
            raise ValueError("profile(activities=...): no activity to record; pass "
                             "ProfilerActivity.CPU and/or a device activity")
        if schedule is not None and not callable(schedule):
            raise TypeError("profile(schedule=...): expected a callable of the step number "
                            "(omnitensor.profiler.schedule(...))")
        self.activities = acts
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_stack = bool(with_stack)
        self.with_flops = bool(with_flops)
        self.with_modules = bool(with_modules)
        self.on_trace_ready = on_trace_ready
        self.schedule = schedule if schedule is not None else default_schedule
        self.record_steps = schedule is not None
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn: record_function | None = None
        self._session: Session | None = None
        self._events: EventList | None = None
        self._metadata: dict[str, Any] = {}
        self.action_map: dict[tuple[ProfilerAction, ProfilerAction | None], list] = {
            (A.NONE, A.NONE): [],
            (A.NONE, A.WARMUP): [self.prepare_trace],
            (A.NONE, A.RECORD): [self.prepare_trace, self.start_trace],
            (A.NONE, A.RECORD_AND_SAVE): [self.prepare_trace, self.start_trace],
            (A.WARMUP, A.NONE): [partial(warnings.warn, "Incorrect schedule: WARMUP followed "
                                         "by NONE"), self.start_trace, self.stop_trace],
            (A.WARMUP, A.WARMUP): [],
            (A.WARMUP, A.RECORD): [self.start_trace],
            (A.WARMUP, A.RECORD_AND_SAVE): [self.start_trace],
            (A.RECORD, A.NONE): [partial(warnings.warn, "Incorrect schedule: RECORD followed "
                                         "by NONE"), self.stop_trace],
            (A.RECORD, A.WARMUP): [partial(warnings.warn, "Incorrect schedule: RECORD "
                                           "followed by WARMUP"), self.stop_trace],
            (A.RECORD, A.RECORD): [],
            (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [self.stop_trace, self._trace_ready,
                                            self.prepare_trace],
            (A.RECORD_AND_SAVE, A.RECORD): [self.stop_trace, self._trace_ready,
                                            self.prepare_trace, self.start_trace],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [self.stop_trace, self._trace_ready,
                                                     self.prepare_trace, self.start_trace],
            # at stop()
            (A.WARMUP, None): [self.start_trace, self.stop_trace],
            (A.RECORD, None): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, None): [self.stop_trace, self._trace_ready],
        }

    # ---------------------------------------------------------------- lifecycle
    def __enter__(self) -> "profile":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> None:
        self._transit(A.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def stop(self) -> None:
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit(self.current_action, None)

    def step(self) -> None:
        """Signal that the next step starts (advances the schedule)."""
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def _transit(self, prev: ProfilerAction, cur: ProfilerAction | None) -> None:
        for action in self.action_map.get((prev, cur), ()):
            action()

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def prepare_trace(self) -> None:
        if self._session is None:
            s = Session(record_cpu=ProfilerActivity.CPU in self.activities,
                        device_time=bool(self.activities & DEVICE_ACTIVITIES),
                        record_shapes=self.record_shapes, profile_memory=self.profile_memory,
                        with_stack=self.with_stack, with_flops=self.with_flops,
                        with_modules=self.with_modules)
            s.install()
            self._session = s

    def start_trace(self) -> None:
        if self._session is None:
            self.prepare_trace()
        assert self._session is not None
        self._session.recording = True

    def stop_trace(self) -> None:
        s = self._session
        if s is None:
            return
        self._session = None
        s.uninstall()
        events = link(s.events, s.t0_ns, s.record_cpu)
        self._events = EventList(events, {
            "t0_ns": s.t0_ns, "wall0_ns": s.wall0_ns, "devices": dict(s.devices),
            "record_shapes": self.record_shapes, "profile_memory": self.profile_memory,
            "with_stack": self.with_stack, "with_flops": self.with_flops,
            "with_modules": self.with_modules, "metadata": dict(self._metadata)})

    # ------------------------------------------------------------------ results
    def events(self) -> EventList:
        """The events of the last finished recording (each op and range)."""
        if self._events is None:
            raise RuntimeError("omnitensor.profiler.profile: no results yet; the profile "
                               "has results after stop() (or at on_trace_ready)")
        return self._events

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        """Events averaged by name (and input shapes with ``group_by_input_shape``, the
        innermost ``group_by_stack_n`` frames of their stacks)."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        """Write the trace as Chrome trace-event JSON (Perfetto, chrome://tracing)."""
        self.events().export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write the ops' stacks with ``metric`` (``with_stack=True``) for flame graphs."""
        if not self.with_stack:
            raise RuntimeError("export_stacks: the profile recorded no stacks; use "
                               "profile(with_stack=True)")
        self.events().export_stacks(path, metric)

    def add_metadata(self, key: str, value: str) -> None:
        """A top-level entry of the exported trace (torch's add_metadata)."""
        self._metadata[key] = value

    def add_metadata_json(self, key: str, value: str) -> None:
        self._metadata[key] = json.loads(value)
