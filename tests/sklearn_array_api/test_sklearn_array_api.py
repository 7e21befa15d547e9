"""scikit-learn's own array-API tests, unchanged, on omnitensor, one run per device.

The plugin beside this file (``omnitensor_sklearn_plugin.py``) makes scikit-learn's
namespace generators yield ``("omnitensor", device, float64|float32)`` and keeps only the
tests that take a namespace; each device runs in its own pytest process over the installed
``sklearn`` test modules that use array-API dispatch.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

sklearn = pytest.importorskip("sklearn")
pytest.importorskip("scipy")

HERE = Path(__file__).parent
#: scikit-learn 1.9 yields 485 array-API tests per float dtype (plus the mixed-namespace
#: ones); fewer means the plugin no longer reaches them (a generator renamed upstream),
#: which must fail, not pass quietly
MIN_PASSED_PER_DTYPE = 450
#: a device runs this share of the float32 tests in CI (the cpu reference runs them all)
SHARES = 3
_MARKERS = ("yield_namespace_device_dtype_combinations", "yield_namespaces",
            "yield_mixed_namespace_input_permutations", "_array_api_for_tests",
            "array_api_dispatch")


def _test_modules() -> list[str]:
    root = Path(sklearn.__file__).parent
    return sorted(str(p) for p in root.rglob("test_*.py")
                  if any(m in p.read_text(errors="ignore") for m in _MARKERS))


def test_sklearn_array_api_suite(device, tmp_path):
    """Every test in float64 and float32 on cpu; on a device, CI's slice: float32, the
    third of the tests whose id hashes to the device's share (as ``device_sampled`` tests
    are sliced; the slow tests below run the rest)."""
    if device == "cpu":
        _run_suite(device, "float64,float32", tmp_path)
    else:
        _run_suite(device, "float32", tmp_path, shard=_device_share(device))


@pytest.mark.slow
def test_sklearn_array_api_suite_float64_on_devices(device, tmp_path):
    if device == "cpu":
        pytest.skip("cpu runs float64 in the test above")
    _run_suite(device, "float64", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("share", range(SHARES))
def test_sklearn_array_api_suite_float32_rest_on_devices(device, share, tmp_path):
    if device == "cpu" or share == _device_share(device):
        pytest.skip("run by test_sklearn_array_api_suite")
    _run_suite(device, "float32", tmp_path, shard=share)


def _device_share(device: str) -> int:
    return zlib.crc32(str(device).encode()) % SHARES


def _run_suite(device: str, dtypes: str, tmp_path: Path, shard: int | None = None) -> None:
    import omnitensor as ot
    dev = str(ot.device(device))
    skipped_file = tmp_path / "skipped.txt"
    env = dict(os.environ, SCIPY_ARRAY_API="1", OMNITENSOR_SKLEARN_DEVICE=dev,
               OMNITENSOR_SKLEARN_DTYPES=dtypes,
               OMNITENSOR_SKLEARN_SKIPPED=str(skipped_file),
               OMNITENSOR_SKLEARN_SHARD="" if shard is None else f"{shard}/{SHARES}",
               PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "pytest", "-p", "omnitensor_sklearn_plugin", "-q",
           "-p", "no:cacheprovider", "-W", "ignore", "-rfE", "--rootdir", str(tmp_path),
           *_test_modules()]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env,
                       cwd=tmp_path)
    tail = p.stdout[-4000:]
    summary = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|error|errors)", summary)}
    assert counts.get("failed", 0) == 0 and counts.get("error", 0) + counts.get("errors", 0) == 0, tail
    assert p.returncode == 0, tail
    floor = MIN_PASSED_PER_DTYPE * len(dtypes.split(","))
    if shard is not None:  # a third of the tests, give or take the hash's spread
        floor = floor * 8 // (10 * SHARES)
    assert counts.get("passed", 0) >= floor, tail
    # skips are allowed only where a test names another library (cupy, array_api_strict...)
    ours = [n for n in skipped_file.read_text().split("\n") if "omnitensor" in n]
    assert not ours, ours
