"""Reading and writing checkpoint files safely, whatever the format inside.

* :func:`read_checkpoint_bytes` takes a regular file only (a FIFO, a device such as
  ``/dev/zero``, a directory, a symlink to either is refused before a byte is read), or a
  binary stream; :func:`map_checkpoint` maps a regular file copy-on-write (``mmap=True``).
* :func:`write_atomically` writes to a temporary file in the target directory, fsyncs it
  and renames it over the target, so a crash never leaves a half-written checkpoint under
  the real name; SIGTERM mid-write removes the temporary file, and a save into a directory
  removes the temporary files of writers that died (kill -9).
* The limits every reader applies (:data:`MAX_DEPTH`, :func:`build_budget`) live here, so
  each format answers a hostile file the same way.
"""
from __future__ import annotations

import io
import mmap
import os
import signal
import stat
import tempfile
import threading
from typing import Any, BinaryIO, Callable

__all__ = ["CheckpointError", "read_checkpoint_bytes", "map_checkpoint", "write_atomically",
           "MAX_DEPTH", "build_budget", "BYTES_PER_FILE_BYTE"]

#: deepest nesting of containers a checkpoint may hold (JSON trees and unpickled objects)
MAX_DEPTH = 256
#: what a file may make us build beyond its own size: tensors are stored once and shared by
#: reference; complex tensors from (real, imag) pairs, views copied where no view fits: 2x
BYTES_PER_FILE_BYTE = 2
_BYTES_SLACK = 1 << 20
_TMP_PREFIX = ".omnitensor-"


class CheckpointError(ValueError):
    """The file is not a readable checkpoint (truncated, corrupted, foreign, or not a
    regular file)."""


def build_budget(file_bytes: int | None) -> int | None:
    """How many tensor bytes loading a file of ``file_bytes`` bytes may build."""
    return None if file_bytes is None else BYTES_PER_FILE_BYTE * file_bytes + _BYTES_SLACK


