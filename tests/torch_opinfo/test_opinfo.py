"""torch's OpInfos, differentially: each test runs one check of the driver
(``omnitensor.conformance.torch_opinfo``) over up to 8 of torch's samples.

One op: ``python -m pytest tests/torch_opinfo -k addmm``, or with each sample's diff:
``python -m omnitensor.conformance.torch_opinfo --op addmm --device cpu``.
"""
from __future__ import annotations

import pytest

from omnitensor.conformance import torch_opinfo as T

#: every case on cpu; on the other devices CI runs a third, ``-m slow`` the rest
#: (tests/conftest.py); ``omnitensor conformance --torch`` runs them all on a user's device
pytestmark = pytest.mark.device_sampled

#: the skip reason of an OpInfo without a counterpart (one reason for all: the figures at
#: the end name what is missing)
NO_COUNTERPART = "no omnitensor counterpart (the coverage summary lists the missing names)"


def _judge(result: T.CheckResult, results: list[T.CheckResult]) -> None:
    results.append(result)
    if result.status == "missing":
        pytest.skip(NO_COUNTERPART)
    if result.status == "skip":
        pytest.skip(f"nothing to check: {result.reason}")
    if result.status == "fail":
        fails = result.failures()
        ran = result.count("pass") + len(fails)
        lines = [f"{result.op} {result.kind} {result.dtype} on {result.device}: "
                 f"{len(fails)}/{ran} samples fail"]
        for s in fails:
            lines.append(f"  [{s.index}] {s.cause}: {s.message}\n      sample: {s.sample}")
        lines.append(f"  (each sample: python -m omnitensor.conformance.torch_opinfo "
                     f"--op {result.op} --device {result.device} --kind {result.kind})")
        pytest.fail("\n".join(lines), pytrace=False)


def test_forward(device, opinfo_forward, opinfo_results):
    op, dtype = opinfo_forward
    _judge(T.check(op, "forward", device, dtype), opinfo_results)


def test_grad(device, opinfo_grad, opinfo_results):
    dtype = T.grad_dtype(str(device).split(":")[0])
    _judge(T.check(opinfo_grad, "grad", device, dtype), opinfo_results)


def test_errors(device, opinfo_errors, opinfo_results):
    _judge(T.check(opinfo_errors, "errors", device), opinfo_results)
