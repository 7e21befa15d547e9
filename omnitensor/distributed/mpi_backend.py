"""The MPI transport (mpi4py): every device type, every dtype, with deadlines.

* Buffers: a contiguous ``cpu`` tensor's own NumPy array goes to MPI (in place with
  ``MPI.IN_PLACE``: no copy); device tensors are staged through host memory after
  draining their queue (``staging.py``), unless the MPI library is CUDA-aware and the
  tensor is on ``cuda`` (then the CuPy array itself goes to MPI, after a synchronize).
* Dtypes: data movement (broadcast, gathers, scatter, all-to-all, send/recv) moves bytes,
  so every dtype works. Reductions use MPI's typed ops; ``float16`` and ``bfloat16`` (which
  MPI cannot reduce portably) are reduced in float32 and rounded back; ``bool`` travels as uint8
  (the caller maps SUM/PRODUCT to MAX/MIN = OR/AND); ``AVG`` is SUM, then a division.
* Deadlines: every operation is a nonblocking MPI request (``Iallreduce``...) polled with
  ``Test`` until it completes or the group's timeout passes since the op started; then
  :class:`DistributedTimeoutError` names the op, the rank and the timeout. Polling spins
  first (small messages complete in microseconds), then yields the CPU between polls
  (ranks often oversubscribe cores), and after a few seconds sleeps briefly between
  polls. Open MPI progresses a nonblocking collective only inside MPI calls, so the poll
  loop is also what drives large transfers: it never sleeps early.
"""
from __future__ import annotations

import ctypes
import os
import time
from typing import Any, Callable, Sequence

import numpy as np

from . import staging
from .group import ProcessGroup, mpi
from .registry import CommBackend
from .types import DistributedError, DistributedTimeoutError, ReduceOp, Work

__all__ = ["MPIBackend", "MPIWork", "cuda_aware", "wait_requests"]

MPI = mpi()

#: numpy dtype name -> MPI datatype for reductions (bool is reduced as uint8)
_REDUCE_TYPES = {
    "int8": MPI.INT8_T, "uint8": MPI.UINT8_T, "int16": MPI.INT16_T,
    "uint16": MPI.UINT16_T, "int32": MPI.INT32_T, "uint32": MPI.UINT32_T,
    "int64": MPI.INT64_T, "uint64": MPI.UINT64_T, "float32": MPI.FLOAT,
    "float64": MPI.DOUBLE, "complex64": MPI.C_FLOAT_COMPLEX,
    "complex128": MPI.C_DOUBLE_COMPLEX, "bool": MPI.UINT8_T,
}
_OPS = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
        ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX}

_SPIN_SECONDS = 2e-3     # pure spinning first: small messages complete in microseconds
_YIELD_SECONDS = 5.0     # then sched_yield between polls for this long, then sleep
_SLEEP_SECONDS = 2e-4
_monotonic = time.monotonic
_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


def wait_requests(reqs: Sequence[Any], deadline: float, describe: Callable[[], str],
                  status: Any = None) -> None:
    """Poll MPI requests until all completed; DistributedTimeoutError past ``deadline``
    (a ``time.monotonic()`` value). ``status`` receives the single request's status.

    The clock is read every 64 polls (a poll costs ~0.1-0.3 us). Spinning for the first
    milliseconds matters: yielding the CPU at once costs a scheduler round trip per
    collective on a loaded machine (10-100x the latency of a small all-reduce)."""
    if len(reqs) == 1:
        req = reqs[0]
        if status is not None:
            def test() -> bool:
                return req.Test(status)
        else:
            test = req.Test
    else:
        def test() -> bool:
            return MPI.Request.Testall(reqs)
    if test():
        return
    n = 0
    start = _monotonic()
    while not test():
        n += 1
        if n & 63:
            continue
        now = _monotonic()
        if now >= deadline:
            raise DistributedTimeoutError(describe())
        waited = now - start
        if waited < _SPIN_SECONDS:
            continue
        if waited < _YIELD_SECONDS:
            _yield()
        else:
            time.sleep(_SLEEP_SECONDS)


