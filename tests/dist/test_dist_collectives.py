"""Every collective on real ranks (2 ranks per device; 3 ranks on cpu for uneven splits),
each checked by the worker against its NumPy definition (tests/dist/workers/collectives.py).
One run of workers/suite.py per (device, ranks) serves these tests and test_dist_ddp.py."""
from __future__ import annotations

import pytest

from dist_helpers import DIST_DEVICES, check_section, needs_mpi, skip_absent

#: the worker's sections (keep in sync with SECTIONS in workers/collectives.py)
SECTIONS = ["all_reduce", "views", "broadcast", "reduce", "all_gather", "reduce_scatter",
            "gather_scatter", "all_to_all", "p2p", "objects", "groups", "errors", "sampler"]

pytestmark = [pytest.mark.mpi, needs_mpi]


@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize("dist_device", DIST_DEVICES)
def test_two_ranks(suite_report, dist_device: str, section: str) -> None:
    skip_absent(dist_device)
    check_section(suite_report(dist_device, 2), section)


@pytest.mark.parametrize("section", SECTIONS)
def test_three_ranks_cpu(suite_report, section: str) -> None:
    check_section(suite_report("cpu", 3), section)


def test_worker_sections_are_all_tested(suite_report) -> None:
    report = suite_report("cpu", 2)
    ran = {k for k in report if not k.startswith(("_", "ddp.", "hooks.")) and not k.endswith("@s")}
    assert ran == set(SECTIONS)
