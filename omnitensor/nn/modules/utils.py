"""``torch.nn.modules.utils``: the argument helpers layers and libraries import from torch's
path (``from torch.nn.modules.utils import _pair``: kornia, timm, detectron-style code)."""
from __future__ import annotations

import collections.abc
from itertools import repeat
from typing import Any, Callable

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple]:
    """A function turning one value into an ``n``-tuple of it (iterables pass as tuples)."""
    def parse(x: Any) -> tuple:
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: Any, n: int) -> tuple:
    """``t`` reversed with each element repeated ``n`` times (a layer's padding as
    ``F.pad`` takes it)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size: Any, defaults: list[int]) -> Any:
    """Adaptive pools' output size with None entries taken from the input's sizes."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict: dict, prefix: str) -> None:
    """Strip ``prefix`` from every key of ``state_dict`` that has it, in place (and from
    its ``_metadata``): loading a DDP-wrapped model's checkpoint (``module.``) into the
    bare model."""
    for key in [k for k in state_dict if k.startswith(prefix)]:
        state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            if key == prefix.rstrip("."):
                metadata[""] = metadata.pop(key)
            elif key.startswith(prefix):
                metadata[key[len(prefix):]] = metadata.pop(key)
