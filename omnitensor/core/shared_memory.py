"""Shared host memory for cpu tensors: torch's ``Tensor.share_memory_()`` / ``is_shared()``.

A cpu tensor's storage is a NumPy array. :func:`share_memory_` moves it into a block of
memory other processes can map: the tensor object keeps its identity (optimizers and
modules holding it see the move), only its array is replaced by one of the same shape,
dtype and values over the shared block. Every view taken afterwards is a view of that block.

Two sharing strategies, torch's names (``omnitensor.multiprocessing.set_sharing_strategy``):

* ``"file_descriptor"`` (the default where ``os.memfd_create`` exists, i.e. Linux): an
  anonymous memory file; another process receives a duplicate of its descriptor (through
  multiprocessing's fd passing) and maps it. Nothing has a name, so nothing can leak: the
  memory is freed when the last process holding it lets go. Each shared block keeps one
  descriptor open (torch's same trade-off; raise ``ulimit -n`` for very many tensors).
* ``"file_system"``: a named POSIX shared-memory segment (``multiprocessing.shared_memory``);
  another process opens it by name. A count in the segment of the mappings and of the
  messages in flight decides when it is unlinked (``core/named_segments.py``), so a tensor
  sent and freed by its sender still arrives; segments of crashed processes are reclaimed
  by multiprocessing's resource tracker when the process tree ends.

Device tensors (opencl, sycl, cuda) have no host block to share: see
:func:`share_memory_` for what happens to them.
"""
from __future__ import annotations

import atexit
import mmap
import os
import threading
import weakref
from typing import Any

import numpy as np

from . import named_segments

__all__ = ["STRATEGIES", "get_sharing_strategy", "set_sharing_strategy", "share_memory_",
           "is_shared", "Segment", "segment_of", "attach_fd", "attach_name", "add_message_ref", "array_over"]

STRATEGIES = ("file_descriptor", "file_system") if hasattr(os, "memfd_create") \
    else ("file_system",)
_strategy = STRATEGIES[0]
_lock = threading.Lock()


def get_sharing_strategy() -> str:
    """The strategy new shared blocks use (``"file_descriptor"`` or ``"file_system"``)."""
    return _strategy


def set_sharing_strategy(new_strategy: str) -> None:
    """Pick how blocks shared from now on are made (tensors already shared keep theirs)."""
    global _strategy
    if new_strategy not in STRATEGIES:
        raise ValueError(f"set_sharing_strategy({new_strategy!r}): unknown strategy; this "
                         f"system supports {', '.join(map(repr, STRATEGIES))}")
    _strategy = new_strategy


class Segment:
    """One shared block: its mapping and the handle another process attaches with (a file
    descriptor, or a segment name). ``flat`` (weakly held) is the uint8 array over the
    whole block that every tensor array over it is a view of."""

    __slots__ = ("strategy", "fd", "name", "size", "_keep", "flat", "__weakref__")

    def __init__(self, strategy: str, size: int, fd: int = -1, name: str = "",
                 keep: Any = None) -> None:
        self.strategy = strategy
        self.size = size
        self.fd = fd
        self.name = name
        self._keep = keep  # the mmap or SharedMemory object
        self.flat: Any = None


#: id(flat array) -> its Segment; entries leave when the flat array is freed
_segments: dict[int, Segment] = {}


def _register(seg: Segment, buf: Any, offset: int = 0) -> np.ndarray:
    flat = np.frombuffer(buf, dtype=np.uint8, count=seg.size, offset=offset)
    seg.flat = weakref.ref(flat)
    key = id(flat)
    with _lock:
        _segments[key] = seg
    # when the last array over the block is gone: close the descriptor, or drop this
    # mapping's reference to the named segment (the last one unlinks it)
    weakref.finalize(flat, _release, key, seg)
    return flat


def _release(key: int, seg: Segment) -> None:
    with _lock:
        _segments.pop(key, None)
    if seg.fd >= 0:
        try:
            os.close(seg.fd)
        except OSError:
            pass
        seg.fd = -1
    shm = seg._keep if seg.strategy == "file_system" else None
    seg._keep = None
    if shm is not None:
        named_segments.drop_ref(shm)
        # the dying array still exports the segment's buffer while finalizers run, so
        # SharedMemory.close() must wait: it is retried on the next share and at exit
        with _lock:
            _closing.append(shm)


#: SharedMemory objects whose arrays are gone, to close once their buffer is released
_closing: list[Any] = []


def _reap() -> None:
    with _lock:
        pending = list(_closing)
        _closing.clear()
    for shm in pending:
        try:
            shm.close()
        except BufferError:
            with _lock:
                _closing.append(shm)


atexit.register(_reap)


