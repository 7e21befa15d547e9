"""torch.distributed's ways to cut groups out of groups: ``new_subgroups``,
``new_subgroups_by_enumeration`` (both ``new_group`` calls on every rank), ``split_group``
(an ``MPI_Comm_split`` of the parent: only its members call it) and ``shrink_group`` (an
``MPI_Comm_create_group``: only the ranks that stay call it), plus the group queries
``get_pg_count`` and ``get_backend_config``.
"""
from __future__ import annotations

from typing import Any

from .group import (ProcessGroup, _require_init, _world, make_group, mpi, new_group,
                    resolve_group)

__all__ = ["new_subgroups", "new_subgroups_by_enumeration", "split_group", "shrink_group",
           "get_pg_count", "get_backend_config", "SHRINK_DEFAULT", "SHRINK_ABORT"]

SHRINK_DEFAULT = 0
SHRINK_ABORT = 1


def new_subgroups_by_enumeration(ranks_per_subgroup_list: list[list[int]],
                                 timeout: Any = None, backend: Any = None,
                                 pg_options: Any = None, group_desc: str | None = None,
                                 ) -> tuple[ProcessGroup | None, list[ProcessGroup]]:
    """One group per list of global ranks (lists must not overlap; every rank calls
    this); returns (the group holding this rank or None, all the groups)."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    me = _require_init().rank()
    seen: dict[int, int] = {}
    cur, groups = None, []
    for i, ranks in enumerate(ranks_per_subgroup_list):
        for r in ranks:
            if r in seen:
                raise ValueError(f"Rank {r} has appeared in both subgroup "
                                 f"{ranks_per_subgroup_list[seen[r]]} and {ranks}")
            seen[r] = i
        g = new_group(ranks, timeout, backend, pg_options, group_desc=group_desc)
        groups.append(g)
        if me in g.ranks:
            cur = g
    return cur, groups


def new_subgroups(group_size: int | None = None, group: Any = None, timeout: Any = None,
                  backend: Any = None, pg_options: Any = None,
                  group_desc: str | None = None,
                  ) -> tuple[ProcessGroup | None, list[ProcessGroup]]:
    """Cut ``group`` (default: the world) into groups of ``group_size`` consecutive ranks
    (default: the ranks of one node); returns (this rank's group, all the groups)."""
    parent = resolve_group(group)
    size = _world.local_size if group_size is None else int(group_size)
    if size <= 0:
        raise ValueError("The arg 'group_size' must be greater than 0")
    if size > parent.size():
        raise ValueError(f"The arg 'group_size' ({size}) must not exceed the world size "
                         f"({parent.size()})")
    if parent.size() % size != 0:
        raise ValueError(f"The world size ({parent.size()}) must be divisible by "
                         f"'group_size={size}'")
    ranks = list(parent.ranks)
    chunks = [ranks[i:i + size] for i in range(0, len(ranks), size)]
    return new_subgroups_by_enumeration(chunks, timeout, backend, pg_options, group_desc)


def split_group(parent_pg: Any = None, split_ranks: list | None = None,
                timeout: Any = None, pg_options: Any = None, group_desc: str | None = None,
                backend: Any = None) -> ProcessGroup | None:
    """Split ``parent_pg`` (default: the world) into the disjoint groups of
    ``split_ranks`` (ranks *in the parent*); every parent member calls this. Returns this
    rank's new group, or None when no split holds it."""
    parent = resolve_group(parent_pg)
    if not parent.is_member:
        raise ValueError("split_group: this rank is not in the parent group")
    if not split_ranks:
        raise ValueError("split_ranks cannot be None or empty")
    color, seen, mine = None, set(), []
    for i, split in enumerate(split_ranks):
        for r in split:
            if not 0 <= r < parent.size() or r in seen:
                raise ValueError(f"split_group: rank {r} of split {i} is outside the parent "
                                 f"group of {parent.size()} or in two splits")
            seen.add(r)
        if parent.rank() in split:
            color, mine = i, [int(r) for r in split]
    MPI = mpi()
    key = mine.index(parent.rank()) if color is not None else 0
    comm = parent.comm.Split(MPI.UNDEFINED if color is None else color, key)
    if color is None:
        return None
    return make_group(comm, [parent.global_rank(r) for r in mine], timeout,
                      backend, group_desc)


def shrink_group(ranks_to_exclude: list[int], group: Any = None,
                 shrink_flags: int = SHRINK_DEFAULT, pg_options: Any = None) -> ProcessGroup:
    """A new group of ``group``'s ranks (default: the world) without
    ``ranks_to_exclude`` (ranks in ``group``). Only the remaining ranks call it. Shrinking
    the default group makes the result the default and destroys the other groups."""
    parent = resolve_group(group)
    if shrink_flags not in (SHRINK_DEFAULT, SHRINK_ABORT):
        raise ValueError(f"Invalid shrink_flags value: {shrink_flags}. Must be "
                         f"SHRINK_DEFAULT ({SHRINK_DEFAULT}) or SHRINK_ABORT ({SHRINK_ABORT})")
    out = [int(r) for r in ranks_to_exclude]
    if not out:
        raise ValueError("ranks_to_exclude cannot be empty")
    if len(set(out)) != len(out):
        raise ValueError("ranks_to_exclude contains duplicate ranks")
    for r in out:
        if not 0 <= r < parent.size():
            raise ValueError(f"Rank {r} in ranks_to_exclude is out of bounds for group "
                             f"of size {parent.size()}")
    if len(out) == parent.size():
        raise ValueError("Cannot exclude all ranks")
    if parent.rank() in out:
        raise RuntimeError(f"Current rank {parent.rank()} is in the exclusion list and "
                           f"should not call shrink_group()")
    keep = [r for r in range(parent.size()) if r not in set(out)]
    sub = parent.comm.Get_group().Incl(keep)
    comm = parent.comm.Create_group(sub)
    sub.Free()
    members = [parent.global_rank(r) for r in keep]
    if parent is not _world.default:
        return make_group(comm, members, parent.timeout, None)
    # the world's numbering changes: every other group's ranks become stale, so they
    # are dropped (not freed: MPI_Comm_free is collective over the ranks left out too)
    shrunk = make_group(comm, list(range(len(keep))), parent.timeout, None)
    shrunk.group_desc = "default_pg"
    _world.default = shrunk
    _world.groups = [shrunk]
    return shrunk


def get_pg_count() -> int:
    """The number of process groups created since ``init_process_group`` (the default
    group included; destroying one does not lower it)."""
    return _world.group_count


def get_backend_config(group: Any = None) -> str:
    """The group's transport per device type, as ``"cpu:mpi,cuda:nccl"``."""
    g = resolve_group(group)
    if not g.is_member:
        raise ValueError("Invalid process group specified")
    return ",".join(f"{dev}:{name}" for dev, name in g.transports.items())
