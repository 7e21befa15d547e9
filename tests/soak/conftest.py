"""``slow`` fuzz tests run only when asked for (``-m slow``)."""
from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords and "/soak/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(skip)
