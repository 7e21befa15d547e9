"""A bound on the work one run of a loaded model does (``omnitensor.onnx.load``).

An ONNX file is data, but the graph it holds decides how much the machine computes: an
``Expand`` to 10^12 x 4 then a sum is a few hundred bytes. Every operator ends in backend
primitives, so that is where the work is counted: while a run is metered, each loaded
device's backend is wrapped (as capture and the profiler do) and every primitive the
metering thread calls is charged, *before* it runs, what it will touch: the elements of
its array operands (broadcast views at their full size), of the array it creates
(``full``, ``empty``, ``arange``, ``random_bits``, ``pad``, ``concat``) and its
multiply-adds (``matmul``, ``einsum``, the linalg and FFT hooks). When the total would
pass the limit the primitive does not run: :class:`WorkLimitError` names the limit and
how to raise it. Other threads' calls pass through uncounted.
"""
from __future__ import annotations

import math
import threading
from typing import Any

from ..core import device as _device_mod
from ..errors import OmnitensorError

__all__ = ["WorkLimitError", "metered"]

#: primitives that only describe or view memory: free (not reshape: it copies where no
#: view fits, as of a broadcast view, and is charged its logical size)
_FREE = frozenset((
    "permute", "broadcast_to", "index", "flip", "diagonal", "as_strided",
    "strides", "memory_span", "synchronize", "device_index", "supports_dtype",
    "dtype_unsupported_reason", "memory_stats", "device_info", "empty_cache"))
_SHAPE_FIRST = frozenset(("full", "empty", "random_bits"))


class WorkLimitError(OmnitensorError, RuntimeError):
    """A run would do more work than its limit allows (an omnitensor error, so core's
    ops pass it on as it is rather than as a backend failure)."""


def _numel(x: Any) -> int:
    shape = getattr(x, "shape", None)
    if shape is None or isinstance(x, (str, bytes)):
        return 0
    try:
        return math.prod(int(d) for d in shape)
    except TypeError:
        return 0


def _arrays(args: Any, depth: int = 0) -> int:
    """The elements of every array in ``args`` (nested tuples and lists included)."""
    total = 0
    for a in args:
        if isinstance(a, (tuple, list)) and depth < 4:
            total += _arrays(a, depth + 1)
        else:
            total += _numel(a)
    return total


def _einsum(subscripts: Any, operands: tuple) -> int:
    """A naive einsum's multiply-adds: the product of every index's size."""
    if not isinstance(subscripts, str):
        return _arrays(operands)
    sizes: dict[str, int] = {}
    for term, x in zip(subscripts.split("->")[0].split(","), operands):
        letters = [c for c in term if c.isalpha()]
        shape = getattr(x, "shape", ())
        for c, d in zip(letters, reversed(shape) if "..." in term else shape):
            sizes[c] = max(sizes.get(c, 1), int(d))
    return math.prod(sizes.values()) + _arrays(operands)


def cost(name: str, args: tuple) -> int:
    """What the primitive ``name`` called with ``args`` touches (see the module
    docstring)."""
    if name in _FREE:
        return 0
    if name in _SHAPE_FIRST and args and isinstance(args[0], (tuple, list)):
        return math.prod(int(d) for d in args[0])
    if name == "arange" and len(args) > 2 and isinstance(args[2], int):
        return int(args[2])
    if name == "pad" and len(args) > 1:
        widths = args[1]
        shape = getattr(args[0], "shape", ())
        return _numel(args[0]) + math.prod(int(d) + int(a) + int(b)
                                           for d, (a, b) in zip(shape, widths))
    if name == "concat" and args:
        return 2 * _arrays(args[0])
    if name == "matmul" and len(args) == 2:
        a, b = args
        sa: Any = getattr(a, "shape", ())
        sb: Any = getattr(b, "shape", ())
        if len(sa) >= 2 and len(sb) >= 2:
            return _numel(a) // max(int(sa[-1]), 1) * int(sb[-1]) * int(sa[-1]) + \
                _numel(a) + _numel(b)
    if name == "hook:einsum" and args:
        return _einsum(args[0], args[1:])
    if name.startswith(("hook:linalg_", "hook:fft_")):
        n = _arrays(args)
        biggest = max((int(d) for a in args for d in getattr(a, "shape", ())), default=1)
        return n * max(biggest, 1)
    if name in ("sort", "argsort", "searchsorted"):
        n = _arrays(args)
        return n * (1 + max(n, 2).bit_length())
    return _arrays(args)


class _State(threading.local):
    meter: "metered | None" = None


_STATE = _State()
_LOCK = threading.Lock()
_INSTALLED: dict[int, tuple[Any, Any]] = {}      # id(device) -> (device, real backend)
_USERS = [0]


class _Metered:
    """A device's backend while some thread meters: charges that thread's calls."""

    def __init__(self, real: Any) -> None:
        self.__dict__["_real"] = real

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._real, name)
        if not callable(attr) or name in _FREE:
            return attr
        if name == "hook":
            def hook(hname: str) -> Any:
                fn = attr(hname)
                return None if fn is None else _charged("hook:" + hname, fn)
            return hook
        return _charged(name, attr)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._real, name, value)


def _charged(name: str, fn: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        m = _STATE.meter
        if m is not None:
            m.charge(name, cost(name, args))
        return fn(*args, **kwargs)
    return call


class metered:
    """Context manager: the calling thread's primitives are charged to ``limit`` work
    units; ``what`` names the run in the error."""

    def __init__(self, limit: int, what: str, fix: str) -> None:
        self.limit, self.what, self.fix = limit, what, fix
        self.used = 0
        self._outer: metered | None = None

    def charge(self, name: str, units: int) -> None:
        self.used += units
        if self.used > self.limit:
            raise WorkLimitError(
                f"{self.what} would do more than {self.limit:.3g} units of work in one run "
                f"(the limit; {name} asked for {units:.3g}): refused before running it. "
                f"{self.fix}")

    def __enter__(self) -> "metered":
        self._outer, _STATE.meter = _STATE.meter, self
        with _LOCK:
            _USERS[0] += 1
            devices: list[Any] = list(_device_mod._interned.values())
            for d in devices:
                be = d.__dict__.get("backend")
                if be is not None and id(d) not in _INSTALLED and \
                        not isinstance(be, _Metered):
                    _INSTALLED[id(d)] = (d, be)
                    d.backend = _Metered(be)
        return self

    def __exit__(self, *exc: Any) -> None:
        _STATE.meter = self._outer
        with _LOCK:
            _USERS[0] -= 1
            if _USERS[0] == 0:
                for d, real in _INSTALLED.values():
                    if isinstance(d.__dict__.get("backend"), _Metered):
                        d.backend = real
                _INSTALLED.clear()
