"""Runs fuzz cases in worker subprocesses and judges each outcome.

A worker runs many cases (cheap: one interpreter start per batch). Before each case it
prints which one starts; if it then dies or goes silent for ``CASE_TIMEOUT`` seconds, that
case is a failure (crash / hang) and a fresh worker resumes after it.

Judging (``judge``): omnitensor must answer bad input with an omnitensor error or a
standard Python exception with a message, never a backend library's exception type
(``numpy``, ``pyopencl``, ``dpctl``, ``dpnp``...) nor an internal-looking one
(AttributeError, ZeroDivisionError, KeyError...); where torch accepts the call, omnitensor
must give torch's result (shape, dtype, values). ``known_gaps.txt`` lists the divergences
not fixed yet (``op kind  # reason``): they are counted, not failed.
"""
from __future__ import annotations

import fnmatch
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
CASE_TIMEOUT = float(os.environ.get("OMNITENSOR_FUZZ_CASE_TIMEOUT", "60"))
UNCLEAR = {"AttributeError", "ZeroDivisionError", "KeyError", "UnboundLocalError",
           "NameError", "AssertionError", "RecursionError", "SystemError",
           "NotImplementedError"}
ALLOWED_MODULES = ("builtins", "omnitensor")


def known_gaps() -> list[tuple[str, str, str, str]]:
    """``(op pattern, kind pattern, why pattern, reason)`` per line of known_gaps.txt; the
    why pattern (optional, default ``*``) is matched against the finding's text, so a line
    names one divergence, not every finding of its op and kind."""
    rows = []
    for line in (HERE / "known_gaps.txt").read_text().splitlines():
        body, _, reason = line.partition("#")
        parts = body.split(None, 2)
        if len(parts) >= 2:
            why = parts[2].strip() if len(parts) == 3 else "*"
            rows.append((parts[0], parts[1], why, reason.strip()))
    return rows


def _same(a: dict, b: dict) -> str | None:
    if "py" in a or "py" in b:
        if a.get("v") is not None and b.get("v") is not None:
            return None if np.allclose(a["v"], b["v"], equal_nan=True) else \
                f"value {a.get('py')} != torch's {b.get('py')}"
        return None if a.get("py") == b.get("py") else \
            f"{a.get('py')} != torch's {b.get('py')}"
    if a["shape"] != b["shape"]:
        return f"shape {a['shape']} != torch's {b['shape']}"
    if a["dtype"] != b["dtype"]:
        return f"dtype {a['dtype']} != torch's {b['dtype']}"
    if a["v"] is not None and b["v"] is not None:
        x, y = np.array(a["v"], dtype=float), np.array(b["v"], dtype=float)
        if x.shape != y.shape or not np.allclose(x, y, rtol=1e-4, atol=1e-4, equal_nan=True):
            return "values differ from torch's"
    return None


def judge(case: dict, res: dict) -> tuple[str, str]:
    """(kind, why): kind is ``pass`` or a failure kind (``raw``, ``unclear``,
    ``accepted``, ``rejected``, ``value``)."""
    o, t = res["ot"], res.get("torch")
    if "err" in o:
        if o["mod"].split(".")[0] not in ALLOWED_MODULES:
            return "raw", f"raw backend exception {o['mod']}.{o['err']}: {o['msg']}"
        if o["err"] in UNCLEAR or not o["msg"].strip():
            return "unclear", f"unclear internal error {o['err']}: {o['msg']}"
    if t is None:
        return "pass", ""
    if "err" in t and "ok" in o:
        return "accepted", f"accepted where torch raises {t['err']}: {t['msg'][:120]}"
    if "ok" in t and "err" in o:
        return "rejected", f"rejected where torch works: {o['err']}: {o['msg'][:160]}"
    if "ok" in t:
        if len(t["ok"]) != len(o["ok"]):
            return "value", f"{len(o['ok'])} results, torch {len(t['ok'])}"
        for a, b in zip(o["ok"], t["ok"]):
            why = _same(a, b)
            if why:
                return "value", why
    return "pass", ""


def run_cases(device: str, cases: list[dict]) -> list[dict]:
    """Every case's record: ``{"i", "case", "kind", "why", "gap"}``."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(cases, f)
        path = f.name
    records: list[dict] = []
    gaps = known_gaps()
    first = 0
    try:
        while first < len(cases):
            first = _one_worker(device, path, cases, first, records, gaps)
    finally:
        os.unlink(path)
    return records


def _record(records: list, gaps: list, i: int, case: dict, kind: str, why: str) -> None:
    gap = next((r for op, k, w, r in gaps if kind != "pass" and fnmatch.fnmatch(case["op"], op)
                and fnmatch.fnmatch(kind, k) and fnmatch.fnmatch(why, w)), None)
    records.append({"i": i, "case": case, "kind": kind, "why": why, "gap": gap})


def _one_worker(device: str, path: str, cases: list, first: int, records: list,
                gaps: list) -> int:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(HERE), str(HERE.parent.parent), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, str(HERE / "worker.py"), device, path,
                             str(first)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stdout] + [lines.put(None)],
                     daemon=True).start()
    current = None
    startup = True
    while True:
        try:
            line = lines.get(timeout=CASE_TIMEOUT * (3 if startup else 1))
        except queue.Empty:
            proc.kill()
            proc.wait()
            i = current if current is not None else first
            _record(records, gaps, i, cases[i], "hang",
                    f"no answer in {CASE_TIMEOUT:.0f} s (hang)")
            return i + 1
        if line is None:  # the worker exited
            rc = proc.wait()
            if current is None:  # finished cleanly (or died before any case)
                if rc != 0 and first < len(cases):
                    err = proc.stderr.read()[-2000:]
                    _record(records, gaps, first, cases[first], "crash",
                            f"worker failed to start (rc {rc}): {err}")
                    return first + 1
                return len(cases)
            _record(records, gaps, current, cases[current], "crash",
                    f"worker died (rc {rc}): {proc.stderr.read()[-1500:]}")
            return current + 1
        msg = json.loads(line)
        startup = False
        if "start" in msg:
            current = msg["start"]
            continue
        kind, why = judge(cases[msg["i"]], msg)
        _record(records, gaps, msg["i"], cases[msg["i"]], kind, why)
        current = None


def summary(records: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in records:
        key = r["kind"] if r["kind"] == "pass" else (f"gap:{r['kind']}" if r["gap"]
                                                     else f"FAIL:{r['kind']}")
        out[key] = out.get(key, 0) + 1
    return out
