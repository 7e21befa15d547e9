"""Tear down torch's gloo process group so that it dies on this (the main) thread, for a
worker that calls torch's comm hooks directly (workers/powersgd_vs_torch.py: the oracle).

Why: torch's powerSGD_hook chains Python callbacks with ``Future.then``; gloo's worker
threads run them and release them (their closures hold the group) *after* ``wait()`` on
the last future has returned. ``destroy_process_group`` does not wait for that, so the group's last
reference could go on a gloo thread -- ``~ProcessGroupGloo`` then joins that thread from
itself (``std::system_error: Resource deadlock avoided`` -> abort) -- or the thread still
wants the GIL while the interpreter finalizes (Python ends it with ``pthread_exit`` through
a ``noexcept`` frame: "terminate called without an active exception"). Both print ``ok``
first and abort at exit, about 1 run in 10 with two runs at a time, torch alone as well.
(Under torch's DDP the reducer holds the group from C++, and this wait does not apply.)
"""
from __future__ import annotations

import gc
import sys
import time

#: far longer than the gloo threads ever take to drop their callbacks (milliseconds)
DEADLINE_S = 60.0


def destroy_torch_group() -> None:
    """``torch.distributed.destroy_process_group()``, then wait until this function holds
    the only reference to the default group, and drop it here: the destructor runs on this
    thread (torch releases the GIL in it) and joins gloo's threads once their callbacks are
    gone, so no gloo thread is left at interpreter exit."""
    import torch.distributed as tdist
    pg = tdist.group.WORLD
    tdist.destroy_process_group()
    if pg is None:
        return
    probe = object()
    alone = sys.getrefcount(probe)  # what an object only a local holds counts (by version)
    deadline = time.monotonic() + DEADLINE_S
    while sys.getrefcount(pg) > alone:
        if time.monotonic() > deadline:
            raise RuntimeError(f"torch's process group is still referenced "
                               f"{sys.getrefcount(pg) - alone} times {DEADLINE_S:.0f} s "
                               f"after destroy_process_group: {gc.get_referrers(pg)!r:.500}")
        gc.collect()  # a closure in a reference cycle is freed here, not on a gloo thread
        time.sleep(0.001)  # lets the gloo threads take the GIL to release their callbacks
    del pg
