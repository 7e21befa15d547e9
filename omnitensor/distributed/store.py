"""torch.distributed's key-value stores: ``Store``, ``HashStore``, ``PrefixStore``,
``FileStore`` and ``TCPStore``, with torch's methods and semantics (values are bytes,
``get``/``wait`` block until the key exists or the store's timeout passes and then raise
``DistStoreError``, ``add`` keeps a decimal counter, ``compare_set`` and the queues).

omnitensor's process groups rendezvous over MPI and need no store; these exist for the
programs that use a store directly (to exchange addresses, counters or flags between
processes). One in-memory table (:class:`_Table`) holds every rule; ``HashStore`` is that
table, ``FileStore`` keeps it in a locked file that several processes share, and
``TCPStore``'s master serves it to clients over a socket.
"""
from __future__ import annotations

import collections
import datetime
import threading
import time
from typing import Any, Sequence

from .types import DistStoreError, QueueEmptyError

__all__ = ["Store", "HashStore", "PrefixStore"]

DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)


def _bytes(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    raise TypeError(f"store values are str or bytes, got {type(value).__name__}")


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"store keys are str, got {type(key).__name__}")
    return key


class _Table:
    """The state of a store and every rule on it (no blocking, no I/O). Each operation's
    first argument is its key or list of keys (so PrefixStore can prefix them), and its
    arguments and result are plain data (so TCPStore can send them)."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.queues: dict[str, collections.deque] = {}

    def call(self, op: str, *args: Any) -> Any:
        if op not in _OPS:
            raise ValueError(f"unknown store operation {op!r}")
        return getattr(self, op)(*args)

    def set(self, keys: list[str], values: list[bytes]) -> None:
        self.data.update(zip(keys, values))

    def peek(self, key: str) -> bytes | None:
        return self.data.get(key)

    def has(self, keys: list[str]) -> bool:
        return all(k in self.data for k in keys)

    def add(self, key: str, amount: int) -> int:
        now = int(self.data.get(key, b"0")) + int(amount)
        self.data[key] = str(now).encode()
        return now

    def append(self, key: str, value: bytes) -> None:
        self.data[key] = self.data.get(key, b"") + value

    def compare_set(self, key: str, expected: bytes, desired: bytes) -> bytes:
        # torch: a missing key is set only when `expected` is empty; otherwise the
        # answer is `expected` itself (the store is unchanged)
        if key not in self.data:
            if expected == b"":
                self.data[key] = desired
                return desired
            return expected
        if self.data[key] == expected:
            self.data[key] = desired
        return self.data[key]

    def delete(self, key: str) -> bool:
        return self.data.pop(key, None) is not None

    def push(self, key: str, value: bytes) -> None:
        self.queues.setdefault(key, collections.deque()).append(value)

    def pop(self, key: str) -> bytes | None:
        q = self.queues.get(key)
        return q.popleft() if q else None

    def qlen(self, key: str) -> int:
        return len(self.queues.get(key, ()))

    def keys(self, prefix: str) -> list[str]:
        return [k for k in self.data if k.startswith(prefix)]

    def count(self, prefix: str) -> int:
        return len(self.data)

    # TCPStore's rendezvous of its clients (kept out of the keys, as torch's)
    workers = 0

    def join(self, key: str) -> int:
        self.workers += 1
        return self.workers

    def joined(self, key: str, n: int) -> bool:
        return self.workers >= n


_OPS = frozenset(n for n in vars(_Table)
                 if not n.startswith("_") and n not in ("call", "workers"))


class Store:
    """A key-value store shared by processes (torch's ``torch.distributed.Store``).

    Subclasses provide ``_run(op, *args)``: apply the :class:`_Table` operation ``op``
    atomically to the shared table and return its result; blocking calls poll it."""

    def __init__(self) -> None:
        self._timeout = DEFAULT_TIMEOUT

    # ------------------------------------------------------------ the one primitive
    def _run(self, op: str, *args: Any) -> Any:
        raise NotImplementedError("Store is abstract: use HashStore, FileStore or TCPStore")

    def _until(self, timeout: Any, op: str, *args: Any) -> Any:
        """``op``'s result once it is not None; DistStoreError ("Wait timeout", torch's
        message) after the timeout."""
        limit = self._timeout if timeout is None else timeout
        deadline = time.monotonic() + limit.total_seconds()
        pause = 0.0005
        while True:
            got = self._run(op, *args)
            if got is not None and got is not False:
                return got
            if time.monotonic() >= deadline:
                raise DistStoreError("Wait timeout")
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    # --------------------------------------------------------------- torch's API
    @property
    def timeout(self) -> datetime.timedelta:
        """How long ``get``/``wait`` block before raising DistStoreError."""
        return self._timeout

    def set_timeout(self, timeout: datetime.timedelta) -> None:
        self._timeout = timeout

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (str or bytes) under ``key``, replacing an old value."""
        self._run("set", [_key(key)], [_bytes(value)])

    def get(self, key: str) -> bytes:
        """The value of ``key``, waiting for it to be set (up to the timeout)."""
        return self._until(None, "peek", _key(key))

    def add(self, key: str, amount: int) -> int:
        """Add ``amount`` to the integer counter ``key`` (0 when new); its new value."""
        return int(self._run("add", _key(key), int(amount)))

    def append(self, key: str, value: Any) -> None:
        """Append ``value`` to ``key``'s bytes (creating it)."""
        self._run("append", _key(key), _bytes(value))

    def compare_set(self, key: str, expected_value: Any, desired_value: Any) -> bytes:
        """Set ``key`` to ``desired_value`` if it holds ``expected_value`` (or is missing
        and ``expected_value`` is empty); returns the value the key holds afterwards."""
        return self._run("compare_set", _key(key), _bytes(expected_value),
                         _bytes(desired_value))

    def multi_get(self, keys: Sequence[str]) -> list[bytes]:
        """The values of ``keys`` (waiting for each)."""
        return [self.get(k) for k in keys]

    def multi_set(self, keys: Sequence[str], values: Sequence[Any]) -> None:
        """Set each key to its value (at once)."""
        if len(keys) != len(values):
            raise ValueError(f"multi_set: {len(keys)} keys but {len(values)} values")
        self._run("set", [_key(k) for k in keys], [_bytes(v) for v in values])

    def check(self, keys: Sequence[str]) -> bool:
        """Whether every key is set (does not wait)."""
        return bool(self._run("has", [_key(k) for k in keys]))

    def wait(self, keys: Sequence[str], timeout: datetime.timedelta | None = None) -> None:
        """Wait until every key is set (DistStoreError after ``timeout``)."""
        self._until(timeout, "has", [_key(k) for k in keys])

    def delete_key(self, key: str) -> bool:
        """Delete ``key``; whether it existed."""
        return bool(self._run("delete", _key(key)))

    def num_keys(self) -> int:
        """The number of keys set."""
        return int(self._run("count", ""))

    def list_keys(self) -> list[str]:
        """The keys set."""
        return list(self._run("keys", ""))

    def queue_push(self, key: str, value: Any) -> None:
        """Append ``value`` to the queue ``key``."""
        self._run("push", _key(key), _bytes(value))

    def queue_pop(self, key: str, block: bool = True) -> bytes:
        """The oldest value of queue ``key``: waits for one when ``block``, else raises
        QueueEmptyError on an empty queue."""
        if block:
            return self._until(None, "pop", _key(key))
        got = self._run("pop", _key(key))
        if got is None:
            raise QueueEmptyError("queue is empty")
        return got

    def queue_len(self, key: str) -> int:
        """The number of values in queue ``key``."""
        return int(self._run("qlen", _key(key)))

    def has_extended_api(self) -> bool:
        """Whether the queue, append and multi_* methods work (they do on every store)."""
        return True

    def clone(self) -> "Store":
        """A handle on the same store (these stores are safe to share between threads)."""
        return self


class HashStore(Store):
    """An in-process store (threads share it), torch's ``HashStore``."""

    def __init__(self) -> None:
        super().__init__()
        self._table = _Table()
        self._lock = threading.Lock()

    def _run(self, op: str, *args: Any) -> Any:
        with self._lock:
            return self._table.call(op, *args)


class PrefixStore(Store):
    """A view of ``store`` whose keys are all prefixed by ``prefix + "/"``."""

    def __init__(self, prefix: str, store: Store) -> None:
        super().__init__()
        if not isinstance(store, Store):
            raise TypeError(f"PrefixStore wraps a Store, got {type(store).__name__}")
        self.prefix = _key(prefix)
        self.underlying_store = store
        self._timeout = store.timeout

    def _run(self, op: str, first: Any, *rest: Any) -> Any:
        pre = self.prefix + "/"
        if op == "count":  # torch counts the underlying store's keys
            return self.underlying_store._run(op, first)
        key = [pre + k for k in first] if isinstance(first, list) else pre + first
        got = self.underlying_store._run(op, key, *rest)
        return [k[len(pre):] for k in got] if op == "keys" else got


