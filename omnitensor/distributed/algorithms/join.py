"""``torch.distributed.algorithms.join``: training with uneven inputs across ranks.

Inside ``with Join([joinable, ...]):`` each joinable calls :meth:`Join.notify_join_context`
once per iteration, which all-reduces a 1 (this rank still has data). A rank that runs out
of inputs leaves the block; on exit it all-reduces 0 in a loop, running the joinables'
``JoinHook.main_hook`` (shadowing the collectives the others still issue) until the sum
says every rank has joined, then calls each ``post_hook(is_last_joiner)``. With
``throw_on_early_termination=True`` the first rank to run out makes every rank raise.
"""
from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from typing import Any, NamedTuple

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """What a joinable does for a rank that has joined: ``main_hook`` each round while
    others still train, ``post_hook(is_last_joiner)`` once all have joined."""

    def main_hook(self) -> None:
        """Shadow one iteration's collectives of a rank still training."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Run once every rank has joined."""


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config() -> "_JoinConfig":
        return _JoinConfig(enable=False, throw_on_early_termination=False,
                           is_first_joinable=False)


class Joinable(ABC):
    """A class (e.g. a DDP-like wrapper) that takes part in :class:`Join`."""

    @abstractmethod
    def __init__(self) -> None:
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs: Any) -> JoinHook:
        """This joinable's hook (``kwargs`` are Join's extra keyword arguments)."""

    @property
    @abstractmethod
    def join_device(self) -> Any:
        """The device of the join collectives."""

    @property
    @abstractmethod
    def join_process_group(self) -> Any:
        """The process group of the join collectives."""


class Join:
    """The context manager (see the module doc)."""

    def __init__(self, joinables: list, enable: bool = True,
                 throw_on_early_termination: bool = False, **kwargs: Any) -> None:
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, j in enumerate(joinables):
            j._join_config = _JoinConfig(enable, throw_on_early_termination, i == 0)
        groups = {id(j.join_process_group): j for j in joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group = joinables[0].join_process_group
        self._device = joinables[-1].join_device
        from ..group import get_rank
        self._rank = get_rank(self._process_group)

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if not self._enable or exc_type is not None:
            return  # an error propagates as is
        is_last_joiner, rounds = True, 0
        while self._count_not_joined() != 0:
            if rounds == 1000:
                warnings.warn(f"Detected uneven input skew of greater than 1000. This means "
                              f"that rank {self._rank} has at least 1000 fewer inputs than "
                              f"other currently-active ranks. This level of skew could lead "
                              f"to performance degradation during training.", stacklevel=2)
            if self._throw_on_early_termination:
                self._notify_procs_to_terminate()
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
            rounds += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    def _count_not_joined(self) -> int:
        from ... import zeros
        from ..collectives import all_reduce
        n = zeros(1, device=self._device)
        all_reduce(n, group=self._process_group)
        return int(n.item())

    def _notify_procs_to_terminate(self) -> None:
        from ... import ones
        from ..collectives import all_reduce
        all_reduce(ones(1, device=self._device), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable: Joinable) -> Any:
        """Called by the first joinable once per iteration: all-reduce a 1 (this rank
        still trains); returns the async work, or None outside an enabled Join."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the "
                                 f"``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        from ... import ones, zeros
        from ..collectives import all_reduce
        device, group = joinable.join_device, joinable.join_process_group
        work = all_reduce(ones(1, device=device), group=group, async_op=True)
        if config.throw_on_early_termination:
            flag = zeros(1, device=device)
            all_reduce(flag, group=group)
            if flag.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
        return work
