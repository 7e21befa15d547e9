"""Running many checks, the coverage figures, and the known-gaps file.

The figures, per device: OpInfos with a counterpart, and for each kind (forward, grad,
errors) the samples that pass out of all torch's samples (an op the face lacks counts its
samples as not passing) and out of the samples of ops that exist.

The known-gaps file (``tests/torch_opinfo/known_gaps.txt``) lists failing checks, one a
line: ``op  dtype  device-type  kind  # reason``; ``-`` is the dtype of an errors check.
"""
from __future__ import annotations

import collections
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator

from .driver import KINDS, CheckResult, check
from .oracle import forward_dtypes, grad_dtype, opinfo_key, select

GapKey = tuple[str, str, str, str]


def plan(ops: list[Any], device: str, kinds: tuple[str, ...] = ("forward", "grad", "errors"),
         dtypes: tuple[str, ...] | None = None) -> Iterator[tuple[str, str, str]]:
    """(op key, kind, dtype) of every check on ``device``, in the order the suite runs."""
    dev_type = device.split(":")[0]
    for op in ops:
        key = opinfo_key(op)
        if "forward" in kinds:
            for dt in forward_dtypes(dev_type):
                if dtypes is None or dt in dtypes:
                    yield key, "forward", dt
        if "grad" in kinds and (dtypes is None or grad_dtype(dev_type) in dtypes):
            yield key, "grad", grad_dtype(dev_type)
        if "errors" in kinds:
            yield key, "errors", "-"


