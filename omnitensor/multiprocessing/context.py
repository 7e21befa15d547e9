"""Processes and contexts that carry the ``as_torch`` alias into their children.

A child made by ``spawn`` or ``forkserver`` is a fresh interpreter: before it unpickles its
target it re-imports the parent's ``__main__`` (the user's script), whose ``import torch``
would find the real torch. ``multiprocessing`` rebuilds the child's ``sys.path`` from the
parent's, before that import; so while a process starts in a parent where
``omnitensor.as_torch`` is installed (``OMNITENSOR_AS_TORCH=1``), :func:`alias_for_children`
puts first on ``sys.path`` a directory holding only a ``torch`` package of a few lines that
installs the alias (``omnitensor.as_torch.install()``) and imports ``torch`` again, through
it. The parent is unaffected (its ``torch`` is already omnitensor, and the alias finder
comes before any path entry); a ``fork`` child inherits the alias and needs nothing.

:class:`Process` and the contexts of :func:`get_context` do this at ``start()``; so does
everything built on them here (``Pool``, ``spawn``). Code that uses the standard library's
``multiprocessing`` directly under ``as_torch`` gets it after
:func:`carry_alias_in_stdlib_processes` (for ``as_torch.install()`` to call).
"""
from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import multiprocessing.context as _mpc
import multiprocessing.pool
import multiprocessing.process as _mpp
import os
import shutil
import sys
import tempfile
import threading
from typing import Any, Callable, Iterable, Iterator

__all__ = ["Process", "get_context", "alias_for_children", "Pool",
           "carry_alias_in_stdlib_processes"]

_SHIM = ("import importlib, sys\n"
         "import omnitensor.as_torch\n"
         "omnitensor.as_torch.install()\n"
         "del sys.modules[__name__]\n"
         "sys.modules[__name__] = importlib.import_module(__name__)  # through the alias\n")
_MARK = "omnitensor-torch-alias-"
_lock = threading.RLock()  # re-entered when a patched stdlib start runs inside ours
_shim_dir: str | None = None


def _alias_installed() -> bool:
    # ``as_torch.install()`` sets it (``python -m omnitensor.as_torch`` runs that module as
    # ``__main__``, so the module itself is no reliable witness) and ``uninstall()`` clears it
    return os.environ.get("OMNITENSOR_AS_TORCH") == "1"


def _shim() -> str:
    """The directory holding the ``torch`` shim (made once per process tree)."""
    global _shim_dir
    for p in sys.path:  # a child of an aliased parent: reuse its directory
        if os.path.basename(p).startswith(_MARK) and os.path.isdir(p):
            return p
    if _shim_dir is None:
        d = tempfile.mkdtemp(prefix=_MARK)
        os.mkdir(os.path.join(d, "torch"))
        with open(os.path.join(d, "torch", "__init__.py"), "w") as f:
            f.write(_SHIM)
        atexit.register(shutil.rmtree, d, True)
        _shim_dir = d
    return _shim_dir


@contextlib.contextmanager
def alias_for_children(start_method: str | None = None) -> Iterator[None]:
    """While a child starts: if ``as_torch`` is installed here and the child is a fresh
    interpreter (``spawn``, ``forkserver``), make its ``import torch`` resolve to
    omnitensor too (see the module docstring)."""
    method = start_method or multiprocessing.get_start_method()
    if method == "fork" or not _alias_installed():
        yield
        return
    with _lock:
        d = _shim()
        added = d not in sys.path
        if added:
            sys.path.insert(0, d)
        try:
            yield
        finally:
            if added and d in sys.path:
                sys.path.remove(d)


def carry_alias_in_stdlib_processes() -> None:
    """Make every ``multiprocessing`` process (the standard library's too) start under
    :func:`alias_for_children`: for ``as_torch.install()``, so scripts that use
    ``multiprocessing`` itself, or libraries that do, get the alias in their children.
    Idempotent; a no-op for children while ``OMNITENSOR_AS_TORCH`` is unset."""
    base = _mpp.BaseProcess
    if getattr(base.start, "__omnitensor_alias__", False):
        return
    plain_start = base.start

    def start(self: Any) -> None:
        with alias_for_children(getattr(self, "_start_method", None)):
            plain_start(self)
    start.__omnitensor_alias__ = True  # type: ignore[attr-defined]
    start.__wrapped__ = plain_start  # type: ignore[attr-defined]
    base.start = start  # type: ignore[method-assign]


class _AliasAware:
    """``start()`` under :func:`alias_for_children`."""

    _start_method: str | None = None

    def start(self) -> None:
        with alias_for_children(self._start_method):
            super().start()  # type: ignore[misc]


class Process(_AliasAware, _mpc.Process):
    """``multiprocessing.Process`` (the default start method) that carries ``as_torch``
    into its child."""


class SpawnProcess(_AliasAware, _mpc.SpawnProcess):
    _start_method = "spawn"


class _SpawnContext(_mpc.SpawnContext):
    Process = SpawnProcess


_CONTEXTS: dict[str, Any] = {"spawn": _SpawnContext()}

if sys.platform != "win32":
    class ForkProcess(_AliasAware, _mpc.ForkProcess):
        _start_method = "fork"

    class ForkServerProcess(_AliasAware, _mpc.ForkServerProcess):
        _start_method = "forkserver"

    class _ForkContext(_mpc.ForkContext):
        Process = ForkProcess

    class _ForkServerContext(_mpc.ForkServerContext):
        Process = ForkServerProcess

    _CONTEXTS["fork"] = _ForkContext()
    _CONTEXTS["forkserver"] = _ForkServerContext()


def get_context(method: str | None = None) -> Any:
    """The context of start method ``method`` (None: the current default), as
    ``multiprocessing.get_context``; its ``Process`` and ``Pool`` carry ``as_torch``."""
    name = multiprocessing.get_start_method() if method is None else method
    ctx = _CONTEXTS.get(name)
    if ctx is None:
        raise ValueError(f"cannot find context for {method!r}; start methods here: "
                         f"{', '.join(multiprocessing.get_all_start_methods())}")
    return ctx


def Pool(processes: int | None = None,  # torch's (multiprocessing's) name
         initializer: Callable[..., object] | None = None, initargs: Iterable[Any] = (),
         maxtasksperchild: int | None = None) -> multiprocessing.pool.Pool:
    """``multiprocessing.Pool`` of the default start method, whose workers carry
    ``as_torch``."""
    return get_context().Pool(processes, initializer, initargs, maxtasksperchild)