class MPIWork(Work):
    """A pending MPI operation: its requests, its deadline, and the finishing step."""

    def __init__(self, backend: "MPIBackend", what: str, reqs: Sequence[Any],
                 finish: Callable[[], Any] | None, outputs: Sequence[Any] = (),
                 status: Any = None, cancellable: bool = False, keep: Any = None) -> None:
        super().__init__(outputs, finish)
        # the buffers MPI reads/writes must outlive the request: staged host copies have
        # no other owner, and the request does not always keep them alive
        self._keep = keep
        self._backend = backend
        self._what = what
        self._reqs = reqs
        self._status = status
        self._cancellable = cancellable
        self._started = _monotonic()

    def _test(self) -> bool:
        try:
            if len(self._reqs) == 1:
                return self._reqs[0].Test(self._status)
            return MPI.Request.Testall(self._reqs)
        except MPI.Exception as e:
            raise self._backend._error(self._what, e) from None

    def _describe(self) -> str:
        g = self._backend.group
        return (f"{self._what} timed out after {self._limit:g} s on rank {g.rank()} "
                f"(global rank {g.global_rank(g.rank())}) of {g.describe()}: a peer did "
                f"not join it (it may have failed, be stuck, or have called a different "
                f"collective). "
                + ("The point-to-point request was withdrawn: the group stays usable."
                   if self._cancellable else
                   "The group cannot be used after this; let the error end the job."))

    def _block(self, timeout: float | None) -> None:
        if timeout is None:
            self._limit = self._backend.group.timeout
            deadline = self._started + self._limit
        else:
            self._limit = float(timeout)
            deadline = _monotonic() + self._limit
        try:
            wait_requests(self._reqs, deadline, self._describe, self._status)
        except DistributedTimeoutError as e:
            if self._cancellable:  # p2p can be withdrawn, keeping the group usable
                for r in self._reqs:
                    try:
                        r.Cancel()
                        r.Wait()
                    except MPI.Exception:
                        pass
            self._exc = e
            raise
        except MPI.Exception as e:
            raise self._backend._error(self._what, e) from None


