"""The transport registry, as torch's c10d backend registry: a name (``"mpi"``,
``"nccl"``) maps to an import string, imported only when a group first needs it (so
``import omnitensor.distributed`` imports neither mpi4py nor CuPy).

A transport implements :class:`CommBackend` over flat operands; the Tensor-level API in
``collectives.py`` validates arguments, maps torch semantics (bool ``SUM`` is OR, list
forms) and dispatches each call to the transport its tensors' device type maps to.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
from typing import TYPE_CHECKING, Any, Callable

from ..backends import registry as _backend_registry
from .types import DistributedError, ReduceOp, Work

if TYPE_CHECKING:  # pragma: no cover
    from .group import ProcessGroup

__all__ = ["CommBackend", "register_backend", "resolve_backend", "create_backend",
           "DEFAULT_DEVICE_MAP", "Backend"]

#: transport name -> "module:Class"
_TRANSPORTS: dict[str, Any] = {
    "mpi": "omnitensor.distributed.mpi_backend:MPIBackend",
    "nccl": "omnitensor.distributed.nccl_backend:NCCLBackend",
}

#: the default transport of each device type (torch: {cpu: gloo, cuda: nccl}), as each
#: backend declares it (``BackendSpec.transport``; reading it imports no backend)
DEFAULT_DEVICE_MAP = {t: s.transport for t, s in _backend_registry.BACKENDS.items()}
_DEVICE_TYPES = tuple(DEFAULT_DEVICE_MAP)


#: torch's transport names that mean one of ours: gloo (torch's CPU transport) is MPI here
ALIASES = {"gloo": "mpi"}


class Backend(str):
    """Backend names as torch's ``dist.Backend`` (``Backend.MPI == "mpi"``;
    ``Backend.GLOO`` is accepted and carried by MPI)."""

    MPI = "mpi"
    NCCL = "nccl"
    GLOO = "gloo"
    UNDEFINED = "undefined"

    def __new__(cls, name: str) -> "Backend":
        return str.__new__(cls, name.lower())


class CommBackend:
    """One transport bound to one process group.

    Every method starts the operation and returns a :class:`Work`; the caller waits.
    Operands are Tensors; ``root``/``peer`` ranks are ranks *in the group*. Outputs are
    written in place. Flat operands (``out_flat``, ``in_flat``) are C-contiguous 1-D
    tensors holding ``group size`` equal chunks (or the chunks given by ``counts``).
    ``op`` is already mapped for bool tensors (SUM -> MAX, PRODUCT -> MIN) and AVG only
    reaches here for floating/complex dtypes."""

    name = ""

    def __init__(self, group: "ProcessGroup") -> None:
        self.group = group

    def supports_device(self, device_type: str) -> bool:
        return True

    def allreduce(self, t: Any, op: ReduceOp) -> Work:
        raise NotImplementedError

    def broadcast(self, t: Any, root: int) -> Work:
        raise NotImplementedError

    def reduce(self, t: Any, root: int, op: ReduceOp) -> Work:
        raise NotImplementedError

    def allgather(self, out_flat: Any, t: Any) -> Work:
        raise NotImplementedError

    def reduce_scatter(self, out: Any, in_flat: Any, op: ReduceOp) -> Work:
        raise NotImplementedError

    def gather(self, out_flat: Any | None, t: Any, root: int) -> Work:
        raise NotImplementedError

    def scatter(self, out: Any, in_flat: Any | None, root: int) -> Work:
        raise NotImplementedError

    def alltoall(self, out_flat: Any, in_flat: Any, send_counts: list[int],
                 recv_counts: list[int]) -> Work:
        raise NotImplementedError

    def send(self, t: Any, peer: int, tag: int) -> Work:
        raise NotImplementedError

    def recv(self, t: Any, peer: int | None, tag: int) -> Work:
        """``Work.value`` is the sender's group rank."""
        raise NotImplementedError

    def barrier(self) -> Work:
        raise NotImplementedError

    def shutdown(self) -> None:
        """Free the transport's resources (communicators, streams)."""


def register_backend(name: str, target: "str | Callable[[ProcessGroup], CommBackend]",
                     devices: tuple[str, ...] = ()) -> None:
    """Add a transport: ``target`` is a ``"module:Class"`` string or a factory taking the
    group. ``devices`` makes it the default for those device types."""
    _TRANSPORTS[name.lower()] = target
    for d in devices:
        DEFAULT_DEVICE_MAP[d] = name.lower()


