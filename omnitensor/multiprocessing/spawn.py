"""``spawn`` and ``start_processes``: torch's helpers to run ``fn(i, *args)`` in N processes.

Each child runs :func:`_wrap`: ``fn(i, *args)``; an exception is written (as its formatted
traceback) to the child's error file and the child exits with code 1. The parent's
:meth:`ProcessContext.join` waits for any child to end; when one fails it terminates the
rest (SIGTERM, then SIGKILL after a grace period) and raises
:class:`ProcessRaisedException` with the child's traceback, or
:class:`ProcessExitedException` for a child that died without one (a signal, ``os._exit``),
as torch does.

**Under ``omnitensor-run -n N``** (an MPI job), ``spawn(fn, nprocs=N)`` starts nothing: each
rank of the job *is* one of the N processes, so it runs ``fn(RANK, *args)`` itself. A
script written for ``mp.spawn`` + ``init_process_group("gloo", rank=rank,
world_size=world_size)`` (the DDP tutorial) therefore runs unchanged under the launcher;
omnitensor's ``gloo`` is MPI, whose ranks must be started by ``mpiexec`` (Open MPI's
singleton processes cannot join each other: ``MPI_Comm_connect``/``MPI_Comm_join`` need a
PRRTE server), so processes started by ``spawn`` under plain ``python`` cannot form a
process group, and ``init_process_group`` says so.
"""
from __future__ import annotations

import multiprocessing.connection
import os
import pickle
import signal
import tempfile
import time
import traceback
import warnings
from typing import Any, Callable

from .context import get_context

__all__ = ["ProcessException", "ProcessRaisedException", "ProcessExitedException",
           "ProcessContext", "SpawnContext", "spawn", "start_processes", "SPAWN_INDEX_ENV"]

#: set in each child of ``start_processes`` to its index (read by ``init_process_group``'s
#: error message)
SPAWN_INDEX_ENV = "OMNITENSOR_SPAWN_INDEX"


class ProcessException(Exception):
    """A child of :func:`spawn` failed: ``error_index`` (its ``i``) and ``error_pid``."""

    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, error_pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A child raised an exception; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A child ended without an exception: a signal (``signal_name``) or an exit code."""

    __slots__ = ["exit_code"]

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _wrap(fn: Callable, i: int, args: tuple, error_file: str) -> None:
    """The child's entry point."""
    os.environ[SPAWN_INDEX_ENV] = str(i)
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent sent SIGINT: exit quietly
    except Exception:  # noqa: BLE001 - any failure goes to the parent
        with open(error_file, "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        raise SystemExit(1) from None


class ProcessContext:
    """The running children of :func:`start_processes` (``join=False``)."""

    def __init__(self, processes: list, error_files: list[str]) -> None:
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0.0, end - time.monotonic()))

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the children; True when all have ended well.
        When one fails, the others get ``grace_period`` seconds, then SIGTERM, then
        SIGKILL, and the failure is raised (:class:`ProcessRaisedException` or
        :class:`ProcessExitedException`)."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            p = self.processes[index]
            p.join()
            if p.exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        self._stop_others(grace_period)
        self._raise(failed)
        return False  # unreachable: _raise raises

    def _stop_others(self, grace_period: float | None) -> None:
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        self._join_all(30.0 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                p.kill()
            p.join()

    def _raise(self, index: int) -> None:
        p = self.processes[index]
        path = self.error_files[index]
        if not os.access(path, os.R_OK):
            code = p.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(f"process {index:d} terminated with signal "
                                             f"{name}", index, p.pid, code, name)
            raise ProcessExitedException(f"process {index:d} terminated with exit code "
                                         f"{code:d}", index, p.pid, code)
        with open(path, "rb") as f:
            original = pickle.load(f)  # our own file, written by _wrap: a str
        os.unlink(path)
        msg = f"\n\n-- Process {index:d} terminated with the following error:\n{original}"
        raise ProcessRaisedException(msg, index, p.pid)


class SpawnContext(ProcessContext):
    """torch's deprecated name of :class:`ProcessContext`."""

    def __init__(self, processes: list, error_files: list[str]) -> None:
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.",
                      FutureWarning, stacklevel=2)
        super().__init__(processes, error_files)


class _DoneContext(ProcessContext):
    """What ``join=False`` returns when this MPI rank ran ``fn`` itself."""

    def __init__(self) -> None:
        super().__init__([], [])


#: (rank, size) variables of the MPI launchers (Open MPI's mpiexec, MPICH's hydra); not
#: Slurm's, which are set for a whole allocation, not per started process
_MPI_LAUNCHERS = (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE"))


def _mpi_rank_for(nprocs: int) -> int | None:
    """This process's rank when it is one of exactly ``nprocs`` ranks an MPI launcher
    (``omnitensor-run``, ``mpiexec``) started, else None. MPI is not initialised."""
    for rank_var, size_var in _MPI_LAUNCHERS:
        rank, size = os.environ.get(rank_var, ""), os.environ.get(size_var, "")
        if rank.strip().isdigit() and size.strip().isdigit():
            return int(rank) if int(size) == nprocs and nprocs > 1 else None
    return None


def start_processes(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True,
                    daemon: bool = False, start_method: str = "spawn") -> Any:
    """Run ``fn(i, *args)`` for ``i`` in ``range(nprocs)``, each in its own process of
    ``start_method``. ``join=True`` waits (raising a child's failure); ``join=False``
    returns the :class:`ProcessContext`."""
    if not callable(fn):
        raise TypeError(f"start_processes: fn must be callable, got {type(fn).__name__}")
    if not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"start_processes: nprocs must be a positive int, got {nprocs!r}")
    if not isinstance(args, tuple):
        raise TypeError(f"start_processes: args must be a tuple, got {type(args).__name__}"
                        f" (for one argument write args=(x,))")
    rank = _mpi_rank_for(nprocs)
    if rank is not None:
        _run_here(fn, rank, args)
        return None if join else _DoneContext()
    ctx = get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        fd, path = tempfile.mkstemp(prefix="omnitensor-errorfile-", suffix=".pickle")
        os.close(fd)
        os.unlink(path)  # its existence means "the child raised"
        p = ctx.Process(target=_wrap, args=(fn, i, args, path), daemon=daemon)
        p.start()
        processes.append(p)
        error_files.append(path)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def _run_here(fn: Callable, rank: int, args: tuple) -> None:
    os.environ[SPAWN_INDEX_ENV] = str(rank)
    try:
        fn(rank, *args)
    except Exception:  # noqa: BLE001 - reported as a spawned child's failure is
        msg = (f"\n\n-- Process {rank:d} terminated with the following error:\n"
               f"{traceback.format_exc()}")
        raise ProcessRaisedException(msg, rank, os.getpid()) from None


def spawn(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True,
          daemon: bool = False, start_method: str = "spawn") -> Any:
    """Run ``fn(i, *args)`` in ``nprocs`` new processes (start method ``spawn``): torch's
    ``torch.multiprocessing.spawn``. ``fn`` must be importable by the child (defined at
    the top level of a module or script). Returns None (``join=True``) or the
    :class:`ProcessContext`. Under ``omnitensor-run -n nprocs`` each rank runs its own
    ``fn(rank, *args)`` instead (see the module docstring)."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method})."
                      f"\nTo use a different start_method use:\n\t\t "
                      f"torch.multiprocessing.start_processes(...)", FutureWarning,
                      stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