def _open_regular(name: Any) -> tuple[int, int]:
    """A descriptor on the regular file ``name`` and its size; anything else is refused
    before reading. Opened non-blocking (a FIFO would block the open itself) and checked
    on the open descriptor, so nothing can be swapped in between the check and the read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(name, flags)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                 (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"),
                 (stat.S_ISSOCK, "a socket"))
        kind = next((k for test, k in kinds if test(info.st_mode)), "not a regular file")
        raise CheckpointError(f"{name} is {kind}, not a regular file: a checkpoint must "
                              f"be a regular file (refused before reading)")
    return fd, info.st_size


def _read_regular_file(name: Any) -> bytes:
    """The bytes of the regular file ``name``, up to the size it had when opened."""
    fd, size = _open_regular(name)
    try:
        chunks, left = [], size
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 26))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_checkpoint_bytes(f: Any) -> tuple[bytes, str]:
    """``(data, name)`` of a path or a binary stream (read from its current position)."""
    if hasattr(f, "read"):
        data = f.read()
        name = getattr(f, "name", "the checkpoint stream")
        if isinstance(data, str):
            raise TypeError("omnitensor.load: open the file in binary mode ('rb')")
        data = bytes(data)
    else:
        name = os.fspath(f)
        data = _read_regular_file(name)
    return data, name if isinstance(name, str) else repr(name)


def map_checkpoint(f: Any) -> tuple[Any, str]:
    """``(buffer, name)``: the regular file ``f`` mapped copy-on-write (torch's
    ``mmap=True``: tensors on the host share the mapping's pages; writes to them stay in
    this process). A stream cannot be mapped: torch refuses it too."""
    if hasattr(f, "read") and not isinstance(f, (str, bytes, os.PathLike)):
        raise ValueError("omnitensor.load(mmap=True) needs a file path (a stream cannot be "
                         "memory-mapped); pass the path, or mmap=False")
    name = os.fspath(f)
    fd, size = _open_regular(name)
    try:
        if size == 0:
            return b"", str(name)
        return mmap.mmap(fd, size, access=mmap.ACCESS_COPY), str(name)
    finally:
        os.close(fd)  # the mapping keeps its own reference to the file


# --------------------------------------------------------------------------- writing
def write_atomically(produce: Callable[[BinaryIO], None], f: Any) -> None:
    """Have ``produce(out)`` write a checkpoint to ``f``: a binary stream (written in one
    piece once complete) or a path (atomically: temporary file, fsync, rename)."""
    if hasattr(f, "write"):
        buf = io.BytesIO()
        produce(buf)
        f.write(buf.getvalue())
        return
    path = os.fspath(f)
    directory = os.path.dirname(os.path.abspath(path))
    _remove_stale_temps(directory)
    # SIGTERM mid-write: remove the temporary file, then die of it. The handler is in place
    # before the file exists, and raises only once the cleanup below covers the file.
    with _TerminateRaises() as terminate:
        fd, tmp = tempfile.mkstemp(prefix=f"{_TMP_PREFIX}{os.getpid()}-", suffix=".tmp",
                                   dir=directory)
        try:
            terminate.arm()
            with os.fdopen(fd, "w+b") as out:
                produce(out)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a saved file is ordinary
            os.replace(tmp, path)
            terminate.disarm()  # done: a late SIGTERM is re-delivered on the way out
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


class _Terminated(BaseException):
    """SIGTERM arrived while a checkpoint was being written."""


class _TerminateRaises:
    """Within the block (main thread only: Python runs signal handlers there), SIGTERM
    raises :class:`_Terminated`, so the writer removes its temporary file; on the way out
    the signal is re-delivered with the previous handler (by default: the process dies of
    it, as it would have). SIGINT already raises KeyboardInterrupt. A kill -9 cannot be
    caught: the next save into that directory removes the dead process's temporary file."""

    def __enter__(self) -> "_TerminateRaises":
        self.old: Any = None
        self.hit = False
        self.armed = False
        if threading.current_thread() is threading.main_thread():
            def handler(signum: int, frame: Any) -> None:
                self.hit = True
                if self.armed:  # before arm(), the signal is only noted: arm() raises it
                    self.armed = False
                    raise _Terminated()
            try:
                self.old = signal.signal(signal.SIGTERM, handler)
            except (ValueError, OSError):  # not allowed here (embedded interpreter)
                self.old = None
        return self

    def arm(self) -> None:
        """From here on SIGTERM raises (the caller's cleanup now covers what it made); one
        that came before raises now."""
        if self.hit:
            raise _Terminated()
        self.armed = True

    def disarm(self) -> None:
        """From here on SIGTERM is only noted (and re-delivered by ``__exit__``)."""
        self.armed = False

    def __exit__(self, *exc: Any) -> None:
        if self.old is None:
            return
        signal.signal(signal.SIGTERM, self.old)
        if self.hit:
            os.kill(os.getpid(), signal.SIGTERM)  # re-deliver under the previous handler


def _remove_stale_temps(directory: str) -> None:
    """Remove temporary files left in ``directory`` by saves whose process has died (kill
    -9, power loss): their names carry the writer's pid. Files of live processes, and of
    pids we cannot check, are left alone."""
    try:
        names = [n for n in os.listdir(directory)
                 if n.startswith(_TMP_PREFIX) and n.endswith(".tmp")]
    except OSError:
        return
    for n in names:
        pid_text = n[len(_TMP_PREFIX):].split("-", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        try:
            os.kill(int(pid_text), 0)
            continue  # alive (or pid reused): not ours to touch
        except ProcessLookupError:
            pass
        except OSError:  # PermissionError: someone else's live process
            continue
        try:
            os.unlink(os.path.join(directory, n))
        except OSError:
            pass


def _umask() -> int:
    mask = os.umask(0o22)  # the only way to read it is to set it; put it back at once
    os.umask(mask)
    return mask
