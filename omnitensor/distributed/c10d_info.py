"""torch.distributed's queries and settings about the job rather than about tensors:
which transports exist, the debug level, the node-local rank, the deprecated
``reduce_op``, and the vocabulary types ``DebugLevel`` and ``GroupName``.

Transport names are torch's: ``gloo`` and ``mpi`` are both carried by MPI here
(``registry.ALIASES``), ``nccl`` by NCCL through CuPy; ``ucc`` and ``xccl`` do not exist.
"""
from __future__ import annotations

import enum
import os
import warnings
from typing import Any, NewType

from .registry import (_TRANSPORTS, ALIASES, DEFAULT_DEVICE_MAP, nccl_unavailable_reason,
                       resolve_backend)
from .types import ReduceOp

__all__ = ["DebugLevel", "get_debug_level", "set_debug_level", "set_debug_level_from_env",
           "is_mpi_available", "is_gloo_available", "is_nccl_available", "is_ucc_available",
           "is_xccl_available", "is_backend_available", "is_torchelastic_launched",
           "get_default_backend_for_device", "get_node_local_rank", "supports_complex",
           "reduce_op", "GroupName", "BackendConfig", "breakpoint"]

#: a process group's name (torch's ``NewType``)
GroupName = NewType("GroupName", str)


class DebugLevel(enum.Enum):
    """How much distributed debugging runs (torch's ``DebugLevel``): ``DETAIL`` turns on
    the cross-rank check of every collective's shapes, dtypes and op (see collectives)."""

    OFF = 0
    INFO = 1
    DETAIL = 2


class BackendConfig:
    """The transport of each device type a backend string means (torch's
    ``BackendConfig``): ``BackendConfig("gloo").get_device_backend_map()`` is
    ``{"cpu": "mpi", ...}`` here, where MPI carries gloo's role."""

    def __init__(self, backend: str) -> None:
        from ..core.device import get_default_device
        self._name, self._map = resolve_backend(str(backend), get_default_device().type)

    def get_device_backend_map(self) -> dict[str, str]:
        return dict(self._map)

    def __repr__(self) -> str:
        return ",".join(f"{dev}:{name}" for dev, name in self._map.items())


def _level_from_env() -> DebugLevel:
    # torch's variable, and omnitensor's older name for the same switch
    raw = os.environ.get("TORCH_DISTRIBUTED_DEBUG") or os.environ.get(
        "OMNITENSOR_DIST_DEBUG") or "OFF"
    try:
        return DebugLevel[raw.strip().upper()]
    except KeyError:
        raise ValueError(f"TORCH_DISTRIBUTED_DEBUG must be OFF, INFO or DETAIL, got "
                         f"{raw!r}") from None


_level = [_level_from_env()]


def get_debug_level() -> DebugLevel:
    """The current debug level (from ``TORCH_DISTRIBUTED_DEBUG`` unless set)."""
    return _level[0]


def set_debug_level(level: DebugLevel) -> None:
    """Set the debug level; groups created afterwards follow it."""
    if not isinstance(level, DebugLevel):
        raise TypeError(f"set_debug_level takes a DebugLevel, got {type(level).__name__}")
    _level[0] = level


def set_debug_level_from_env() -> None:
    """Read the debug level again from ``TORCH_DISTRIBUTED_DEBUG``."""
    _level[0] = _level_from_env()


# ------------------------------------------------------------------- availability
def is_mpi_available() -> bool:
    """Whether the MPI transport can be used (mpi4py is installed)."""
    from .group import is_available
    return is_available()


def is_gloo_available() -> bool:
    """Whether ``backend="gloo"`` works: it is carried by MPI here."""
    return is_mpi_available()


def is_nccl_available() -> bool:
    """Whether the NCCL transport can be used (CuPy with NCCL and a GPU)."""
    return nccl_unavailable_reason() is None


def is_ucc_available() -> bool:
    """UCC is not a transport of omnitensor."""
    return False


def is_xccl_available() -> bool:
    """XCCL (torch's XPU transport) is not a transport of omnitensor."""
    return False


def is_backend_available(backend: str) -> bool:
    """Whether ``backend`` (a name, or a per-device map as ``"cpu:gloo,cuda:nccl"``) can
    be used."""
    names = [part.split(":")[-1] for part in str(backend).lower().split(",")]
    checks = {"mpi": is_mpi_available, "nccl": is_nccl_available}
    for name in names:
        name = ALIASES.get(name.strip(), name.strip())
        if name not in _TRANSPORTS:
            return False
        if name in checks and not checks[name]():
            return False
    return True


def is_torchelastic_launched() -> bool:
    """Whether torchelastic started this process (``TORCHELASTIC_RUN_ID`` is set)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_default_backend_for_device(device: Any) -> str:
    """The default transport name of a device type, in torch's names (``"gloo"`` for
    the MPI-carried device types, as torch names cpu's)."""
    dev_type = getattr(device, "type", None) or str(device).split(":")[0]
    name = DEFAULT_DEVICE_MAP.get(dev_type)
    if name is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return "gloo" if name == "mpi" else name


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank on its node from ``LOCAL_RANK`` (omnitensor-run and torchrun
    set it), else ``fallback_rank``."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
        "`get_node_local_rank` to work, assuming you are not running in a multi-device "
        "context and want the code to run locally instead.")


def supports_complex(reduceOp: ReduceOp) -> bool:  # torch's name
    """Whether ``reduceOp`` is defined on complex tensors (not MIN, MAX or PRODUCT)."""
    return reduceOp not in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT)


class _DeprecatedReduceOp:
    """torch's deprecated ``dist.reduce_op``: its members are ReduceOp's, with a warning."""

    def __getattr__(self, name: str) -> Any:
        warnings.warn("`torch.distributed.reduce_op` is deprecated, please use "
                      "`torch.distributed.ReduceOp` instead", FutureWarning, stacklevel=2)
        try:
            return ReduceOp[name]
        except KeyError:
            raise AttributeError(name) from None


reduce_op = _DeprecatedReduceOp()


_breakpoint_hits: dict[str, int] = {}


def breakpoint(rank: int = 0, skip: int = 0, timeout_s: Any = 3600) -> None:  # noqa: A001
    """Stop in pdb on global rank ``rank`` only, while every other rank waits in a
    barrier (up to ``timeout_s`` seconds, so the debugging session is not cut short by
    the group's timeout). ``skip`` ignores the first ``skip`` hits of this call site."""
    import pdb
    import sys
    import traceback
    from .collectives import barrier
    from .group import get_rank
    if skip > 0:
        site = "".join(traceback.format_stack(limit=3)[:-1])
        _breakpoint_hits[site] = _breakpoint_hits.get(site, 0) + 1
        if _breakpoint_hits[site] <= skip:
            return
    if get_rank() == rank:
        # mpiexec gives rank 0 the terminal's stdin; another rank reads the terminal
        try:
            stdin = open("/dev/tty") if rank != 0 and os.path.exists("/dev/tty") \
                else sys.stdin
        except OSError:
            stdin = sys.stdin
        debugger = pdb.Pdb(stdin=stdin)
        debugger.message(f"\n!!! ATTENTION !!!\n\nType 'up' to get to the frame that "
                         f"called dist.breakpoint(rank={rank})\n")
        debugger.set_trace(sys._getframe(1))
    barrier(timeout=timeout_s)
