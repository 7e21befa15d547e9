"""What README.md shows is what the code does: its ten lines run and print the loss its
comment gives on every device, and the extras it lists are pyproject.toml's."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import omnitensor as ot

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_the_ten_lines_print_the_loss_of_their_comment():
    [code] = re.findall(r"## Ten lines\n\n```python\n(.*?)```", README, re.S)
    want = re.search(r"# cpu, opencl:0, sycl:0: loss (\d\.\d+)", code).group(1)
    env = {k: v for k, v in os.environ.items() if k != "OMNITENSOR_DEVICE"}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=600, env=env, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert [line.partition(": ")[0] for line in lines] == [str(d) for d in ot.devices()]
    for line in lines:
        if line.partition(": ")[0] in ("cpu", "opencl:0", "sycl:0"):
            assert line.endswith(f"loss {want}"), line


def test_the_extras_listed_are_pyprojects():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    [listed] = re.findall(r"Extras: (.*?), and `all`", README, re.S)
    assert set(re.findall(r"`([a-z]+)`", listed)) == set(extras) - {"all"}
    # `all` is everything but the ones the README leaves out of it
    [left_out] = re.findall(r"`all` \(everything but (.*?)\)", README)
    outside = set(re.findall(r"`([a-z]+)`", left_out))
    want = {req for name, reqs in extras.items() if name not in outside | {"all", "test"}
            for req in reqs}
    assert set(extras["all"]) == want
