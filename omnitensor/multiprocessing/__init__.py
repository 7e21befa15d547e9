"""``omnitensor.multiprocessing``: torch's ``torch.multiprocessing``.

A drop-in for the standard ``multiprocessing`` (every name of it is here) in which tensors
sent through a ``Queue``, ``Pipe``, ``Pool`` or as a ``Process``'s arguments arrive as
tensors: cpu tensors through shared memory (sender and receiver share the values: Hogwild
training), device tensors by value (``reductions.py``). Also torch's ``spawn`` /
``start_processes`` with ``ProcessContext``, ``ProcessRaisedException`` and
``ProcessExitedException``, and the sharing strategies.

::

    import omnitensor.multiprocessing as mp

    def train(rank, model):              # Hogwild: every process updates one model
        opt = optim.SGD(model.parameters(), lr=0.01)
        ...

    model.share_memory()                 # cpu parameters into shared memory
    mp.spawn(train, args=(model,), nprocs=4)

Under ``python -m omnitensor.as_torch``, children started here see ``import torch`` as
omnitensor too (``context.py``).
"""
from __future__ import annotations

import multiprocessing as _std
from multiprocessing import *  # torch re-exports the whole module

from ..core.shared_memory import STRATEGIES as _STRATEGIES
from ..core.shared_memory import get_sharing_strategy, set_sharing_strategy
from .context import Pool, Process, alias_for_children, get_context
from .reductions import init_reductions
from .spawn import (ProcessContext, ProcessException, ProcessExitedException,
                    ProcessRaisedException, SpawnContext, spawn, start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "SpawnContext",
           "ProcessException", "ProcessRaisedException", "ProcessExitedException",
           "alias_for_children", *_std.__all__]


def get_all_sharing_strategies() -> set[str]:
    """The sharing strategies this system supports."""
    return set(_STRATEGIES)


init_reductions()