def _libmpi() -> Any:
    """The loaded libmpi shared object (to query vendor extensions), or None."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "libmpi" in line and ".so" in line}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            return ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_GLOBAL)
        except OSError:
            continue
    return None


_cuda_aware: list[bool] = []


def cuda_aware() -> bool:
    """Whether MPI can read and write CUDA device memory directly.

    ``OMNITENSOR_DIST_CUDA_AWARE=0/1`` decides when set; else the MPI 4.1 info key
    ``mpi_memory_alloc_kinds`` (lists ``cuda``), else Open MPI's
    ``MPIX_Query_cuda_support()`` and MPICH's ``MPIX_GPU_query_support``. Unknown means
    no: tensors are then staged through the host, which is always correct."""
    if _cuda_aware:
        return _cuda_aware[0]
    env = os.environ.get("OMNITENSOR_DIST_CUDA_AWARE", "").strip().lower()
    if env:
        result = env not in ("0", "false", "no", "off")
    else:
        result = False
        try:
            kinds = MPI.INFO_ENV.Get("mpi_memory_alloc_kinds") or ""
        except (MPI.Exception, AttributeError):
            kinds = ""
        if "cuda" in kinds:
            result = True
        else:
            lib = _libmpi()
            query = getattr(lib, "MPIX_Query_cuda_support", None) if lib else None
            if query is not None:
                result = bool(query())
            elif lib is not None and hasattr(lib, "MPIX_GPU_query_support"):
                flag = ctypes.c_int(0)
                lib.MPIX_GPU_query_support(1, ctypes.byref(flag))  # 1: MPIX_GPU_SUPPORT_CUDA
                result = bool(flag.value)
    _cuda_aware.append(result)
    return result


#: numpy dtype -> MPI datatype of the dtypes MPI reduces as they are
_DIRECT = {np.dtype(k): v for k, v in _REDUCE_TYPES.items() if k != "bool"}
_F16, _BOOL = np.dtype("float16"), np.dtype("bool")


def _reducible(arr: Any) -> tuple[Any, Any, bool]:
    """(array MPI reduces, its MPI datatype, whether it is a float32 copy of a
    float16/bfloat16 array: MPI has no half types)."""
    dt = arr.dtype
    typ = _DIRECT.get(dt)
    if typ is not None:
        return arr, typ, False
    if dt == _F16 or dt.name == "bfloat16":  # ml_dtypes' bfloat16
        return arr.astype(np.float32), MPI.FLOAT, True
    if dt == _BOOL:
        return arr.view(np.uint8), MPI.UINT8_T, False
    raise DistributedError(f"the MPI transport cannot reduce {dt} tensors")


class MPIBackend(CommBackend):
    """Collectives over the group's MPI communicator (see the module docstring)."""

    name = "mpi"

    def __init__(self, group: ProcessGroup) -> None:
        super().__init__(group)
        self.comm = group.comm
        self.size = group.size()
        self.rank = group.rank()

    # ------------------------------------------------------------------ buffers
    def _direct(self, t: Any) -> bool:
        return t._device.type == "cuda" and cuda_aware()

    def _in(self, t: Any) -> Any:
        """A buffer MPI reads."""
        if self._direct(t):
            return self._device_buffer(t)[0]
        return staging.read_buffer(t)

    def _out(self, t: Any, need_values: bool) -> tuple[Any, Callable[[], None]]:
        """A buffer MPI writes, and the step that makes t hold it afterwards."""
        if self._direct(t):
            arr, wb = self._device_buffer(t)
        else:
            arr, wb = staging.write_buffer(t, need_values)
        return arr, (wb if wb is not None else (lambda: staging.bump(t)))

    @staticmethod
    def _device_buffer(t: Any) -> tuple[Any, Callable[[], None] | None]:
        dev = t._device
        be = dev.backend
        if be.asynchronous:  # the kernels producing t must finish before MPI reads
            be.synchronize(dev.index)
        data = t._data
        if data.flags.c_contiguous:
            return data, None
        copy = be.contiguous(data)

        def write_back() -> None:
            be.assign(t._data, copy)
            staging.bump(t)
        return copy, write_back

    def _error(self, what: str, e: Any) -> DistributedError:
        try:
            text = e.Get_error_string()
        except Exception:  # noqa: BLE001
            text = str(e)
        g = self.group
        return DistributedError(f"{what} failed on rank {g.rank()} of {g.describe()}: MPI "
                                f"error: {text} (do all ranks pass tensors of the same shape "
                                f"and dtype?)")

    def _start(self, what: str, start: Callable[[], Any], finish: Callable[[], Any] | None,
               outputs: Sequence[Any] = (), status: Any = None,
               cancellable: bool = False, keep: Any = None) -> MPIWork:
        try:
            req = start()
        except MPI.Exception as e:
            raise self._error(what, e) from None
        return MPIWork(self, what, [req], finish, outputs, status, cancellable, keep)

    # -------------------------------------------------------------- reductions
    def allreduce(self, t: Any, op: ReduceOp) -> Work:
        if t._device.backend.host_arrays and op is not ReduceOp.AVG:
            # hot path (DDP buckets, benchmarks): MPI reduces the tensor's own memory
            arr = t._data
            typ = _DIRECT.get(arr.dtype)
            flags = arr.flags
            if typ is not None and flags.c_contiguous and flags.writeable:
                try:
                    req = self.comm.Iallreduce(MPI.IN_PLACE, [arr, typ], _OPS[op])
                except MPI.Exception as e:
                    raise self._error("all_reduce", e) from None
                return MPIWork(self, "all_reduce", (req,), t._bump_version, (t,), None, False,
                               arr)
        buf, done = self._out(t, True)
        work, typ, upcast = _reducible(buf)
        finish = _finish_reduction(op, self.size, buf, work, upcast, done)
        return self._start("all_reduce", lambda: self.comm.Iallreduce(
            MPI.IN_PLACE, [work, typ], _OPS[op]), finish, (t,), keep=(buf, work))

    def reduce(self, t: Any, root: int, op: ReduceOp) -> Work:
        is_root = self.rank == root
        buf, done = self._out(t, True) if is_root else (self._in(t), None)
        work, typ, upcast = _reducible(buf)
        finish = _finish_reduction(op, self.size, buf, work, upcast, done) if is_root \
            else _nothing
        send = MPI.IN_PLACE if is_root else [work, typ]
        recv = [work, typ] if is_root else None
        return self._start("reduce", lambda: self.comm.Ireduce(send, recv, _OPS[op], root),
                           finish, (t,), keep=(buf, work))

    def reduce_scatter(self, out: Any, in_flat: Any, op: ReduceOp) -> Work:
        src, typ, _ = _reducible(self._in(in_flat))
        buf, done = self._out(out, False)
        work, _typ, upcast = _reducible(buf)
        finish = _finish_reduction(op, self.size, buf, work, upcast, done)
        return self._start("reduce_scatter", lambda: self.comm.Ireduce_scatter_block(
            [src, typ], [work, typ], _OPS[op]), finish, (out,), keep=(src, buf, work))

    # ----------------------------------------------------------- data movement
    def broadcast(self, t: Any, root: int) -> Work:
        is_root = self.rank == root
        buf, done = self._out(t, is_root)
        return self._start("broadcast", lambda: self.comm.Ibcast([buf, MPI.BYTE], root),
                           None if is_root else done, (t,), keep=buf)

    def allgather(self, out_flat: Any, t: Any) -> Work:
        src = self._in(t)
        buf, done = self._out(out_flat, False)
        return self._start("all_gather", lambda: self.comm.Iallgather(
            [src, MPI.BYTE], [buf, MPI.BYTE]), done, (out_flat,), keep=(src, buf))

    def gather(self, out_flat: Any | None, t: Any, root: int) -> Work:
        src = self._in(t)
        if self.rank == root:
            buf, done = self._out(out_flat, False)
            recv: Any = [buf, MPI.BYTE]
        else:
            recv, done = None, None
        return self._start("gather", lambda: self.comm.Igather([src, MPI.BYTE], recv, root),
                           done, () if out_flat is None else (out_flat,), keep=(src, recv))

    def scatter(self, out: Any, in_flat: Any | None, root: int) -> Work:
        send = [self._in(in_flat), MPI.BYTE] if self.rank == root else None
        buf, done = self._out(out, False)
        return self._start("scatter", lambda: self.comm.Iscatter(send, [buf, MPI.BYTE], root),
                           done, (out,), keep=(send, buf))

    def alltoall(self, out_flat: Any, in_flat: Any, send_counts: list[int],
                 recv_counts: list[int]) -> Work:
        item = in_flat.dtype.itemsize
        src = self._in(in_flat)
        buf, done = self._out(out_flat, False)
        sc = [c * item for c in send_counts]
        rc = [c * item for c in recv_counts]
        sd = [int(x) for x in np.concatenate(([0], np.cumsum(sc)[:-1]))]
        rd = [int(x) for x in np.concatenate(([0], np.cumsum(rc)[:-1]))]
        return self._start("all_to_all", lambda: self.comm.Ialltoallv(
            [src, (sc, sd), MPI.BYTE], [buf, (rc, rd), MPI.BYTE]), done, (out_flat,),
            keep=(src, buf))

    def send(self, t: Any, peer: int, tag: int) -> Work:
        src = self._in(t)
        return self._start("send", lambda: self.comm.Isend([src, MPI.BYTE], peer, tag),
                           None, (t,), cancellable=True, keep=src)

    def recv(self, t: Any, peer: int | None, tag: int) -> Work:
        buf, done = self._out(t, False)
        status = MPI.Status()
        source = MPI.ANY_SOURCE if peer is None else peer
        expected = buf.nbytes

        def finish() -> int:
            got = status.Get_count(MPI.BYTE)
            if got != expected:
                raise DistributedError(f"recv: expected {expected} bytes from rank "
                                       f"{status.Get_source()}, got {got} (the sender's "
                                       f"tensor has another shape or dtype)")
            done()
            return status.Get_source()
        return self._start("recv", lambda: self.comm.Irecv(
            [buf, MPI.BYTE], source, MPI.ANY_TAG if tag is None else tag), finish, (t,),
            status, cancellable=True, keep=buf)

    def barrier(self) -> Work:
        return self._start("barrier", self.comm.Ibarrier, None)


