"""Run the conformance cases on a device and report pass/fail per op and dtype."""
from __future__ import annotations

import time
from functools import partial
from typing import Any, Callable, Iterator

import numpy as np

from .cases import Case, make_input, reference
from .nn_cases import make_operand
from .table import ALL_CASES

#: called after each (op, dtype) pair with the device, op and dtype just checked
ProgressFn = Callable[[str, str, str], None]


def layouts(case: Case) -> Iterator[tuple[str, list[Any]]]:
    """(label, operand shapes) variants: contiguous shapes, a transposed view, and for
    binary ops broadcasting and a Python-scalar right operand."""
    for shape in case.shapes:
        yield f"shape={shape}", [shape] * case.arity
    if case.arity == 1 and any(len(s) >= 2 for s in case.shapes):
        yield "transposed", [("T", (4, 3))]
    if case.arity == 2:
        yield "broadcast", [(3, 1), (1, 4)]
        yield "scalar-rhs", [(2, 3), "scalar"]


def _operand(ot: Any, case: Case, dtype: str, spec: Any, seed: int, rhs: bool,
             device: Any) -> tuple[Any, np.ndarray]:
    if spec == "scalar":
        arr = make_input(case, dtype, (), seed, rhs)
        value = arr.item()
        if dtype == "bool":
            value = bool(value)
        return value, arr
    if isinstance(spec, tuple) and spec and spec[0] == "T":
        arr = make_input(case, dtype, spec[1], seed, rhs)
        return ot.tensor(arr, device=device).T, arr.T
    arr = make_input(case, dtype, spec, seed, rhs)
    return ot.tensor(arr, device=device), arr


def _calls(ot: Any, case: Case, dtype: str,
           device: Any) -> Iterator[tuple[str, Callable[[], tuple[Any, list, dict]]]]:
    """(label, build) per layout or variant; ``build()`` makes the operands on ``device``
    and returns (omnitensor result, host operands, keywords)."""
    def shaped(specs: list[Any]) -> tuple[Any, list, dict]:
        ops, arrays = [], []
        for i, spec in enumerate(specs):
            t, a = _operand(ot, case, dtype, spec, 1000 + i, i == 1, device)
            ops.append(t)
            arrays.append(a)
        return case.call(ot, *ops), arrays, {}

    def variant(n: int, specs: list[Any], kw: dict) -> tuple[Any, list, dict]:
        rng = np.random.default_rng(2000 + n)
        arrays = [make_operand(s, dtype, rng) for s in specs]
        ops = [None if a is None else ot.tensor(a, device=device) for a in arrays]
        return case.call(ot, *ops, **kw), arrays, kw

    if case.variants:
        for n, (label, specs, kw) in enumerate(case.variants):
            yield label, partial(variant, n, specs, kw)
        return
    for label, specs in layouts(case):
        yield label, partial(shaped, specs)


def check_case(case: Case, dtype: str, device: Any) -> list[str]:
    """Every layout (or variant) of one (case, dtype) on ``device``; returns failure
    messages."""
    import omnitensor as ot
    from ..testing import assert_close, tolerance
    failures = []
    for label, build in _calls(ot, case, dtype, device):
        try:
            out, arrays, kw = build()
            expected = reference(case, arrays, out.dtype.np, kw)
            rtol, atol = tolerance(out.dtype)
            assert_close(out, expected, rtol=rtol * case.rtol_scale,
                         atol=atol * case.rtol_scale, msg=f"{case.name}[{dtype}, {label}]: ")
        except Exception as e:  # noqa: BLE001 - reported, not raised
            failures.append(f"{case.name}[{dtype}, {label}]: {type(e).__name__}: {e}")
    return failures


def select(names: list[str] | None = None) -> list[Case]:
    """The cases named (all when None), in table order; an unknown name is a ValueError
    listing the known ones."""
    unknown = sorted(set(names or ()) - {c.name for c in ALL_CASES})
    if unknown:
        raise ValueError(f"conformance: unknown op(s) {', '.join(unknown)}; known: "
                         f"{', '.join(c.name for c in ALL_CASES)}")
    return [c for c in ALL_CASES if names is None or c.name in names]


def pair_count(names: list[str] | None = None) -> int:
    """How many (op, dtype) pairs :func:`evaluate` checks per device (for a progress bar)."""
    return sum(len(c.dtypes) for c in select(names))


def evaluate(device: Any, names: list[str] | None = None, verbose: bool = False,
             progress: ProgressFn | None = None) -> dict[str, Any]:
    """Every (case, dtype) on ``device``: a dict with the counts and one row per pair
    (``op``, ``dtype``, ``status`` pass/fail/skip, ``failures``), the body of a certificate.
    ``progress(device, op, dtype)`` is called after each pair."""
    import omnitensor as ot
    dev = ot.device(device)
    cases = select(names)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for case in cases:
        for dtype in case.dtypes:
            if not dev.supports_dtype(dtype):
                rows.append({"op": case.name, "dtype": dtype, "status": "skip",
                             "failures": [], "reason": "dtype not supported by the device"})
            else:
                msgs = check_case(case, dtype, dev)
                rows.append({"op": case.name, "dtype": dtype,
                             "status": "fail" if msgs else "pass", "failures": msgs})
                if verbose:
                    print(f"{'FAIL' if msgs else 'ok  '} {case.name:<22} {dtype}")
            if progress is not None:
                progress(str(dev), case.name, dtype)
    counts = {k: sum(r["status"] == k for r in rows) for k in ("pass", "fail", "skip")}
    return {"device": str(dev), "passed": counts["pass"], "failed": counts["fail"],
            "skipped": counts["skip"], "total": counts["pass"] + counts["fail"],
            "seconds": round(time.perf_counter() - t0, 2), "results": rows}


def run(device: Any, names: list[str] | None = None, verbose: bool = False,
        progress: ProgressFn | None = None) -> int:
    """Print a conformance table for ``device``; returns the number of failures."""
    import omnitensor as ot
    dev = ot.device(device)
    res = evaluate(dev, names, verbose, progress)
    info = dev.info()
    print(f"omnitensor conformance on {dev} ({info.get('name', '')}): "
          f"{res['passed']}/{res['total']} op-dtype pairs match NumPy, {res['skipped']} "
          f"skipped (dtype not supported by the device), {res['seconds']:.1f} s", flush=True)
    failed = [m for r in res["results"] for m in r["failures"]]
    for m in failed:
        print("  " + m)
    return len(failed)
