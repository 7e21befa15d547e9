"""DDP communication hooks on 2 real ranks (and 3 on cpu): ``register_comm_hook`` with
torch's default hooks, custom hooks and the GradBucket contract (tests/dist/workers/
comm_hooks.py, run inside workers/suite.py's mpiexec start); on cpu with 2 ranks the same
hooks under torch's own DDP on gloo are the oracle."""
from __future__ import annotations

import pytest

from dist_helpers import DIST_DEVICES, needs_mpi, skip_absent

#: the hook worker's sections (keep in sync with SECTIONS in workers/comm_hooks.py)
SECTIONS = ["allreduce_hook", "fp16_compress_hook", "custom_hooks", "hook_errors",
            "matches_torch_gloo"]

pytestmark = [pytest.mark.mpi, needs_mpi]


def _check(report: dict, section: str) -> None:
    assert "_error" not in report, report["_error"]
    key = "hooks." + section
    assert key in report, f"the worker did not run section {key!r}"
    assert report[key] == "ok", report[key]


@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize("dist_device", DIST_DEVICES)
def test_comm_hooks_two_ranks(suite_report, dist_device: str, section: str) -> None:
    skip_absent(dist_device)
    _check(suite_report(dist_device, 2), section)


@pytest.mark.parametrize("section", SECTIONS[:4])
def test_comm_hooks_three_ranks_cpu(suite_report, section: str) -> None:
    _check(suite_report("cpu", 3), section)


def test_comm_hook_sections_are_all_tested(suite_report) -> None:
    report = suite_report("cpu", 2)
    ran = {k[6:] for k in report if k.startswith("hooks.") and not k.endswith("@s")}
    assert ran == set(SECTIONS)
