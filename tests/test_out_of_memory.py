"""Out of memory on every device: one ``OutOfMemoryError`` (torch's name, a RuntimeError)
naming the device and the bytes requested, never a raw NumPy/dpctl error or a segfault, and
the process usable after freeing. Memory pressure comes from a real address-space limit
(``RLIMIT_AS``) set inside a subprocess: nothing is faked."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import omnitensor as ot

PROGRAM = r"""
import json, resource, sys
import omnitensor as ot
dev = sys.argv[1]
ot.ones(8, device=dev).sum().item()              # backend loaded before the limit
with open('/proc/self/statm') as f:
    vsize = int(f.read().split()[0]) * resource.getpagesize()
limit = vsize + (1536 << 20)                      # room for ~1.5 GiB more
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
out = {}
held = []
try:
    for i in range(64):                           # 256 MiB at a time until it fails
        held.append(ot.ones(1 << 26, device=dev))
        ot.synchronize(dev)
    out["error"] = None
except BaseException as e:
    out.update(error=type(e).__name__, module=type(e).__module__, msg=str(e),
               runtime=isinstance(e, RuntimeError), oom=isinstance(e, ot.OutOfMemoryError),
               requested=getattr(e, "requested", None), chunks=len(held))
held.clear()
ot.empty_cache(dev)
x = ot.ones(1 << 26, device=dev)                  # usable again after freeing
out["after"] = float(x[:1000].sum().item())
try:
    ot.zeros(10 ** 12, device=dev)
    out["huge"] = None
except BaseException as e:
    out["huge"] = [type(e).__name__, str(e)]
print(json.dumps(out))
"""


def test_out_of_memory_error_is_torchs():
    assert issubclass(ot.OutOfMemoryError, RuntimeError)
    assert ot.cuda.OutOfMemoryError is ot.OutOfMemoryError
    e = ot.errors.out_of_memory("cpu", 3 << 30, allocated=1 << 30, reserved=2 << 30)
    assert "cpu" in str(e) and "3.00 GiB" in str(e) and "empty_cache" in str(e)
    assert (e.requested, e.allocated, e.reserved) == (3 << 30, 1 << 30, 2 << 30)


@pytest.mark.parametrize("n", [10 ** 12, 2 ** 62])
def test_huge_creation_is_out_of_memory(device, n):
    with pytest.raises(ot.OutOfMemoryError, match=rf"{device}.*out of memory.*allocate"):
        ot.zeros(n, device=device)
    assert ot.ones(3, device=device).sum().item() == 3  # still usable


def test_out_of_memory_under_address_space_limit(device):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(PROGRAM), device],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"crashed (rc {r.returncode}): {r.stderr[-3000:]}"
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["error"] == "OutOfMemoryError", out
    assert out["oom"] and out["runtime"] and out["module"] == "omnitensor.errors", out
    assert out["requested"] == 1 << 28, out
    assert device in out["msg"] and "256.00 MiB" in out["msg"], out["msg"]
    assert 1 <= out["chunks"] <= 6, out
    assert out["after"] == 1000.0
    assert out["huge"][0] == "OutOfMemoryError" and device in out["huge"][1]
