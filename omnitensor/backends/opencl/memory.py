"""Host <-> device transfers and array creation (empty, full, arange).

Uploads are asynchronous: a small host array is snapshotted (so the caller may modify it
right away) and copied with a non-blocking write whose pyopencl ``NannyEvent`` keeps the
snapshot alive until the copy ran; large arrays use a blocking write instead of doubling host
memory. ``to_numpy`` is the synchronisation point: it waits for the array's pending work.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...kernels.random import arange_source
from . import program_cache
from .array import CLArray, new
from .cltypes import BY_NP, pack_i64
from .elementwise import copy, fill
from .launch import run1d, set_bytes, set_mem

_ASYNC_UPLOAD_MAX = 1 << 20  # bytes


def from_numpy(st: Any, array: np.ndarray) -> CLArray:
    a = np.asarray(array)
    if not a.dtype.isnative:  # kernels compute in the device's (little-endian) order
        a = a.astype(a.dtype.newbyteorder("="))
    st.check_dtype(a.dtype)
    x = new(st, a.shape, a.dtype)
    if a.size == 0:
        return x
    try:
        if a.nbytes <= _ASYNC_UPLOAD_MAX:
            host = np.array(a, order="C", copy=True)
            st.hold_upload(st.write(x.data, host, 0, False))
        else:
            st.write(x.data, np.ascontiguousarray(a))
    except st.Error as e:
        raise _transfer_error(st, "host -> device", a.nbytes, e) from None
    return x


def _transfer_error(st: Any, what: str, nbytes: int, err: Exception) -> Exception:
    from ...errors import BackendError
    return BackendError(f"{st.name} ({st.label}): {what} copy of {nbytes} bytes failed: "
                        f"{err}")


def write_into(x: CLArray, host: np.ndarray) -> None:
    """Copy the host array ``host`` (x's shape and dtype) into the contiguous array x,
    blocking (so the caller may reuse ``host`` when this returns); in queue order after
    the work already enqueued on x."""
    if x.size == 0:
        return
    src = np.ascontiguousarray(host, dtype=x.dtype)
    try:
        x.state.write(x.data, src, x.offset * x.dtype.itemsize)
    except x.state.Error as e:
        raise _transfer_error(x.state, "host -> device", src.nbytes, e) from None


def copy_to_device(x: CLArray, dst: Any) -> CLArray:
    """A C-contiguous copy of x in a new buffer of device ``dst`` (a DeviceState sharing
    x's context): one device-side buffer copy (``clEnqueueCopyBuffer``) on dst's queue,
    ordered after x's pending work."""
    if not x.contig:
        x = copy(x)
    y = new(dst, x.shape, x.dtype)
    if x.size == 0:
        return y
    if dst.queue is not x.state.queue:
        x.state.synchronize()  # another queue: x's producers must have run
    try:
        dst.copy_buffer(y.data, x.data, x.nbytes, x.offset * x.dtype.itemsize, 0)
    except dst.Error as e:
        raise _transfer_error(dst, "device -> device", x.nbytes, e) from None
    return y


def to_numpy(x: CLArray) -> np.ndarray:
    """A host copy of x's values (waits for the work that produces them)."""
    if x.size == 0:
        return np.empty(x.shape, x.dtype)
    if not x.contig:
        x = copy(x)
    host = np.empty(x.shape, x.dtype)
    try:
        x.state.read(host, x.data, x.offset * x.dtype.itemsize)
    except x.state.Error as e:
        raise _transfer_error(x.state, "device -> host", host.nbytes, e) from None
    x.state.uploads_done()  # the in-order queue has run every earlier upload
    return host


def full(st: Any, shape: tuple[int, ...], value: Any, dtype: np.dtype) -> CLArray:
    st.check_dtype(dtype)
    x = new(st, shape, dtype)
    return fill(x, value)


# ------------------------------------------------------------------------- arange
def _arange_source(st: Any) -> str:
    return arange_source([t for t in BY_NP.values() if st.supports(t.np)])


def arange(st: Any, start: Any, step: Any, n: int, dtype: np.dtype) -> CLArray:
    st.check_dtype(dtype)
    t = BY_NP[dtype]
    out = new(st, (n,), dtype)
    if n == 0:
        return out
    k = program_cache.kernel(st, ("arange",), f"arange_{t.key}", lambda: _arange_source(st),
                             st.build_options)
    if t.kind in "ib":
        pk = pack_i64
        a, b = pk(int(start)), pk(int(step))
    elif t.kind == "u":
        a = int(start).to_bytes(8, "little", signed=int(start) < 0)
        b = int(step).to_bytes(8, "little", signed=int(step) < 0)
    else:
        a, b = t.pack(start), t.pack(step)
    set_mem(k, (0, out.data))
    set_bytes(k, (1, pack_i64(n), 2, a, 3, b))
    run1d(st, k, n)
    return out
