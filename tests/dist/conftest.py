"""Fixtures of the distributed tests (helpers live in dist_helpers.py)."""
from __future__ import annotations

import json
from typing import Any

import pytest

from dist_helpers import run_ranks

_reports: dict[tuple, Any] = {}


@pytest.fixture(scope="session")
def suite_report(tmp_path_factory: pytest.TempPathFactory):
    """``report(device, n)``: the report of workers/suite.py (collectives and DDP checks)
    on ``n`` ranks with ``device`` tensors; one mpiexec run per pair, cached."""
    def report(device: str, n: int) -> dict:
        key = (device, n)
        if key not in _reports:
            name = f"report_{device.replace(':', '_')}_{n}.json"
            path = tmp_path_factory.mktemp("dist") / name
            proc, secs = run_ranks(n, "suite.py", device, str(path))
            if not path.exists():
                _reports[key] = {"_error": f"worker crashed (rc={proc.returncode}, {secs:.0f} s)"
                                           f"\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n"
                                           f"{proc.stderr[-4000:]}"}
            else:
                _reports[key] = json.loads(path.read_text())["results"]
                _reports[key]["_seconds"] = secs
        return _reports[key]
    return report
