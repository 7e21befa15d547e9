"""Targets of the processes tests/compat/test_multiprocessing.py starts (spawn children
import them by module name, so they live in a module of their own)."""
from __future__ import annotations

import json
import os
import signal
import time

import omnitensor.multiprocessing as mp


def add_index(i, t, out_dir):
    """Spawned with a shared tensor: add i + 1 to element i; report what arrived."""
    t[i] += float(i + 1)
    with open(os.path.join(out_dir, f"child{i}.json"), "w") as f:
        json.dump({"shared": t.is_shared(), "dtype": t.dtype.name, "pid": os.getpid()}, f)


def fail_one(i, bad):
    """Process ``bad`` raises; the others wait to be terminated."""
    if i == bad:
        raise ValueError(f"boom from process {i}")
    time.sleep(120)


def die(i, how):
    """End without an exception: an exit code, or a signal."""
    if how == "exit":
        os._exit(3)
    os.kill(os.getpid(), signal.SIGKILL)


def echo(q_in, q_out, done, strategy):
    """Send back each tensor received, transformed, then wait for the parent's Event (the
    file_descriptor strategy needs the sender alive until the receiver has the tensor)."""
    mp.set_sharing_strategy(strategy)
    while True:
        item = q_in.get()
        if item is None:
            break
        name, t = item
        info = {"shared": t.is_shared(), "requires_grad": t.requires_grad,
                "cls": type(t).__name__, "device": str(t.device)}
        if name == "fill":
            t.fill_(7)  # the parent must see this write: the storage is shared
            q_out.put((name, info, None))
        else:
            q_out.put((name, info, (t.detach() * 2).to(t.device)))
    done.wait(60)


def square(t):
    return t * t


def device_roundtrip(q_in, q_out, done):
    t = q_in.get()
    q_out.put((str(t.device), t + 1))
    done.wait(60)
