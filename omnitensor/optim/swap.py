"""``swap_in_optimizer_params_and_state``: run an optimizer's API on other parameter
tensors and another state for a while (torch's ``torch.optim`` context manager)."""
from __future__ import annotations

import contextlib
from collections import defaultdict
from typing import Any, Iterator

from ..core.tensor import Tensor

__all__ = ["swap_in_optimizer_params_and_state"]


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer: Any, swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Inside, ``optimizer`` sees ``swapin_parameters`` (in the order of its own
    parameters, across groups: packed id ``k`` is the k-th) as its parameters and
    ``swapin_optim_state`` (a ``state_dict()``-shaped dict) as its state and group
    options; on exit its own parameters, state and options come back. The swap-in state's
    tensors are used as they are, so in-place updates (a ``step()``) land in them."""
    params = list(swapin_parameters.values())
    n_own = sum(len(g["params"]) for g in optimizer.param_groups)
    if len(params) != n_own:
        raise ValueError(f"swap_in_optimizer_params_and_state: {len(params)} swap-in "
                         f"parameters for an optimizer of {n_own}")
    groups = swapin_optim_state["param_groups"]
    if len(groups) != len(optimizer.param_groups):
        raise ValueError("swap_in_optimizer_params_and_state: the swap-in state has "
                         f"{len(groups)} parameter groups, the optimizer "
                         f"{len(optimizer.param_groups)}")
    saved_groups = [dict(g) for g in optimizer.param_groups]
    saved_state = optimizer.state
    state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
    for k, s in swapin_optim_state["state"].items():
        state[params[int(k)]] = s  # the same dict: in-place edits propagate
    try:
        for group, packed in zip(optimizer.param_groups, groups):
            group.update({k: v for k, v in packed.items() if k != "params"})
            group["params"] = [params[int(k)] for k in packed["params"]]
        optimizer.state = state
        yield
    finally:
        for group, saved in zip(optimizer.param_groups, saved_groups):
            group.clear()
            group.update(saved)
        optimizer.state = saved_state
