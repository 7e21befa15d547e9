"""torch.distributed.nn: collectives autograd differentiates, on 2 real ranks per device."""
import json

import pytest

from dist_helpers import DIST_DEVICES, needs_mpi, run_ranks, skip_absent

SECTIONS = ["all_reduce", "all_gather", "broadcast", "reduce_scatter", "all_to_all_single"]
_cache: dict = {}


@needs_mpi
@pytest.mark.mpi
@pytest.mark.parametrize("dev", DIST_DEVICES)
@pytest.mark.parametrize("section", SECTIONS)
def test_differentiable_collective(dev, section, tmp_path_factory):
    skip_absent(dev)
    if dev not in _cache:
        path = tmp_path_factory.mktemp("dist_nn") / "report.json"
        proc, _secs = run_ranks(2, "dist_nn.py", dev, str(path))
        _cache[dev] = json.loads(path.read_text())["results"] if path.exists() else {
            s: f"worker crashed: {proc.stderr[-3000:]}" for s in SECTIONS}
    assert _cache[dev][section] == "ok", _cache[dev][section]