def _parse(spec: str, origin: str) -> dict[str, str]:
    """``"mpi"`` | ``"gloo"`` | ``"nccl"`` | ``"cpu:gloo,cuda:nccl"`` -> {device type:
    transport} (torch's names: ``gloo`` is carried by MPI)."""
    spec = spec.strip().lower()
    mapping = {t: "mpi" for t in _DEVICE_TYPES}
    if ":" not in spec:
        spec = ALIASES.get(spec, spec)
        if spec not in _TRANSPORTS:
            raise ValueError(f"{origin}: unknown backend {spec!r}; known: "
                             f"{', '.join(sorted(_TRANSPORTS))} (or 'cpu:mpi,cuda:nccl')")
        if spec == "mpi":
            return mapping
        # a device transport (nccl) carries its device type; MPI carries the others, as
        # torch's "cpu:gloo,cuda:nccl" (MPI is there anyway: it bootstraps NCCL)
        for dev, default in DEFAULT_DEVICE_MAP.items():
            if default == spec:
                mapping[dev] = spec
        return mapping
    for part in spec.split(","):
        dev, _, name = part.strip().partition(":")
        name = ALIASES.get(name, name)
        if dev not in mapping or name not in _TRANSPORTS:
            raise ValueError(f"{origin}: bad entry {part!r} in {spec!r}; expected "
                             f"DEVICE:BACKEND with DEVICE in {', '.join(_DEVICE_TYPES)} and "
                             f"BACKEND in {', '.join(sorted(_TRANSPORTS))}")
        mapping[dev] = name
    return mapping


def resolve_backend(backend: str | None, default_device_type: str) -> tuple[str, dict]:
    """(name reported by ``get_backend``, {device type: transport}).

    Order: an explicit ``backend`` argument, then ``OMNITENSOR_DIST_BACKEND``, then the
    default device's type through :data:`DEFAULT_DEVICE_MAP` (cuda -> nccl, else mpi).
    Like torch's ``backend=None`` ("cpu:gloo,cuda:nccl"), a cpu default still sends cuda
    tensors through NCCL when CuPy has it (communicators are made at first use only)."""
    if isinstance(backend, str) and backend.strip().lower() == Backend.UNDEFINED:
        backend = None
    if backend is None:
        env = os.environ.get("OMNITENSOR_DIST_BACKEND", "").strip()
        if env:
            return _name(env), _parse(env, "OMNITENSOR_DIST_BACKEND")
        backend = DEFAULT_DEVICE_MAP.get(default_device_type, "mpi")
        if backend == "mpi" and "nccl" in DEFAULT_DEVICE_MAP.values() and _nccl_usable():
            backend = ",".join(f"{d}:{t}" for d, t in DEFAULT_DEVICE_MAP.items())
    return _name(backend), _parse(str(backend), "init_process_group(backend=...)")


def check_requested(name: str, default_device_type: str) -> None:
    """Refuse an explicit ``backend="nccl"`` that cannot work here, saying why and what
    to use instead (torch fails later, or hangs, with less to go on)."""
    if name != "nccl":
        return
    why = nccl_unavailable_reason()
    if why:
        raise DistributedError(
            f"backend='nccl': NCCL is not available here ({why}). NCCL carries only cuda "
            f"tensors; for cpu, opencl and sycl tensors use backend='gloo' or 'mpi' (both "
            f"mean MPI in omnitensor), or backend=None to pick by device")
    if DEFAULT_DEVICE_MAP.get(default_device_type) != "nccl" and \
            not _backend_registry.spec(default_device_type).host:
        raise DistributedError(
            f"backend='nccl': NCCL cannot carry {default_device_type} tensors (the default "
            f"device is {default_device_type}); use backend='gloo' or 'mpi' for them, or a "
            f"per-device map such as '{default_device_type}:mpi,cuda:nccl'")


def nccl_unavailable_reason() -> str | None:
    """None when CuPy with NCCL and a CUDA device are usable; else why not."""
    if not _nccl_usable():
        return "CuPy with NCCL is not installed (pip install 'omnitensor[cuda]')"
    from ..backends.registry import try_backend
    for t, transport in DEFAULT_DEVICE_MAP.items():
        if transport == "nccl":
            be, why = try_backend(t)
            if be is not None and be.device_count() > 0:
                return None
            return why or f"no {t} device"
    return "no device type uses NCCL"


def _nccl_usable() -> bool:
    """Whether CuPy with NCCL is installed (imports CuPy only when it is installed)."""
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        from cupy.cuda import nccl
    except Exception:  # noqa: BLE001 - CuPy without NCCL, or without a CUDA runtime
        return False
    return bool(getattr(nccl, "available", True))


def _name(spec: str) -> str:
    return spec.strip().lower()


def create_backend(name: str, group: "ProcessGroup") -> CommBackend:
    """Instantiate transport ``name`` for ``group`` (imports its module now)."""
    target = _TRANSPORTS.get(name)
    if target is None:
        raise DistributedError(f"no transport named {name!r} is registered")
    if isinstance(target, str):
        module_name, _, cls_name = target.partition(":")
        target = getattr(importlib.import_module(module_name), cls_name)
    return target(group)
