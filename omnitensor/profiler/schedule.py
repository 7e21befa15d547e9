"""``schedule`` and ``ProfilerAction``: which steps a profiler skips, warms up on and
records, with torch.profiler's arithmetic (``skip_first``, ``skip_first_wait``,
``repeat``; the last active step of a cycle is ``RECORD_AND_SAVE``)."""
from __future__ import annotations

import enum
import warnings
from typing import Callable


class ProfilerAction(enum.Enum):
    """What the profiler does during one step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """A profiler ``schedule``: skip the first ``skip_first`` steps, then cycles of
    ``wait`` idle steps, ``warmup`` steps (the profiler is set up but keeps nothing) and
    ``active`` recorded steps; ``on_trace_ready`` runs at the end of each cycle. ``repeat``
    cycles (0: until the profiler stops). ``skip_first_wait`` non-zero skips the first
    cycle's ``wait``."""
    for name, value, least in (("wait", wait, 0), ("warmup", warmup, 0), ("active", active, 1),
                               ("repeat", repeat, 0), ("skip_first", skip_first, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise ValueError(f"profiler schedule: {name} must be an int >= {least}, "
                             f"got {value!r}")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    num_steps = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError(f"profiler schedule: step must be >= 0, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod = step % num_steps
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < num_steps - 1 else \
            ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def default_schedule(_step: int) -> ProfilerAction:
    """Without a schedule: record from start to stop."""
    return ProfilerAction.RECORD
