"""Rank r has 2 + 2r inputs: Join lets the rank that runs out shadow the others'
all-reduces (torch.distributed.algorithms.join); prints this rank's view as JSON."""
import json
import sys

import omnitensor as ot
import omnitensor.distributed as dist
from omnitensor.distributed.algorithms.join import Join, Joinable, JoinHook


class Hook(JoinHook):
    def __init__(self, owner):
        self.owner = owner

    def main_hook(self):
        dist.all_reduce(ot.zeros(1))  # shadow the training all-reduce
        self.owner.shadowed += 1

    def post_hook(self, is_last_joiner):
        self.owner.last = is_last_joiner


class Counter(Joinable):
    def __init__(self):
        super().__init__()
        self.shadowed, self.last, self.sums = 0, None, []

    def join_hook(self, **kwargs):
        return Hook(self)

    @property
    def join_device(self):
        return ot.device("cpu")

    @property
    def join_process_group(self):
        return dist.group.WORLD

    def step(self):
        work = Join.notify_join_context(self)
        if work is not None:
            work.wait()
        t = ot.ones(1)
        dist.all_reduce(t)
        self.sums.append(t.item())


dist.init_process_group(timeout=60)
rank = dist.get_rank()
c = Counter()
with Join([c]):
    for _ in range(2 + 2 * rank):
        c.step()
thrown = None
c2 = Counter()
try:
    with Join([c2], throw_on_early_termination=True):
        for _ in range(2 + 2 * rank):
            c2.step()
except RuntimeError as e:
    thrown = str(e)
print("JOIN " + json.dumps({"rank": rank, "sums": c.sums, "shadowed": c.shadowed,
                            "last": c.last, "thrown": thrown}))
sys.stdout.flush()
dist.destroy_process_group()
