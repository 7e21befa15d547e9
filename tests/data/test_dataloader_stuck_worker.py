"""A DataLoader worker that ignores SIGTERM must not hang the main process: leaving the
loop early (``break``) and ``timeout=`` both return, and the worker is killed. Each scenario
runs in a child process under a hard limit, so a regression fails instead of hanging."""
from __future__ import annotations

import subprocess
import sys
import textwrap

SCENARIO = textwrap.dedent("""
    import os, signal, sys, time
    import omnitensor as ot
    from omnitensor.data import DataLoader, Dataset

    class Stubborn(Dataset):
        def __init__(self, hang_at):
            self.hang_at = hang_at
        def __len__(self):
            return 64
        def __getitem__(self, i):
            if i >= self.hang_at:
                time.sleep(3600)
            return ot.tensor([float(i)])

    def deaf(_):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    mode = sys.argv[1]
    if mode == "break":
        loader = DataLoader(Stubborn(hang_at=2), batch_size=2, num_workers=1,
                            worker_init_fn=deaf)
        it = iter(loader)
        first = next(it)
        pids = [w.pid for w in it._workers]
        del it
    else:
        loader = DataLoader(Stubborn(hang_at=0), batch_size=2, num_workers=1,
                            worker_init_fn=deaf, timeout=1.0)
        it = iter(loader)
        pids = [w.pid for w in it._workers]
        try:
            next(it)
        except RuntimeError as e:
            print("timeout error:", e)
        del it
    import gc; gc.collect()
    for pid in pids:  # the shutdown reaped them (a zombie would still count): no wait here
        try:
            os.kill(pid, 0)
            print("worker still alive", pid)
        except ProcessLookupError:
            pass
    print("returned")
""")


def _run(mode: str) -> str:
    proc = subprocess.run([sys.executable, "-c", SCENARIO, mode], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_break_with_a_worker_ignoring_sigterm_returns_and_kills_it():
    out = _run("break")
    assert "returned" in out and "still alive" not in out, out


def test_timeout_with_a_worker_ignoring_sigterm_raises_and_kills_it():
    out = _run("timeout")
    assert "timeout error:" in out and "returned" in out, out
    assert "still alive" not in out, out
