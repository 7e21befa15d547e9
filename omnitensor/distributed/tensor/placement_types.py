"""DTensor placement types (torch's dataclasses): plain values describing a sharding."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Placement", "Shard", "Replicate", "Partial"]


class Placement:
    """How a tensor is laid out over a device-mesh dimension."""

    def is_shard(self, dim: int | None = None) -> bool:
        return isinstance(self, Shard) and (dim is None or self.dim == dim)

    def is_replicate(self) -> bool:
        return isinstance(self, Replicate)

    def is_partial(self) -> bool:
        return isinstance(self, Partial)


@dataclass(frozen=True)
class Shard(Placement):
    dim: int


@dataclass(frozen=True)
class _StridedShard(Shard):
    split_factor: int = 1


@dataclass(frozen=True)
class Replicate(Placement):
    pass


@dataclass(frozen=True)
class Partial(Placement):
    reduce_op: str = "sum"
