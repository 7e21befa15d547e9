"""``torch.distributed.algorithms.join`` on 2 ranks with uneven inputs (rank 0: 2 steps,
rank 1: 4): the rank that runs out shadows the other's all-reduces through its JoinHook,
only the last joiner's post_hook says so, and throw_on_early_termination makes both
ranks raise torch's messages (omnitensor/distributed/algorithms/join.py)."""
from __future__ import annotations

import json

import pytest

from dist_helpers import needs_mpi, run_ranks

pytestmark = [pytest.mark.mpi, needs_mpi]


def test_join_uneven_inputs_on_two_ranks():
    proc, _ = run_ranks(2, "join_uneven.py", timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    views = {v["rank"]: v for v in (json.loads(ln[5:]) for ln in proc.stdout.splitlines()
                                    if ln.startswith("JOIN "))}
    assert views[0]["sums"] == [2.0, 2.0] and views[0]["shadowed"] == 2
    assert views[1]["sums"] == [2.0, 2.0, 1.0, 1.0] and views[1]["shadowed"] == 0
    assert views[0]["last"] is False and views[1]["last"] is True
    assert views[0]["thrown"] == "Rank 0 exhausted all inputs."
    assert views[1]["thrown"] == ("Detected at least one rank that exhausted inputs. "
                                  "Throwing across all ranks.")


def test_join_needs_a_joinable_and_is_inert_when_disabled():
    from omnitensor.distributed.algorithms.join import Join, Joinable
    with pytest.raises(ValueError, match="at least one joinable"):
        Join([])

    class Lone(Joinable):
        def __init__(self):
            super().__init__()

        def join_hook(self, **kwargs):
            raise AssertionError("not called")

        join_device = property(lambda self: None)
        join_process_group = property(lambda self: None)

    assert Join.notify_join_context(Lone()) is None  # outside a Join: no collective
