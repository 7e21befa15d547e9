"""Shared fixtures: the ``device`` fixture runs a test on every available device
(``OMNITENSOR_TEST_DEVICES=cpu,opencl:0`` narrows it), and per-backend known gaps live in
``tests/xfail_<backend>.txt`` (``pattern  # reason`` lines, fnmatch on the test id)."""
from __future__ import annotations

import fnmatch
import os
import pickle
import zlib
from pathlib import Path

import pytest

import omnitensor as ot

HERE = Path(__file__).parent

#: test files that start rendezvous servers or MPI jobs (fixed ports such as torch's default
#: 29500, mpiexec's resources): under pytest-xdist (the README's ``-n``) they all run on one
#: worker, one after another; every other file is its own group (``--dist loadgroup``), so
#: a file's module fixtures are built once
_SERIAL_MARKERS = ("init_process_group", "MASTER_PORT", "TCPStore", "rendezvous", "mpiexec",
                   "omnitensor-run", "distributed.run", "mp.spawn", "multiprocessing.spawn")


def _xdist_group(path: Path, cache: dict[Path, str] = {}) -> str:  # noqa: B006 - memo
    """The pytest-xdist group of the tests in ``path`` (see ``_SERIAL_MARKERS``)."""
    if path not in cache:
        text = path.read_text(errors="replace") if path.suffix == ".py" else ""
        serial = "dist" in path.relative_to(HERE).parts or any(m in text for m in _SERIAL_MARKERS)
        cache[path] = "serial" if serial else str(path.relative_to(HERE))
    return cache[path]


def _unavailable(dev: str) -> str | None:
    """Why device ``dev`` cannot run tests here (None when it can)."""
    from omnitensor.backends import registry
    try:
        name = str(ot.device(dev))
    except Exception as e:  # the message names the devices found
        return str(e)
    if name in [str(d) for d in ot.devices()]:
        return None
    _be, why = registry.try_backend(name.split(":")[0])
    return why or f"this machine has no device {name}"


def _selected_devices() -> list:
    """Every device here, or those OMNITENSOR_TEST_DEVICES names; a named device this
    machine lacks (e.g. cuda:0 without CuPy or a GPU) skips its tests with the reason."""
    spec = os.environ.get("OMNITENSOR_TEST_DEVICES", "").strip()
    if not spec:
        return [str(d) for d in ot.devices()]
    params = []
    for dev in (s.strip() for s in spec.split(",") if s.strip()):
        why = _unavailable(dev)
        params.append(dev if why is None else
                      pytest.param(dev, marks=pytest.mark.skip(reason=f"{dev}: {why}")))
    return params


DEVICES = _selected_devices()


def pytest_report_header(config: pytest.Config) -> str:
    return "omnitensor test devices: " + ", ".join(
        d if isinstance(d, str) else f"{d.values[0]} (skipped: unavailable)" for d in DEVICES)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", DEVICES, scope="session")


def _xfails() -> dict[str, list[tuple[str, str]]]:
    table: dict[str, list[tuple[str, str]]] = {}
    for f in HERE.glob("xfail_*.txt"):
        backend = f.stem[len("xfail_"):]
        rows = []
        for line in f.read_text().splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            pattern, _, reason = line.partition("#")
            rows.append((pattern.strip(), reason.strip() or "known gap"))
        table[backend] = rows
    return table


#: the share of a ``device_sampled`` test's cases CI runs on each device other than cpu
#: (the rest are ``slow``: ``-m slow`` runs them); cpu, the reference, runs every case
DEVICE_SAMPLE = 3


def _sampled_out(item: pytest.Item) -> bool:
    """Whether a ``device_sampled`` case on a device other than cpu falls outside CI's
    deterministic slice (a hash of its id, so opencl:0 and sycl:0 cover different cases)."""
    if item.get_closest_marker("device_sampled") is None:
        return False
    callspec = getattr(item, "callspec", None)
    dev = callspec.params.get("device") if callspec else None
    if dev is None or str(dev).split(":")[0] == "cpu":
        return False
    return zlib.crc32(item.nodeid.encode()) % DEVICE_SAMPLE != 0


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by marks
def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    """Skip ``slow`` tests (soaks, sweeps, the cases outside CI's device sample) unless
    ``-m slow`` asks for them; mark the per-backend known gaps as strict xfails; group the
    files for pytest-xdist (``_xdist_group``)."""
    table = _xfails()
    skip_slow = None if "slow" in (config.getoption("-m") or "") else \
        pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_xdist_group(Path(item.path))))
        if _sampled_out(item):
            item.add_marker(pytest.mark.slow)
        if skip_slow is not None and "slow" in item.keywords:
            item.add_marker(skip_slow)
        callspec = getattr(item, "callspec", None)
        dev = callspec.params.get("device") if callspec else None
        if dev is None:
            continue
        backend = str(dev).split(":")[0]
        rows = table.get(backend, [])
        if backend == "sycl" and os.environ.get("OMNITENSOR_SYCL_KERNELS") == "dpnp":
            rows = rows + table.get("sycl_dpnp", [])  # the fallback on dpnp's kernels
        for pattern, reason in rows:
            if fnmatch.fnmatch(item.nodeid, pattern) or fnmatch.fnmatch(item.name, pattern):
                item.add_marker(pytest.mark.xfail(reason=f"{backend}: {reason}", strict=True))
                break


def has_fp64(device: str) -> bool:
    return ot.device(device).supports_dtype(ot.float64)


def has_fp16(device: str) -> bool:
    return ot.device(device).supports_dtype(ot.float16)


def skip_unsupported(device: str, dtype) -> None:
    if not ot.device(device).supports_dtype(dtype):
        pytest.skip(f"{device} has no {ot.as_dtype(dtype).name}")


#: under pytest-xdist, on the controller: the OpInfo suite's results from every worker
#: (``tests/torch_opinfo/conftest.py`` prints them itself in a run without workers)
_OPINFO_FROM_WORKERS: list = []


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook
def pytest_testnodedown(node, error) -> None:
    data = getattr(node, "workeroutput", {}).get("opinfo_results")
    if data:
        _OPINFO_FROM_WORKERS.extend(pickle.loads(data))  # our own worker's results


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not _OPINFO_FROM_WORKERS:
        return
    from omnitensor.conformance import torch_opinfo
    terminalreporter.section("torch OpInfo coverage")
    for line in torch_opinfo.write_summary(_OPINFO_FROM_WORKERS):
        terminalreporter.write_line(line)
