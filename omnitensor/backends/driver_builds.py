"""Program builds inside a driver, counted so that the interpreter's exit waits for them.

Why: compile builds its fused programs on a daemon thread (``compiler/entry.upgrade_later``).
When the interpreter exits during such a build, the process runs the driver's C++ static
destructors under the compiling thread, and Intel's OpenCL CPU compiler (used by the sycl
backend, and by the opencl backend where PoCL cannot build) crashes there ("pure virtual
function called", a segfault in its ``sycl-kernel-equalizer`` pass). So every build runs
inside :func:`building`; at exit, :func:`_wait_for_builds` lets the running ones finish
(a build takes a few seconds at most) and refuses new ones.
"""
from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import BackendError


class _Running(threading.Condition):
    """How many builds are inside a driver; ``closing`` once the interpreter exits."""

    n = 0
    closing = False


_running = _Running()


@contextmanager
def building(runtime: str) -> Iterator[None]:
    """Count one build of ``runtime`` ("SYCL", "OpenCL") while the body runs."""
    with _running:
        if _running.closing:
            raise BackendError(f"the interpreter is exiting: no new {runtime} program builds")
        _running.n += 1
    try:
        yield
    finally:
        with _running:
            _running.n -= 1
            _running.notify_all()


@atexit.register
def _wait_for_builds() -> None:
    with _running:
        _running.closing = True
        _running.wait_for(lambda: _running.n == 0, timeout=60)
