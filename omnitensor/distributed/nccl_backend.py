"""The NCCL transport for ``cuda`` tensors, through ``cupy.cuda.nccl``.

Bootstrap (ChainerMN's): rank 0 of the group creates NCCL's unique id, MPI broadcasts it,
every rank creates its ``NcclCommunicator`` on the device of the first cuda tensor it
reduces (one communicator per group and device, created lazily in the first collective,
which every member reaches together).

Streams (as torch's ProcessGroupNCCL): each communicator has its own stream. An op first
makes that stream wait for the current stream (the kernels producing the inputs), runs
there, and records a completion event; ``Work.wait()`` polls the event on the host with
the group's deadline (on timeout it aborts the communicator, so NCCL kernels stop, and
raises DistributedTimeoutError), then makes the current stream wait for the event, so
later kernels see the result.

Dtypes: NCCL's own types for int8/uint8/int32/uint32/int64/uint64/float16/float32/
float64; bool as uint8 (the caller maps SUM/PRODUCT to MAX/MIN); int16/uint16 reduce in
int32/uint32; complex SUM/AVG reduce as pairs of reals (complex PRODUCT raises: not
elementwise on the pairs). bfloat16 has no plan of its own: the cuda backend holds it
widened to float32 (CuPy has none), so it reduces as float32 and the result is not yet
rounded back to bfloat16's grid (a known gap).
AVG is ncclAvg where NCCL has it (>= 2.10), else SUM and a division. Data movement
(broadcast, gathers, all-to-all, send/recv) moves bytes, so every dtype works.
gather/scatter/all-to-all are grouped send/recv (NCCL >= 2.7); recv needs an explicit
source (NCCL has no wildcard) and ignores tags (NCCL has none).
"""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from .group import ProcessGroup
from .registry import CommBackend
from .types import DistributedError, DistributedTimeoutError, ReduceOp, Work

__all__ = ["NCCLBackend", "nccl_plan", "NCCL_DTYPES", "NCCL_OPS"]

#: numpy dtype name -> (NCCL datatype constant name, dtype the buffer is reduced in)
NCCL_DTYPES: dict[str, tuple[str, str]] = {
    "int8": ("NCCL_INT8", "int8"), "uint8": ("NCCL_UINT8", "uint8"),
    "bool": ("NCCL_UINT8", "uint8"),
    "int16": ("NCCL_INT32", "int32"), "uint16": ("NCCL_UINT32", "uint32"),
    "int32": ("NCCL_INT32", "int32"), "uint32": ("NCCL_UINT32", "uint32"),
    "int64": ("NCCL_INT64", "int64"), "uint64": ("NCCL_UINT64", "uint64"),
    "float16": ("NCCL_FLOAT16", "float16"), "float32": ("NCCL_FLOAT32", "float32"),
    "float64": ("NCCL_FLOAT64", "float64"),
    "complex64": ("NCCL_FLOAT32", "float32"), "complex128": ("NCCL_FLOAT64", "float64"),
}
#: ReduceOp -> NCCL op constant name
NCCL_OPS = {ReduceOp.SUM: "NCCL_SUM", ReduceOp.PRODUCT: "NCCL_PROD",
            ReduceOp.MIN: "NCCL_MIN", ReduceOp.MAX: "NCCL_MAX", ReduceOp.AVG: "NCCL_AVG"}


def nccl_plan(dtype_name: str, op: ReduceOp, has_avg: bool = True) -> tuple[str, str, str,
                                                                          bool, bool]:
    """How NCCL reduces a ``dtype_name`` tensor with ``op``: (NCCL datatype name, NCCL
    op name, dtype of the reduced buffer, whether the buffer is a cast copy, whether to
    divide by the group size afterwards). Pure: testable without a GPU."""
    if dtype_name not in NCCL_DTYPES:
        raise DistributedError(f"NCCL cannot reduce {dtype_name} tensors")
    nccl_type, work = NCCL_DTYPES[dtype_name]
    if dtype_name.startswith("complex") and op not in (ReduceOp.SUM, ReduceOp.AVG):
        raise DistributedError(f"NCCL cannot reduce complex tensors with {op!r} (only SUM "
                               f"and AVG work on the real/imaginary pairs)")
    cast = dtype_name in ("int16", "uint16")
    divide = op is ReduceOp.AVG and not has_avg
    op_name = "NCCL_SUM" if divide else NCCL_OPS[op]
    return nccl_type, op_name, work, cast, divide


