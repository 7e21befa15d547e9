"""torch's OpInfo database as a differential suite (the driver:
``omnitensor/conformance/torch_opinfo``).

One test per OpInfo x kind x dtype on each device, its samples looped inside: forward in
float32, float64, int64 and bool on cpu (float32, int64, bool on the other devices),
gradients in float64 on cpu (float32 elsewhere) where torch has them, and torch's error
inputs. Checks listed in ``known_gaps.txt`` are expected to fail (strict: a listed check
that passes fails, so the list only shrinks). An OpInfo without an omnitensor counterpart
skips; the coverage figures count its samples as not passing.

At the end the figures are printed and written as JSON to ``$OMNITENSOR_OPINFO_SUMMARY``
(default: ``omnitensor_opinfo_summary.json`` in the temporary directory); under pytest-xdist
the workers hand their results to the controller, which prints them (``tests/conftest.py``).
"""
from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from omnitensor.conformance import torch_opinfo as T
from omnitensor.conformance.torch_opinfo.oracle import (forward_dtypes, grad_dtype,
                                                         opinfo_key, supports)

HERE = Path(__file__).parent
GAPS_FILE = HERE / "known_gaps.txt"
#: every dtype a forward check may run in (each device keeps those of its type)
ALL_FORWARD = ("float32", "float64", "int64", "bool")

RESULTS: list[T.CheckResult] = []


def _unavailable() -> str | None:
    try:
        T.op_db()
    except T.TorchUnavailable as e:
        return str(e)
    return None


#: why the suite cannot run here (no torch, no expecttest), or None
UNAVAILABLE = _unavailable()


def _forward_cases() -> list:
    return [pytest.param((opinfo_key(op), dt), id=f"{opinfo_key(op)}-{dt}")
            for op in T.op_db() for dt in ALL_FORWARD if supports(op, dt)]


def _op_cases(kind: str) -> list:
    ops = T.op_db()
    if kind == "grad":
        ops = tuple(op for op in ops if op.supports_autograd)
    if kind == "errors":
        ops = tuple(op for op in ops if op.error_inputs_func is not None)
    return [pytest.param(opinfo_key(op), id=opinfo_key(op)) for op in ops]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    names = [n for n in ("opinfo_forward", "opinfo_grad", "opinfo_errors")
             if n in metafunc.fixturenames]
    if names and UNAVAILABLE is not None:
        metafunc.parametrize(names[0], [pytest.param(
            None, marks=pytest.mark.skip(reason=UNAVAILABLE), id="torch-unavailable")])
        return
    if "opinfo_forward" in metafunc.fixturenames:
        metafunc.parametrize("opinfo_forward", _forward_cases())
    for kind in ("grad", "errors"):
        if f"opinfo_{kind}" in metafunc.fixturenames:
            metafunc.parametrize(f"opinfo_{kind}", _op_cases(kind))


def _case(item: pytest.Item) -> tuple[str, str, str, str] | None:
    """(op, dtype, device type, kind) of a suite item, None for other tests."""
    spec = getattr(item, "callspec", None)
    if spec is None or "device" not in spec.params:
        return None
    dev_type = str(spec.params["device"]).split(":")[0]
    if "opinfo_forward" in spec.params:
        op, dt = spec.params["opinfo_forward"]
        return op, dt, dev_type, "forward"
    if "opinfo_grad" in spec.params:
        return spec.params["opinfo_grad"], grad_dtype(dev_type), dev_type, "grad"
    if "opinfo_errors" in spec.params:
        return spec.params["opinfo_errors"], "-", dev_type, "errors"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    """Drop forward dtypes a device type does not run (float64 off cpu), and mark the
    known gaps as strict xfails."""
    gaps = T.read_gaps(GAPS_FILE)
    keep, drop = [], []
    for item in items:
        case = _case(item)
        if case is not None and case[3] == "forward" and case[1] not in forward_dtypes(case[2]):
            drop.append(item)
            continue
        keep.append(item)
        if case is not None and case in gaps:
            item.add_marker(pytest.mark.xfail(reason=f"known gap: {gaps[case]}", strict=True))
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def opinfo_results() -> list[T.CheckResult]:
    """Where each check's result goes, for the figures at the end of the session."""
    return RESULTS


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On a pytest-xdist worker: hand the results to the controller, which prints the
    figures of all workers (``tests/conftest.py``)."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None and RESULTS:
        out["opinfo_results"] = pickle.dumps(RESULTS)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not RESULTS:
        return
    terminalreporter.section("torch OpInfo coverage")
    for line in T.write_summary(RESULTS):
        terminalreporter.write_line(line)
