"""omnitensor's powerSGD_hook against torch's on one rank (plain ``python``, no mpiexec:
torch's hook hangs on gloo with 2 ranks): the same buckets of gradients, several
iterations (warm start, error feedback), rank 1 (Gram-Schmidt) and 3 (QR), batched same
shapes; torch's random start for Q is put in place of omnitensor's. Prints ``ok``."""
from __future__ import annotations

import sys

import numpy as np
import torch
import torch.distributed as tdist
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as TPS

import omnitensor as ot
import omnitensor.distributed as dist
from omnitensor.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as PS

from _torch_gloo import destroy_torch_group

SHAPES = [(5,), (5, 32), (32,), (32, 32), (32, 32), (32, 4, 3)]
DEV = sys.argv[1] if len(sys.argv) > 1 else "cpu"


class TorchBucket:
    """What torch's hook reads of a GradBucket (it has no Python constructor)."""

    def __init__(self, buf: torch.Tensor) -> None:
        self.buf = buf

    def buffer(self) -> torch.Tensor:
        return self.buf

    def index(self) -> int:
        return 0

    def is_last(self) -> bool:
        return True

    def gradients(self) -> list:
        out, at = [], 0
        for s in SHAPES:
            n = int(np.prod(s))
            out.append(self.buf[at:at + n].view(s))
            at += n
        return out


def torch_qs(shapes: list, seed: int, like: ot.Tensor) -> list:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return [ot.tensor(torch.randn(*s).numpy(), device=like.device) for s in shapes]


def main() -> None:
    # port 0: the store binds a free port itself (a probed port could be taken meanwhile)
    store = tdist.TCPStore("127.0.0.1", 0, 1, True)
    tdist.init_process_group("gloo", store=store, rank=0, world_size=1)
    dist.init_process_group()
    PS._initial_qs = torch_qs
    params = [ot.zeros(s, device=DEV) for s in SHAPES]
    offsets = list(np.cumsum([0] + [int(np.prod(s)) for s in SHAPES])[:-1])
    total = sum(int(np.prod(s)) for s in SHAPES)
    rng = np.random.default_rng(0)
    for rank, batch, warm in ((1, False, True), (3, True, True), (2, False, False)):
        ours = PS.PowerSGDState(None, matrix_approximation_rank=rank, start_powerSGD_iter=2,
                                batch_tensors_with_same_shape=batch, warm_start=warm)
        theirs = TPS.PowerSGDState(None, matrix_approximation_rank=rank,
                                   start_powerSGD_iter=2, batch_tensors_with_same_shape=batch,
                                   warm_start=warm)
        for it in range(5):
            g = rng.standard_normal(total).astype(np.float32)
            bucket = dist.GradBucket(0, 1, ot.tensor(g, device=DEV), offsets, params)
            got = PS.powerSGD_hook(ours, bucket).wait().cpu().numpy()
            want = TPS.powerSGD_hook(theirs, TorchBucket(torch.tensor(g))).wait().numpy()
            err = float(np.max(np.abs(got - want)))
            assert err < 1e-5, f"rank {rank} batch {batch} iteration {it}: differs by {err}"
            if it >= 2:
                assert float(np.max(np.abs(got - g))) > 1e-3, "nothing was compressed"
                e1 = ours.error_dict[0].cpu().numpy()
                assert np.allclose(e1, theirs.error_dict[0].numpy(), atol=1e-5)
        assert ours.iter == theirs.iter == 5
        assert ours.compression_stats() == theirs.compression_stats()
    destroy_torch_group()  # not tdist.destroy_process_group(): see _torch_gloo.py
    dist.destroy_process_group()
    print("ok")


if __name__ == "__main__":
    main()