def _cupy() -> tuple[Any, Any]:
    try:
        import cupy
        from cupy.cuda import nccl
    except ImportError as e:
        raise DistributedError(
            f"the nccl backend needs CuPy built with NCCL ({e}); install it with pip "
            f"install 'omnitensor[cuda]' (cupy-cuda12x), or use backend='mpi'") from None
    if not getattr(nccl, "available", True):
        raise DistributedError("CuPy is installed but its NCCL support is not available "
                               "(install NCCL: pip install nvidia-nccl-cu12); or use "
                               "backend='mpi'")
    return cupy, nccl


class NCCLWork(Work):
    """A pending NCCL op: a CUDA event on the communicator's stream, with a deadline."""

    def __init__(self, backend: "NCCLBackend", what: str, comm: "_Comm", event: Any,
                 finish: Callable[[], Any] | None, outputs: Any, keep: Any) -> None:
        super().__init__(outputs, finish)
        self._backend, self._what, self._comm, self._event = backend, what, comm, event
        self._keep = keep  # buffers NCCL uses on its stream stay alive until done
        self._started = time.monotonic()
        self._joined = False

    def _join(self) -> None:
        if not self._joined:
            self._joined = True
            cupy = self._backend.cupy
            with cupy.cuda.Device(self._comm.device):
                cupy.cuda.get_current_stream().wait_event(self._event)
            self._keep = None

    def _test(self) -> bool:
        if self._event.done:
            self._join()
            return True
        self._comm.check()
        return False

    def _block(self, timeout: float | None) -> None:
        g = self._backend.group
        limit = g.timeout if timeout is None else float(timeout)
        deadline = self._started + limit if timeout is None else time.monotonic() + limit
        spins = 0
        while not self._event.done:
            spins += 1
            if spins > 256:
                self._comm.check()
                if time.monotonic() > deadline:
                    self._comm.abort()
                    self._exc = DistributedTimeoutError(
                        f"{self._what} (nccl) timed out after {limit:g} s on rank {g.rank()} "
                        f"of {g.describe()}: a peer did not join it. The NCCL communicator "
                        f"was aborted; let the error end the job.")
                    raise self._exc
                time.sleep(0 if spins < 10000 else 1e-4)
        self._join()


class _Comm:
    """One NCCL communicator of a group on one device, with its stream."""

    def __init__(self, backend: "NCCLBackend", device: int) -> None:
        from .mpi_backend import bcast_bytes
        cupy, nccl = backend.cupy, backend.nccl
        g = backend.group
        self.nccl, self.device = nccl, device
        uid = np.zeros(0, np.int64)
        if g.rank() == 0:
            uid = np.asarray(nccl.get_unique_id(), np.int64)
        data = bcast_bytes(g, uid.tobytes() if g.rank() == 0 else None, 0,
                           "nccl unique id broadcast")
        unique_id = tuple(int(x) for x in np.frombuffer(data, np.int64))
        with cupy.cuda.Device(device):
            self.comm = nccl.NcclCommunicator(g.size(), unique_id, g.rank())
            self.stream = cupy.cuda.Stream(non_blocking=True)
        self.aborted = False

    def check(self) -> None:
        if self.aborted:
            return
        try:
            self.comm.check_async_error()
        except Exception as e:  # noqa: BLE001 - NcclError: report it as ours
            raise DistributedError(f"NCCL reported an asynchronous error: {e}") from None

    def abort(self) -> None:
        if not self.aborted:
            self.aborted = True
            try:
                self.comm.abort()
            except Exception:  # noqa: BLE001
                pass

    def destroy(self) -> None:
        if not self.aborted:
            try:
                self.comm.destroy()
            except Exception:  # noqa: BLE001
                pass
            self.aborted = True


