"""Chrome trace-event JSON (what Perfetto and chrome://tracing open) and
``tensorboard_trace_handler``.

Layout, as torch's Kineto traces: host ops are complete events (``"ph": "X"``,
``"cat": "cpu_op"``; ``record_function`` ranges ``"user_annotation"``, ``nn.Module`` calls
``"python_function"``; an op's stack is its ``"Call stack"`` argument, innermost frame
first, ``;``-separated) on the process's pid
and each thread's tid; device work is on a track of its own per device (its own pid, named
after the device, tid 0), ``"cat": "kernel"``, linked to the op that launched it by a flow
(``"ac2g"``). ``ts``/``dur`` are microseconds from the profiler's start;
``baseTimeNanoseconds`` is the wall clock at that start.
"""
from __future__ import annotations

import gzip
import json
import os
import socket
import time
from typing import Any, Callable

_DEVICE_PID0 = 1_000_000_000  # device tracks: far above any OS pid
#: event kind -> torch's trace category (module calls are Python functions there)
_CATEGORY = {"op": "cpu_op", "user": "user_annotation", "module": "python_function"}


def trace_dict(events: Any) -> dict:
    meta = events.meta
    base = meta.get("t0_ns", 0)
    pid = os.getpid()
    out: list[dict] = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": "CPU"}},
    ]
    threads: set[int] = set()
    dev_pid: dict[str, int] = {}
    labels = meta.get("devices", {})
    flow = 0
    for ev in events:
        ts = (ev.start_ns - base) / 1e3
        if ev.host_recorded:
            threads.add(ev.thread)
            args: dict[str, Any] = {"External id": ev.id, "device": ev.device}
            if ev.input_shapes:
                args["Input Dims"] = ev.input_shapes
            if ev.self_cpu_memory_usage or ev.self_device_memory_usage:
                args["Bytes"] = ev.self_cpu_memory_usage + ev.self_device_memory_usage
            if ev.stack:
                args["Call stack"] = ";".join(ev.stack)
            if ev.flops:
                args["flops"] = ev.flops
            out.append({"ph": "X", "cat": _CATEGORY[ev.kind], "name": ev.trace_name,
                        "pid": pid, "tid": ev.thread,
                        "ts": ts, "dur": (ev.end_ns - ev.start_ns) / 1e3, "args": args})
        for kname, s, e in ev.kernels:
            dpid = dev_pid.get(ev.device)
            if dpid is None:
                dpid = dev_pid[ev.device] = _DEVICE_PID0 + len(dev_pid)
            kts = (s - base) / 1e3
            out.append({"ph": "X", "cat": "kernel", "name": kname or ev.name, "pid": dpid,
                        "tid": 0, "ts": kts, "dur": (e - s) / 1e3,
                        "args": {"External id": ev.id, "device": ev.device, "op": ev.name}})
            if ev.host_recorded:
                flow += 1
                out.append({"ph": "s", "id": flow, "pid": pid, "tid": ev.thread, "ts": ts,
                            "cat": "ac2g", "name": "ac2g"})
                out.append({"ph": "f", "id": flow, "pid": dpid, "tid": 0, "ts": kts,
                            "cat": "ac2g", "name": "ac2g", "bp": "e"})
    for tid in sorted(threads):
        out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                    "args": {"name": f"thread {tid} (python)"}})
    for dev, dpid in dev_pid.items():
        label = labels.get(dev, dev)
        out.append({"ph": "M", "name": "process_name", "pid": dpid, "tid": 0,
                    "args": {"name": f"{dev} ({label})" if label != dev else dev}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": dpid, "tid": 0,
                    "args": {"sort_index": dpid}})
        out.append({"ph": "M", "name": "thread_name", "pid": dpid, "tid": 0,
                    "args": {"name": "queue 0"}})
    doc = {"schemaVersion": 1, "displayTimeUnit": "ms",
           "baseTimeNanoseconds": meta.get("wall0_ns", 0),
           "record_shapes": int(bool(meta.get("record_shapes"))),
           "profile_memory": int(bool(meta.get("profile_memory"))),
           "with_stack": int(bool(meta.get("with_stack"))),
           "with_flops": int(bool(meta.get("with_flops"))),
           "with_modules": int(bool(meta.get("with_modules"))),
           "host_name": socket.gethostname(), "traceEvents": out}
    doc.update(meta.get("metadata", {}))
    return doc


def write_trace(events: Any, path: str) -> None:
    doc = trace_dict(events)
    doc["traceName"] = str(path)
    data = json.dumps(doc).encode()
    if str(path).endswith(".gz"):
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        with open(path, "wb") as f:
            f.write(data)


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False,
                              use_python_export: bool = False) -> Callable[[Any], None]:
    """An ``on_trace_ready`` that writes each cycle's trace to
    ``dir_name/<worker_name>.<time_ns>.pt.trace.json`` (``.gz`` with ``use_gzip``), the
    names TensorBoard's profiler plugin reads; ``worker_name`` defaults to
    ``<hostname>_<pid>``. ``use_python_export`` picks torch's Python exporter over
    Kineto's; omnitensor's traces are always written by its Python exporter, so both
    values write the same file."""
    def handler_fn(prof: Any) -> None:
        nonlocal worker_name
        try:
            os.makedirs(dir_name, exist_ok=True)
        except OSError as e:
            raise RuntimeError(f"tensorboard_trace_handler: can't create directory "
                               f"{dir_name!r}: {e}") from None
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))
    return handler_fn
