"""DistributedDataParallel on 2 real ranks (and 3 on cpu): per-rank shares of a batch give
the same parameters as one process on the full batch (tests/dist/workers/ddp.py), with
one bucket or several, no_sync, find_unused_parameters, buffer broadcast, and clear
errors for models that differ across ranks or reductions left unfinished."""
from __future__ import annotations

import pytest

from dist_helpers import DIST_DEVICES, check_section, needs_mpi, skip_absent

#: the DDP worker's sections (keep in sync with SECTIONS in workers/ddp.py)
SECTIONS = ["equivalence", "many_buckets", "no_sync", "find_unused",
            "find_unused_reached_without_grad",
            "unfinished_reduction_error", "mismatched_models", "buffers_broadcast"]

pytestmark = [pytest.mark.mpi, needs_mpi]


@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize("dist_device", DIST_DEVICES)
def test_ddp_two_ranks(suite_report, dist_device: str, section: str) -> None:
    skip_absent(dist_device)
    check_section(suite_report(dist_device, 2), f"ddp.{section}")


@pytest.mark.parametrize("section", SECTIONS)
def test_ddp_three_ranks_cpu(suite_report, section: str) -> None:
    check_section(suite_report("cpu", 3), f"ddp.{section}")


def test_ddp_sections_are_all_tested(suite_report) -> None:
    report = suite_report("cpu", 2)
    ran = {k[4:] for k in report if k.startswith("ddp.") and not k.endswith("@s")}
    assert ran == set(SECTIONS)
