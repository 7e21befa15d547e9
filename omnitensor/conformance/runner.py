"""Run the conformance cases on a device and report pass/fail per op and dtype."""
from __future__ import annotations

import time
from typing import Any, Iterator

import numpy as np

from .cases import ALL_CASES, Case, make_input, reference


def layouts(case: Case) -> Iterator[tuple[str, list[tuple]]]:
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


def check_case(case: Case, dtype: str, device: Any) -> list[str]:
    """Every layout of one (case, dtype) on ``device``; returns failure messages."""
    import omnitensor as ot
    from ..testing import assert_close, tolerance
    failures = []
    for label, specs in layouts(case):
        try:
            ops, arrays = [], []
            for i, spec in enumerate(specs):
                t, a = _operand(ot, case, dtype, spec, 1000 + i, i == 1, device)
                ops.append(t)
                arrays.append(a)
            out = case.call(ot, *ops)
            expected = reference(case, arrays, out.dtype.np)
            rtol, atol = tolerance(out.dtype)
            assert_close(out, expected, rtol=rtol * case.rtol_scale,
                         atol=atol * case.rtol_scale, msg=f"{case.name}[{dtype}, {label}]: ")
        except Exception as e:  # noqa: BLE001 - reported, not raised
            failures.append(f"{case.name}[{dtype}, {label}]: {type(e).__name__}: {e}")
    return failures


def run(device: Any, names: list[str] | None = None, verbose: bool = False) -> int:
    """Print a conformance table for ``device``; returns the number of failures."""
    import omnitensor as ot
    dev = ot.device(device)
    cases = [c for c in ALL_CASES if names is None or c.name in names]
    total = passed = skipped = 0
    failed: list[str] = []
    t0 = time.perf_counter()
    for case in cases:
        for dtype in case.dtypes:
            if not dev.supports_dtype(dtype):
                skipped += 1
                continue
            total += 1
            msgs = check_case(case, dtype, dev)
            if msgs:
                failed += msgs
            else:
                passed += 1
            if verbose:
                print(f"{'FAIL' if msgs else 'ok  '} {case.name:<22} {dtype}")
    dt = time.perf_counter() - t0
    info = dev.info()
    print(f"omnitensor conformance on {dev} ({info.get('name', '')}): "
          f"{passed}/{total} op-dtype pairs match NumPy, {skipped} skipped (dtype not "
          f"supported by the device), {dt:.1f} s")
    for m in failed:
        print("  " + m)
    return len(failed)
