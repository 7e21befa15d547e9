"""Named shared-memory segments with a reference count shared by every process that maps
one (the ``file_system`` sharing strategy of ``core/shared_memory.py``).

A segment starts with a 64-byte header holding an int64 count: one per mapping in any
process, plus one per message in flight (a tensor pickled to another process and not yet
received). The sender adds the message's reference when it pickles; the receiver's new
mapping takes that reference over. Whoever drops the count to zero unlinks the segment, so
a tensor sent and then freed by its sender still reaches the receiver (torch's
``file_system`` strategy keeps such a count in its segments too). The count is changed under
an exclusive ``flock`` on the segment's descriptor.

The creator registers the segment with multiprocessing's resource tracker (which the
children of ``spawn``, ``forkserver`` and ``fork`` share), so segments of crashed processes
are unlinked when the whole process tree ends; a message never received is only reclaimed
then.
"""
from __future__ import annotations

import fcntl
import struct
import sys
from multiprocessing import shared_memory
from typing import Any

__all__ = ["HEADER", "create", "open_existing", "add_ref", "drop_ref"]

HEADER = 64  # keeps the data 64-byte aligned
_COUNT = struct.Struct("q")


def _fd(shm: Any) -> int:
    return shm._fd  # SharedMemory's descriptor on POSIX (no public accessor)


def _change(shm: Any, delta: int) -> int:
    fd = _fd(shm)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        (count,) = _COUNT.unpack_from(shm.buf, 0)
        count += delta
        _COUNT.pack_into(shm.buf, 0, count)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
    return count


def create(size: int) -> Any:
    """A new segment of ``size`` data bytes, counted once (this process's mapping)."""
    try:
        shm: Any = shared_memory.SharedMemory(create=True, size=HEADER + size)
    except OSError as e:
        raise RuntimeError(f"share_memory_: could not create a {size}-byte shared memory "
                           f"segment: {e} (is /dev/shm full?)") from None
    _COUNT.pack_into(shm.buf, 0, 1)
    return shm


def open_existing(name: str) -> Any:
    """Map segment ``name``; the reference of the message that named it becomes this
    mapping's."""
    try:
        if sys.version_info >= (3, 13):
            return shared_memory.SharedMemory(name=name, track=False)  # type: ignore[call-arg]
        # registers with the resource tracker the creator shares: a duplicate registration
        # is a no-op there, and the final unlink removes it
        return shared_memory.SharedMemory(name=name)
    except FileNotFoundError:
        raise RuntimeError(
            f"shared tensor segment {name!r} no longer exists: every process that held it "
            f"let go before this one received it (a message received twice, or a segment "
            f"reclaimed after its process tree ended)") from None


def add_ref(shm: Any) -> None:
    """One more reference: a message about to carry the segment's name."""
    _change(shm, 1)


def drop_ref(shm: Any) -> None:
    """Drop one reference; the last one unlinks the segment."""
    if _change(shm, -1) <= 0:
        try:
            shm.unlink()
        except OSError:  # unlinked already
            pass