def _allocate(nbytes: int) -> np.ndarray:
    size = max(1, int(nbytes))  # mmap refuses 0 bytes; an empty tensor still shares
    if _strategy == "file_descriptor":
        fd = os.memfd_create("omnitensor-shared", getattr(os, "MFD_CLOEXEC", 0))
        try:
            os.ftruncate(fd, size)
            mm = mmap.mmap(fd, size)
        except OSError as e:
            os.close(fd)
            raise RuntimeError(f"share_memory_: could not allocate {size} bytes of shared "
                               f"memory: {e}") from None
        return _register(Segment("file_descriptor", size, fd=fd, keep=mm), mm)
    _reap()
    shm = named_segments.create(size)
    return _register(Segment("file_system", size, name=shm.name, keep=shm), shm.buf,
                     named_segments.HEADER)


def attach_fd(fd: int, size: int) -> np.ndarray:
    """Map a block received as a file descriptor (this process now owns ``fd``)."""
    try:
        mm = mmap.mmap(fd, size)
    except OSError as e:
        os.close(fd)
        raise RuntimeError(f"could not map a shared tensor's memory ({size} bytes): {e}") \
            from None
    return _register(Segment("file_descriptor", size, fd=fd, keep=mm), mm)


def attach_name(name: str, size: int) -> np.ndarray:
    """Map a named segment received in a message (taking over the message's reference);
    a segment this process maps already is reused and the message's reference dropped."""
    with _lock:
        segs = [s for s in _segments.values() if s.name == name]
    for seg in segs:
        flat = seg.flat() if seg.flat is not None else None
        if flat is not None and seg._keep is not None:
            named_segments.drop_ref(seg._keep)
            return flat
    _reap()
    shm = named_segments.open_existing(name)
    return _register(Segment("file_system", size, name=name, keep=shm), shm.buf,
                     named_segments.HEADER)


def add_message_ref(seg: Segment) -> None:
    """A message is about to name ``seg`` (``file_system``): count it, so the segment
    outlives its sender's tensor until the receiver maps it."""
    if seg.strategy == "file_system" and seg._keep is not None:
        named_segments.add_ref(seg._keep)


def segment_of(arr: Any) -> tuple[Segment, np.ndarray] | None:
    """The shared block ``arr`` (a NumPy array) is a view of, with its flat array; None
    when ``arr`` is ordinary memory."""
    a = arr
    while isinstance(a, np.ndarray):
        seg = _segments.get(id(a))
        if seg is not None and seg.flat is not None and seg.flat() is a:
            return seg, a
        a = a.base
    return None


def array_over(flat: np.ndarray, dtype: Any, shape: tuple, strides: tuple,
               offset: int) -> np.ndarray:
    """A view of ``flat`` with the given layout (byte ``offset`` and ``strides``)."""
    return np.ndarray(shape, dtype=dtype, buffer=flat, offset=offset, strides=strides)


def _is_host(t: Any) -> bool:
    return t._device.type == "cpu" and isinstance(t._data, np.ndarray)


def is_shared(t: Any) -> bool:
    """Whether ``t``'s storage is in shared memory (cpu tensors after ``share_memory_()``
    or after being sent to another process); False for device tensors, which cannot be
    mapped by another process here."""
    return _is_host(t) and segment_of(t._data) is not None


def share_memory_(t: Any) -> Any:
    """Move ``t``'s storage into shared memory (no-op if it already is); returns ``t``.

    The new storage covers exactly ``t``'s elements, so call it on the tensor that owns
    the storage (a parameter, a buffer), as torch users do: views taken *before* the move
    keep the old memory (torch moves the whole storage, views included). Device tensors:
    OpenCL and SYCL (and CUDA through omnitensor) give no inter-process handle to device
    memory, so there is nothing to share; a clear error says to keep the shared model on
    cpu (Hogwild training runs on cpu in torch too)."""
    if not _is_host(t):
        raise RuntimeError(
            f"share_memory_() on a {t._device} tensor: omnitensor shares host memory only "
            f"(its device backends give no inter-process memory handles); keep the tensors "
            f"that several processes update on cpu (model.cpu().share_memory()), or send "
            f"device tensors through a Queue, where they arrive as copies")
    if segment_of(t._data) is not None:
        return t
    src = t._data
    flat = _allocate(src.nbytes)
    dst = array_over(flat, src.dtype, src.shape, _c_strides(src), 0)
    np.copyto(dst, src)
    t._data = dst
    return t


def _c_strides(a: np.ndarray) -> tuple:
    strides = []
    step = a.dtype.itemsize
    for n in reversed(a.shape):
        strides.append(step)
        step *= max(1, n)
    return tuple(reversed(strides))