def run_checks(ops: list[Any], device: str, kinds: tuple[str, ...] = ("forward", "grad",
                                                                      "errors"),
               dtypes: tuple[str, ...] | None = None,
               progress: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
    out = []
    for key, kind, dt in plan(ops, device, kinds, dtypes):
        res = check(key, kind, device, dt)
        out.append(res)
        if progress is not None:
            progress(res)
    return out


def evaluate(devices: list[str], patterns: list[str] | None = None,
             kinds: tuple[str, ...] = KINDS, dtypes: tuple[str, ...] | None = None,
             progress: Any = None) -> list[CheckResult]:
    """Every check of the selected OpInfos on each device."""
    ops = select(patterns)
    out: list[CheckResult] = []
    for dev in devices:
        out.extend(run_checks(ops, dev, kinds, dtypes, progress))
    return out


def print_check(r: CheckResult, samples: bool) -> None:
    """Print a check: a failing one with its failing samples; with ``samples``, every check
    and every sample."""
    if r.status in ("skip", "missing"):
        if samples:
            print(f"{r.status:<7} {r.op} {r.kind} {r.dtype} {r.device}: {r.reason}")
        return
    if r.status == "pass" and not samples:
        return
    n = r.count("pass") + r.count("fail")
    print(f"{r.status.upper():<7} {r.op} {r.kind} {r.dtype} {r.device}: "
          f"{r.count('pass')}/{n} samples pass ({r.seconds:.2f} s)")
    for s in r.samples:
        if samples or s.status == "fail":
            tail = f"{s.cause}: {s.message}" if s.status == "fail" else s.message
            print(f"    [{s.index}] {s.status:<4} {s.sample}")
            if tail:
                print(f"           {tail}")


def figures(results: list[CheckResult]) -> dict[str, Any]:
    """The coverage figures of ``results``, per device."""
    by_dev: dict[str, list[CheckResult]] = collections.defaultdict(list)
    for r in results:
        by_dev[r.device].append(r)
    out: dict[str, Any] = {}
    for dev, rows in by_dev.items():
        ops = {r.op for r in rows}
        missing = {r.op for r in rows if r.status == "missing"}
        entry: dict[str, Any] = {"opinfos": len(ops), "with_counterpart": len(ops - missing)}
        for kind in ("forward", "grad", "errors"):
            ks = [r for r in rows if r.kind == kind]
            run = sum(r.count("pass") + r.count("fail") for r in ks)
            passed = sum(r.count("pass") for r in ks)
            absent = sum(r.samples_total for r in ks if r.status == "missing")
            entry[kind] = {
                "checks": len(ks),
                "checks_passing": sum(r.status == "pass" for r in ks),
                "checks_failing": sum(r.status == "fail" for r in ks),
                "samples_run": run, "samples_passed": passed,
                "samples_of_missing_ops": absent,
                "pass_pct": _pct(passed, run + absent),
                "pass_pct_of_existing": _pct(passed, run),
            }
        out[dev] = entry
    return out


def _pct(a: int, b: int) -> float | None:
    return round(100.0 * a / b, 1) if b else None


def _fmt(p: float | None) -> str:
    return "    -" if p is None else f"{p:5.1f}"


def table(figs: dict[str, Any]) -> str:
    """The figures as a short text table."""
    head = (f"{'device':<10} {'OpInfos':>8} {'with op':>8}   "
            f"{'forward':>16} {'grad':>16} {'errors':>16}")
    lines = [head, " " * 31 + "(samples passing: % of all / % of those whose op exists)"]
    for dev, e in figs.items():
        cells = [f"{_fmt(e[k]['pass_pct'])}/{_fmt(e[k]['pass_pct_of_existing'])}%"
                 for k in ("forward", "grad", "errors")]
        lines.append(f"{dev:<10} {e['opinfos']:>8} {e['with_counterpart']:>8}   "
                     + " ".join(f"{c:>16}" for c in cells))
    return "\n".join(lines)


def gap_key(r: CheckResult) -> GapKey:
    return (r.op, r.dtype, r.device.split(":")[0], r.kind)


def reason(r: CheckResult) -> str:
    """One line saying why check ``r`` fails: its causes with counts, the first message."""
    fails = r.failures()
    causes = collections.Counter(s.cause for s in fails)
    head = ", ".join(f"{c} {n}/{len(r.samples)}" for c, n in causes.most_common())
    first = fails[0].message if fails else r.reason
    first = first if len(first) <= 160 else first[:157] + "..."
    return f"{head}: {first}".replace("#", "No.")


def gap_lines(results: list[CheckResult]) -> list[str]:
    """known_gaps.txt lines for the failing checks of ``results``."""
    rows = sorted({gap_key(r): reason(r) for r in results if r.status == "fail"}.items())
    return [f"{op}  {dt}  {dev}  {kind}  # {why}" for (op, dt, dev, kind), why in rows]


def read_gaps(path: str | Path) -> dict[GapKey, str]:
    """The known-gaps file: (op, dtype, device type, kind) -> reason. A malformed line is
    an error naming it (a typo must not silently un-list a gap)."""
    out: dict[GapKey, str] = {}
    p = Path(path)
    if not p.exists():
        return out
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        body, _, why = line.partition("#")
        fields = body.split()
        if not fields:
            continue
        if len(fields) != 4 or fields[3] not in ("forward", "grad", "errors"):
            raise ValueError(f"{p}:{n}: expected 'op dtype device-type kind  # reason' "
                             f"(kind forward, grad or errors), got {line!r}")
        out[(fields[0], fields[1], fields[2], fields[3])] = why.strip() or "known gap"
    return out


def as_json(results: list[CheckResult]) -> dict[str, Any]:
    """The figures and every failing sample: the body of a certificate."""
    fails = [{"op": r.op, "kind": r.kind, "device": r.device, "dtype": r.dtype,
              "samples": [{"index": s.index, "cause": s.cause, "message": s.message,
                           "sample": s.sample} for s in r.failures()]}
             for r in results if r.status == "fail"]
    missing = sorted({(r.op, r.reason) for r in results if r.status == "missing"})
    checks = [{"op": r.op, "kind": r.kind, "device": r.device, "dtype": r.dtype,
               "status": r.status, "passed": r.count("pass"),
               "run": r.count("pass") + r.count("fail"), "seconds": r.seconds}
              for r in results]
    return {"figures": figures(results), "failures": fails,
            "missing": [{"op": op, "reason": why} for op, why in missing], "checks": checks}


def write_summary(results: list[CheckResult]) -> list[str]:
    """Write :func:`as_json` of ``results`` to ``$OMNITENSOR_OPINFO_SUMMARY`` (default:
    ``omnitensor_opinfo_summary.json`` in the temporary directory); returns the lines a
    test session prints: the figures' table and where the file is."""
    default = Path(tempfile.gettempdir()) / "omnitensor_opinfo_summary.json"
    path = Path(os.environ.get("OMNITENSOR_OPINFO_SUMMARY", str(default)))
    path.write_text(json.dumps(as_json(results), indent=1) + "\n", encoding="utf-8")
    return [table(figures(results)), f"figures and failing samples: {path}"]
