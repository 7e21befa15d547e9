"""The stores processes share: ``FileStore`` (a locked file) and ``TCPStore`` (a table
served by the master process over TCP). Both apply :class:`store._Table` operations, so
their semantics are HashStore's (``store.py``); only where the table lives differs.

The wire and file formats are JSON with bytes as base64 (never pickle: a store's peer is
not trusted to run code in this process).
"""
from __future__ import annotations

import base64
import datetime
import fcntl
import json
import os
import socket
import struct
import threading
import time
from typing import Any

from .store import DEFAULT_TIMEOUT, Store, _Table
from .types import DistNetworkError, DistStoreError

__all__ = ["FileStore", "TCPStore"]


def _enc(obj: Any) -> Any:
    if isinstance(obj, bytes):
        return {"b": base64.b64encode(obj).decode()}
    if isinstance(obj, (list, tuple)):
        return [_enc(o) for o in obj]
    return obj


def _dec(obj: Any) -> Any:
    if isinstance(obj, dict):
        return base64.b64decode(obj["b"])
    if isinstance(obj, list):
        return [_dec(o) for o in obj]
    return obj


class FileStore(Store):
    """A store in the file ``file_name``, shared by every process that opens the same
    path (torch's ``FileStore``). Each operation locks the file (``flock``), reads the
    table, applies itself and writes the table back."""

    def __init__(self, file_name: str, world_size: int = -1) -> None:
        super().__init__()
        self.path = os.fspath(file_name)
        self.world_size = int(world_size)
        with open(self.path, "a"):
            pass  # create it, as torch does on construction

    def _run(self, op: str, *args: Any) -> Any:
        with open(self.path, "r+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                text = f.read()
                table = _Table()
                if text:
                    state = json.loads(text)
                    table.data = {k: base64.b64decode(v) for k, v in state["data"].items()}
                    for k, q in state["queues"].items():
                        for v in q:
                            table.push(k, base64.b64decode(v))
                got = table.call(op, *args)
                f.seek(0)
                f.truncate()
                json.dump({"data": {k: base64.b64encode(v).decode()
                                    for k, v in table.data.items()},
                           "queues": {k: [base64.b64encode(v).decode() for v in q]
                                      for k, q in table.queues.items()}}, f)
                return got
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)


# -------------------------------------------------------------------------- TCPStore
def _send(sock: socket.socket, obj: Any) -> None:
    data = json.dumps(_enc(obj)).encode()
    sock.sendall(struct.pack("!I", len(data)) + data)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("the store's peer closed the connection")
        buf += chunk
    return buf


def _recv(sock: socket.socket) -> Any:
    (n,) = struct.unpack("!I", _recv_exact(sock, 4))
    return _dec(json.loads(_recv_exact(sock, n)))


class _Server:
    """The master's table, served to each client connection by a daemon thread."""

    def __init__(self, host: str, port: int) -> None:
        self.table = _Table()
        self.lock = threading.Lock()
        self.sock = socket.create_server(("", port), reuse_port=False)
        self.port = self.sock.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True, name="TCPStore").start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            while True:
                try:
                    op, args = _recv(conn)
                except (ConnectionError, OSError, ValueError):
                    return
                try:
                    with self.lock:
                        reply = ["ok", self.table.call(op, *args)]
                except Exception as e:  # noqa: BLE001 - sent to the client, raised there
                    reply = ["error", f"{type(e).__name__}: {e}"]
                _send(conn, reply)

    def close(self) -> None:
        self.closed = True
        self.sock.close()


class TCPStore(Store):
    """A store served by the master process (``is_master=True``) on ``host_name:port``
    and reached by every other process over TCP (torch's ``TCPStore``). ``port=0`` on the
    master picks a free port (``store.port``). With ``wait_for_workers`` and a
    ``world_size``, the master's constructor waits until ``world_size`` stores (itself
    included) have connected."""

    def __init__(self, host_name: str, port: int, world_size: int | None = None,
                 is_master: bool = False, timeout: datetime.timedelta = DEFAULT_TIMEOUT,
                 wait_for_workers: bool = True, multi_tenant: bool = False,
                 master_listen_fd: int | None = None, use_libuv: bool = True) -> None:
        super().__init__()
        self._timeout = timeout
        self.host = host_name
        self._server = _Server(host_name, int(port)) if is_master else None
        self.port = self._server.port if self._server else int(port)
        self.libuvBackend = False
        self._lock = threading.Lock()
        self._sock = self._connect(timeout)
        self._run("join", "")
        if is_master and wait_for_workers and world_size is not None:
            try:
                self._until(timeout, "joined", "", int(world_size))
            except DistStoreError:
                raise DistStoreError(f"Timed out after {timeout} waiting for {world_size} "
                                     f"TCPStore clients on port {self.port}") from None

    def _connect(self, timeout: datetime.timedelta) -> socket.socket:
        deadline = time.monotonic() + timeout.total_seconds()
        while True:
            try:
                return socket.create_connection((self.host, self.port), timeout=None)
            except OSError as e:
                if time.monotonic() >= deadline:
                    raise DistNetworkError(f"TCPStore: cannot reach {self.host}:{self.port}"
                                           f" within {timeout}: {e}") from None
                time.sleep(0.05)

    def _run(self, op: str, *args: Any) -> Any:
        with self._lock:
            try:
                _send(self._sock, [op, list(args)])
                reply = _recv(self._sock)
            except (ConnectionError, OSError) as e:
                raise DistNetworkError(f"TCPStore {self.host}:{self.port}: {e}") from None
        status, value = reply
        if status == "error":
            raise DistStoreError(value)
        return value

    def __del__(self) -> None:
        try:
            self._sock.close()
            if self._server is not None:
                self._server.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
