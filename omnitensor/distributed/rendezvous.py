"""torch.distributed's ``rendezvous(url)``: how processes find each other through a
store. A URL scheme names a handler, a generator yielding ``(store, rank, world_size)``:
``tcp://host:port?rank=R&world_size=N`` (rank 0 serves a TCPStore), ``env://`` (the same,
from ``MASTER_ADDR``/``MASTER_PORT``/``RANK``/``WORLD_SIZE``, which omnitensor-run sets)
and ``file:///path?rank=R&world_size=N`` (a FileStore); ``register_rendezvous_handler``
adds schemes.

omnitensor's own process groups rendezvous over MPI and do not use this; it is for
programs that want the store.
"""
from __future__ import annotations

import datetime
import numbers
import os
from typing import Any, Callable, Iterator
from urllib.parse import urlparse, urlunparse

from .store_shared import FileStore, TCPStore

__all__ = ["rendezvous", "register_rendezvous_handler"]

_HANDLERS: dict[str, Callable[..., Iterator[tuple[Any, int, int]]]] = {}
_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)


def register_rendezvous_handler(scheme: str, handler: Callable[..., Any]) -> None:
    """Make ``rendezvous`` answer URLs of ``scheme`` with ``handler(url, **kwargs)``, a
    generator yielding ``(store, rank, world_size)``."""
    if scheme in _HANDLERS:
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _HANDLERS[scheme] = handler


def _query(query: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in query.split("&") if part)


def rendezvous(url: str, rank: int = -1, world_size: int = -1,
               **kwargs: Any) -> Iterator[tuple[Any, int, int]]:
    """The handler of ``url``'s scheme: an iterator whose first item is ``(store, rank,
    world_size)``. ``rank``/``world_size`` other than -1 are added to the URL's query
    (which must not hold them already)."""
    if not isinstance(url, (str, bytes)):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    for name, value in (("rank", rank), ("world_size", world_size)):
        if not isinstance(value, numbers.Integral):
            raise RuntimeError(f"`{name}` must be an integer. {value}")
    text = url.decode() if isinstance(url, bytes) else url
    parsed = urlparse(text)
    if rank != -1 or world_size != -1:
        query = _query(parsed.query)
        if "rank" in query or "world_size" in query:
            raise AssertionError(f"The url: {text} has node-specific arguments(rank, "
                                 f"world_size) already.")
        if rank != -1:
            query["rank"] = str(rank)
        if world_size != -1:
            query["world_size"] = str(world_size)
        parsed = parsed._replace(query="&".join(f"{k}={v}" for k, v in query.items()))
        text = urlunparse(parsed)
    if parsed.scheme not in _HANDLERS:
        raise RuntimeError(f"No rendezvous handler for {parsed.scheme}://")
    return _HANDLERS[parsed.scheme](text, **kwargs)


def _error(scheme: str, msg: str) -> ValueError:
    return ValueError(f"Error initializing torch.distributed using {scheme}:// "
                      f"rendezvous: {msg}")


def _rank_and_size(scheme: str, query: dict[str, str], env: bool) -> tuple[int, int]:
    out = []
    for name, var in (("rank", "RANK"), ("world_size", "WORLD_SIZE")):
        if name in query:
            out.append(int(query[name]))
        elif env and os.environ.get(var):
            out.append(int(os.environ[var]))
        elif env:
            raise _error(scheme, f"environment variable {var} expected, but not set")
        else:
            raise _error(scheme, f"{name.replace('_', ' ')} parameter missing")
    return out[0], out[1]


def _tcp_store(host: str, port: int, rank: int, world: int,
               timeout: datetime.timedelta) -> TCPStore:
    if not 0 <= port < 2 ** 16:
        raise ValueError(f"port must have value from 0 to 65535 but was {port}.")
    return TCPStore(host, port, world, rank == 0, timeout)


def _tcp_handler(url: str, timeout: datetime.timedelta = _DEFAULT_TIMEOUT,
                 **kwargs: Any) -> Iterator[tuple[Any, int, int]]:
    parsed = urlparse(url)
    if parsed.port is None:
        raise _error("tcp", "port number missing")
    rank, world = _rank_and_size("tcp", _query(parsed.query), env=False)
    yield _tcp_store(parsed.hostname or "127.0.0.1", parsed.port, rank, world,
                     timeout), rank, world
    raise RuntimeError("Unable to perform re-rendezvous using tcp:// method")


def _env_handler(url: str, timeout: datetime.timedelta = _DEFAULT_TIMEOUT,
                 **kwargs: Any) -> Iterator[tuple[Any, int, int]]:
    rank, world = _rank_and_size("env", _query(urlparse(url).query), env=True)
    for var in ("MASTER_ADDR", "MASTER_PORT"):
        if not os.environ.get(var):
            raise _error("env", f"environment variable {var} expected, but not set")
    yield _tcp_store(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), rank,
                     world, timeout), rank, world
    raise RuntimeError("Unable to perform re-rendezvous using env:// method")


def _file_handler(url: str, **kwargs: Any) -> Iterator[tuple[Any, int, int]]:
    parsed = urlparse(url)
    if not parsed.path:
        raise _error("file", "path missing")
    rank, world = _rank_and_size("file", _query(parsed.query), env=False)
    yield FileStore(parsed.path, world), rank, world
    raise RuntimeError("Unable to perform rerendezvous using file:// method")


register_rendezvous_handler("tcp", _tcp_handler)
register_rendezvous_handler("env", _env_handler)
register_rendezvous_handler("file", _file_handler)