# ------------------------------------------------- small host exchanges (metadata, objects)
def _deadline_wait(group: ProcessGroup, what: str, reqs: Sequence[Any]) -> None:
    limit = group.timeout
    wait_requests(reqs, _monotonic() + limit, lambda: (
        f"{what} timed out after {limit:g} s on rank {group.rank()} of {group.describe()}: "
        f"a peer did not join it"))


def allgather_bytes(group: ProcessGroup, data: bytes, what: str) -> list[bytes]:
    """Every rank's ``data`` (lengths may differ), with the group's deadline."""
    comm = group.comm
    n = group.size()
    sizes = np.zeros(n, np.int64)
    _deadline_wait(group, what, [comm.Iallgather(
        [np.array([len(data)], np.int64), MPI.INT64_T], [sizes, MPI.INT64_T])])
    counts = [int(s) for s in sizes]
    displs = [int(x) for x in np.concatenate(([0], np.cumsum(counts)[:-1]))]
    out = np.empty(max(sum(counts), 1), np.uint8)
    send = np.frombuffer(data, np.uint8) if data else np.empty(0, np.uint8)
    _deadline_wait(group, what, [comm.Iallgatherv([send, MPI.BYTE],
                                                  [out, (counts, displs), MPI.BYTE])])
    return [out[d:d + c].tobytes() for c, d in zip(counts, displs)]


