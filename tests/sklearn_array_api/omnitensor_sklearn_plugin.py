"""A pytest plugin that runs scikit-learn's own array-API tests, unchanged, on omnitensor.

scikit-learn parametrizes its array-API tests from the generators in
``sklearn.utils._array_api`` (namespace, device, dtype). This plugin replaces those
generators before the test modules import them, so every such test gets omnitensor with the
device named by ``OMNITENSOR_SKLEARN_DEVICE`` and both float dtypes, and deselects the tests
that take no namespace. scikit-learn's ``_array_api_for_tests`` then imports ``omnitensor``
by name and builds arrays with ``xp.asarray(..., device=...)``, as for any library.
"""
from __future__ import annotations

import os
import zlib

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # before SciPy is imported anywhere

DEVICE = os.environ.get("OMNITENSOR_SKLEARN_DEVICE", "cpu")
#: the float dtypes scikit-learn's tests run in (comma-separated)
DTYPES = tuple(os.environ.get("OMNITENSOR_SKLEARN_DTYPES", "float64,float32").split(","))
#: ``"i/n"``: keep only the tests whose id hashes to ``i`` modulo ``n`` (the driving test's
#: CI slice on devices, as ``device_sampled`` tests are sliced); empty: every test
SHARD = os.environ.get("OMNITENSOR_SKLEARN_SHARD", "")
NAMESPACE_PARAMS = ("array_namespace", "namespace", "namespace_and_device",
                    "from_ns_and_device", "to_ns_and_device")


def _namespaces(include_numpy_namespaces: bool = True):
    yield "omnitensor"


def _combinations(include_numpy_namespaces: bool = True):
    for dtype in DTYPES:
        yield "omnitensor", DEVICE, dtype


def _mixed():
    from sklearn.utils._array_api import NamespaceAndDevice
    yield (NamespaceAndDevice("numpy", None), NamespaceAndDevice("omnitensor", DEVICE),
           f"numpy to omnitensor {DEVICE}")
    yield (NamespaceAndDevice("omnitensor", DEVICE), NamespaceAndDevice("numpy", None),
           f"omnitensor {DEVICE} to numpy")


def pytest_configure(config) -> None:
    import sklearn.utils._array_api as api
    api.yield_namespaces = _namespaces
    api.yield_namespace_device_dtype_combinations = _combinations
    if hasattr(api, "yield_mixed_namespace_input_permutations"):
        api.yield_mixed_namespace_input_permutations = _mixed


def _in_shard(nodeid: str) -> bool:
    if not SHARD:
        return True
    i, n = (int(v) for v in SHARD.split("/"))
    return zlib.crc32(nodeid.encode()) % n == i


def pytest_collection_modifyitems(config, items) -> None:
    keep, drop = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        takes_namespace = any(p in params for p in NAMESPACE_PARAMS)
        (keep if takes_namespace and _in_shard(item.nodeid) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


_SKIPPED: list[str] = []


def pytest_runtest_logreport(report) -> None:
    if report.skipped:
        _SKIPPED.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus) -> None:
    """Write the skipped test ids where the driving test can check that none of them is an
    omnitensor case (skips belong to tests that name another library, e.g. cupy)."""
    path = os.environ.get("OMNITENSOR_SKLEARN_SKIPPED")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(_SKIPPED))