class NCCLBackend(CommBackend):
    """Collectives on ``cuda`` tensors with NCCL (see the module docstring)."""

    name = "nccl"

    def __init__(self, group: ProcessGroup) -> None:
        super().__init__(group)
        self.cupy, self.nccl = _cupy()
        # ncclAvg needs NCCL >= 2.10 at run time, not only CuPy's constant
        try:
            runtime = int(self.nccl.get_version())
        except Exception:  # noqa: BLE001
            runtime = 0
        self.has_avg = hasattr(self.nccl, "NCCL_AVG") and runtime >= 21000
        self._comms: dict[int, _Comm] = {}

    def supports_device(self, device_type: str) -> bool:
        return device_type == "cuda"

    # -------------------------------------------------------------------- helpers
    def _comm(self, t: Any) -> _Comm:
        idx = t._device.index
        c = self._comms.get(idx)
        if c is None:
            c = self._comms[idx] = _Comm(self, idx)
        return c

    def _launch(self, what: str, t: Any, body: Callable[[Any, int], None],
                finish: Callable[[], Any] | None, outputs: Any, keep: Any) -> NCCLWork:
        """Run ``body(comm, stream_ptr)`` on the communicator's stream after the current
        stream's pending work; return the work handle."""
        cupy = self.cupy
        c = self._comm(t)
        with cupy.cuda.Device(c.device):
            ready = cupy.cuda.Event(disable_timing=True)
            ready.record(cupy.cuda.get_current_stream())
            c.stream.wait_event(ready)
            try:
                body(c.comm, c.stream.ptr)
            except Exception as e:  # noqa: BLE001 - NcclError with NCCL's text
                raise DistributedError(f"{what} (nccl) failed on rank {self.group.rank()}: "
                                       f"{e}") from None
            done = cupy.cuda.Event(disable_timing=True)
            done.record(c.stream)
        return NCCLWork(self, what, c, done, finish, outputs, keep)

    def _contig(self, t: Any) -> tuple[Any, Callable[[], None] | None]:
        """t's CuPy array if C-contiguous, else a contiguous copy and its write-back."""
        data = t._data
        if data.flags.c_contiguous:
            return data, None
        copy = self.cupy.ascontiguousarray(data)
        return copy, (lambda: t._device.backend.assign(t._data, copy))

    def _bytes(self, arr: Any) -> Any:
        return arr.reshape(-1).view(self.cupy.uint8)

    def _dtype(self, name: str) -> int:
        return getattr(self.nccl, name)

    def _reduce_buffers(self, t: Any, op: ReduceOp) -> tuple[Any, int, int, Callable]:
        """(buffer NCCL reduces, NCCL dtype, NCCL op, post step) for tensor t."""
        arr, wb = self._contig(t)
        ntype, nop, work_dtype, cast, divide = nccl_plan(arr.dtype.name, op, self.has_avg)
        if cast:
            buf = arr.astype(work_dtype)
        elif arr.dtype.kind in "cb":
            buf = arr.reshape(-1).view(work_dtype)
        else:
            buf = arr
        size = self.group.size()

        def post() -> None:
            if divide:
                buf.__itruediv__(size)
            if cast:
                arr[...] = buf
            if wb is not None:
                wb()
            t._bump_version()
        return buf, self._dtype(ntype), self._dtype(nop), post

    # ------------------------------------------------------------------ reductions
    def allreduce(self, t: Any, op: ReduceOp) -> Work:
        buf, ntype, nop, post = self._reduce_buffers(t, op)
        return self._launch("all_reduce", t, lambda c, s: c.allReduce(
            buf.data.ptr, buf.data.ptr, buf.size, ntype, nop, s), post, (t,), buf)

    def reduce(self, t: Any, root: int, op: ReduceOp) -> Work:
        buf, ntype, nop, post = self._reduce_buffers(t, op)
        is_root = self.group.rank() == root
        return self._launch("reduce", t, lambda c, s: c.reduce(
            buf.data.ptr, buf.data.ptr, buf.size, ntype, nop, root, s),
            post if is_root else None, (t,), buf)

    def reduce_scatter(self, out: Any, in_flat: Any, op: ReduceOp) -> Work:
        src, ntype, nop, _ = self._reduce_buffers(in_flat, op)
        dst, _t, _o, post = self._reduce_buffers(out, op)
        return self._launch("reduce_scatter", out, lambda c, s: c.reduceScatter(
            src.data.ptr, dst.data.ptr, dst.size, ntype, nop, s), post, (out,), (src, dst))

    # -------------------------------------------------------------- data movement
    def _movement(self, t: Any) -> tuple[Any, Callable[[], None]]:
        arr, wb = self._contig(t)

        def post() -> None:
            if wb is not None:
                wb()
            t._bump_version()
        return self._bytes(arr), post

    def broadcast(self, t: Any, root: int) -> Work:
        buf, post = self._movement(t)
        u8 = self._dtype("NCCL_UINT8")
        return self._launch("broadcast", t, lambda c, s: c.bcast(
            buf.data.ptr, buf.size, u8, root, s), post, (t,), buf)

    def allgather(self, out_flat: Any, t: Any) -> Work:
        src, _ = self._movement(t)
        dst, post = self._movement(out_flat)
        u8 = self._dtype("NCCL_UINT8")
        return self._launch("all_gather", t, lambda c, s: c.allGather(
            src.data.ptr, dst.data.ptr, src.size, u8, s), post, (out_flat,), (src, dst))

    def _grouped(self, what: str, t: Any, pairs: list, post: Callable | None,
                 outputs: Any) -> Work:
        """Grouped send/recv: ``pairs`` of ("send"|"recv", peer, byte buffer)."""
        nccl, u8 = self.nccl, self._dtype("NCCL_UINT8")

        def body(c: Any, s: int) -> None:
            nccl.groupStart()
            try:
                for kind, peer, buf in pairs:
                    if buf.size == 0:
                        continue
                    if kind == "send":
                        c.send(buf.data.ptr, buf.size, u8, peer, s)
                    else:
                        c.recv(buf.data.ptr, buf.size, u8, peer, s)
            finally:
                nccl.groupEnd()
        return self._launch(what, t, body, post, outputs, [p[2] for p in pairs])

    def gather(self, out_flat: Any | None, t: Any, root: int) -> Work:
        src, _ = self._movement(t)
        me, n = self.group.rank(), self.group.size()
        if me != root:
            return self._grouped("gather", t, [("send", root, src)], None, ())
        dst, post = self._movement(out_flat)
        k = src.size
        pairs = [("recv", r, dst[r * k:(r + 1) * k]) for r in range(n) if r != me]
        dst[me * k:(me + 1) * k] = src
        return self._grouped("gather", t, pairs, post, (out_flat,))

    def scatter(self, out: Any, in_flat: Any | None, root: int) -> Work:
        dst, post = self._movement(out)
        me, n = self.group.rank(), self.group.size()
        if me != root:
            return self._grouped("scatter", out, [("recv", root, dst)], post, (out,))
        src, _ = self._movement(in_flat)
        k = dst.size
        pairs = [("send", r, src[r * k:(r + 1) * k]) for r in range(n) if r != me]
        dst[...] = src[me * k:(me + 1) * k]
        return self._grouped("scatter", out, pairs, post, (out,))

    def alltoall(self, out_flat: Any, in_flat: Any, send_counts: list[int],
                 recv_counts: list[int]) -> Work:
        src, _ = self._movement(in_flat)
        dst, post = self._movement(out_flat)
        item = in_flat.dtype.itemsize
        so = np.concatenate(([0], np.cumsum(send_counts))) * item
        ro = np.concatenate(([0], np.cumsum(recv_counts))) * item
        me = self.group.rank()
        pairs = []
        for r in range(self.group.size()):
            if r == me:
                dst[int(ro[r]):int(ro[r + 1])] = src[int(so[r]):int(so[r + 1])]
                continue
            pairs.append(("send", r, src[int(so[r]):int(so[r + 1])]))
            pairs.append(("recv", r, dst[int(ro[r]):int(ro[r + 1])]))
        return self._grouped("all_to_all", in_flat, pairs, post, (out_flat,))

    def send(self, t: Any, peer: int, tag: int) -> Work:
        src, _ = self._movement(t)
        return self._grouped("send", t, [("send", peer, src)], None, (t,))

    def recv(self, t: Any, peer: int | None, tag: int) -> Work:
        if peer is None:
            raise DistributedError("recv from any source is not possible with NCCL; pass "
                                   "src=")
        dst, post = self._movement(t)

        def finish() -> int:
            post()
            return peer
        return self._grouped("recv", t, [("recv", peer, dst)], finish, (t,))

    def barrier(self) -> Work:
        from .mpi_backend import MPIBackend
        return MPIBackend(self.group).barrier()

    def shutdown(self) -> None:
        for c in self._comms.values():
            c.destroy()
        self._comms.clear()