def bcast_bytes(group: ProcessGroup, data: bytes | None, root: int, what: str) -> bytes:
    """``data`` of group rank ``root`` on every rank, with the group's deadline."""
    comm = group.comm
    size = np.array([len(data) if data is not None else 0], np.int64)
    _deadline_wait(group, what, [comm.Ibcast([size, MPI.INT64_T], root)])
    buf = (np.frombuffer(data, np.uint8).copy() if group.rank() == root and data is not None
           else np.empty(int(size[0]), np.uint8))
    _deadline_wait(group, what, [comm.Ibcast([buf, MPI.BYTE], root)])
    return buf.tobytes()


#: the MPI tag of object messages (send_object_list): above the tags programs use
OBJECT_TAG = 32001


def send_bytes(group: ProcessGroup, data: bytes, peer: int, what: str) -> None:
    """Send ``data`` to group rank ``peer`` (its length, then the bytes)."""
    comm = group.comm
    size = np.array([len(data)], np.int64)
    buf = np.frombuffer(data, np.uint8) if data else np.empty(0, np.uint8)
    _deadline_wait(group, what, [comm.Isend([size, MPI.INT64_T], peer, OBJECT_TAG),
                                 comm.Isend([buf, MPI.BYTE], peer, OBJECT_TAG)])


def recv_bytes(group: ProcessGroup, peer: int | None, what: str) -> tuple[bytes, int]:
    """Bytes sent by :func:`send_bytes` from group rank ``peer`` (any when None), and the
    sender's group rank."""
    comm = group.comm
    size = np.empty(1, np.int64)
    status = MPI.Status()
    source = MPI.ANY_SOURCE if peer is None else peer
    limit = group.timeout
    wait_requests([comm.Irecv([size, MPI.INT64_T], source, OBJECT_TAG)],
                  _monotonic() + limit, lambda: f"{what} timed out after {limit:g} s on rank "
                  f"{group.rank()} of {group.describe()}: no peer sent", status)
    sender = status.Get_source()  # the bytes come from whoever sent the length
    buf = np.empty(int(size[0]), np.uint8)
    _deadline_wait(group, what, [comm.Irecv([buf, MPI.BYTE], sender, OBJECT_TAG)])
    return buf.tobytes(), sender


def check_signature(group: ProcessGroup, what: str, signature: str) -> None:
    """Raise CollectiveMismatchError on every rank unless all ranks pass the same
    ``signature`` (op, shapes, dtypes, root). Cost: one 16-byte all-reduce; only on a
    mismatch, an all-gather of the signatures to name who differs."""
    from .types import CollectiveMismatchError
    import zlib
    h = zlib.crc32(signature.encode()) | (len(signature) << 32)
    pair = np.array([h, -h], np.int64)
    _deadline_wait(group, what, [group.comm.Iallreduce(MPI.IN_PLACE, [pair, MPI.INT64_T],
                                                       MPI.MAX)])
    if pair[0] == -pair[1]:
        return
    sigs = allgather_bytes(group, signature.encode(), what)
    lines = "\n".join(f"  rank {group.global_rank(i)}: {s.decode()}"
                      for i, s in enumerate(sigs))
    raise CollectiveMismatchError(f"{what}: ranks of {group.describe()} disagree on the "
                                  f"collective's arguments:\n{lines}")


def _nothing() -> None:
    """The completion step of a reduction on a rank that receives no result."""


def _finish_reduction(op: Any, size: int, buf: Any, work: Any, upcast: bool,
                      done: Any) -> Any:
    """The completion step of a reduction into ``work``: AVG divides by the world size, a
    float32 work copy of a float16/bfloat16 buffer is copied back into ``buf``,
    then ``done`` hands the result to the tensor."""
    def finish() -> None:
        if op is ReduceOp.AVG:
            work.__itruediv__(size)
        if upcast:
            buf[...] = work
        done()
    return finish
