"""``omnitensor-run`` argument and launch errors: one clear line on stderr, no traceback,
exit status 2 for bad arguments; a failing mpiexec is reported with its exit code."""
from __future__ import annotations

import subprocess
import sys

import pytest


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "omnitensor.distributed.run", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args,needle", [
    (("-n", "abc", "train.py"), "-n needs a whole number of ranks of at least 1, got 'abc'"),
    (("-n", "0", "train.py"), "got '0'"),
    (("-n", "-3", "train.py"), "got '-3'"),
    (("--nproc-per-node", "x", "train.py"), "--nproc-per-node needs a whole number"),
    (("-n",), "-n needs a value"),
    (("train.py",), "give the number of ranks with -n N"),
    (("-n", "2"), "no script given"),
])
def test_bad_arguments_are_one_line_exit_2(args, needle):
    r = _run(*args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("omnitensor-run: error: ") and needle in lines[0], lines[0]


def test_failing_mpiexec_is_reported_with_its_exit_code(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('never runs')\n")
    r = _run("--mpiexec", "/bin/false", "-n", "2", str(script))
    assert r.returncode == 1
    assert "/bin/false exited with code 1" in r.stderr and "Traceback" not in r.stderr


def test_missing_mpiexec_is_reported():
    r = _run("--mpiexec", "/nonexistent/mpiexec", "-n", "2", "train.py")
    assert r.returncode == 127 and "does not exist" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("args", [("-n", "2", "nosuch.py"), ("--as-torch", "nosuch.py"),
                                  ("-n", "2", "--as-torch", "nosuch.py")])
def test_a_missing_script_is_one_line_before_any_rank_starts(args):
    r = _run(*args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert lines == ["omnitensor-run: error: no such script: nosuch.py (omnitensor-run --help "
                     "for usage)"], r.stderr


def test_help_exits_0():
    r = _run("--help")
    assert r.returncode == 0 and "omnitensor-run" in r.stdout
