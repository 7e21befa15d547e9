"""Reading omnitensor's environment variables, validated once, at first use.

Every ``OMNITENSOR_*`` setting that holds a number goes through here, so a bad value (``nan``,
``-5``, ``abc``) fails the same way everywhere: an :class:`~omnitensor.errors.EnvVarError`
(a ValueError) naming the variable, the value given and what is accepted, instead of a raw
``float()`` error deep in a collective or a silently disabled timeout.
"""
from __future__ import annotations

import math
import os
import re

from .errors import EnvVarError

__all__ = ["positive_seconds", "positive_int", "byte_count"]

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20,
          "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
          "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}
_BYTES = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return None
    return value.strip()


def _bad(name: str, value: str, accepted: str, default: str) -> EnvVarError:
    return EnvVarError(f"environment variable {name}={value!r} is not valid: expected "
                       f"{accepted}. Fix or unset it (unset: {default}).")


def positive_seconds(name: str, default: float) -> float:
    """A finite number of seconds > 0 (``OMNITENSOR_DIST_TIMEOUT=600``)."""
    raw = _raw(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise _bad(name, raw, "a finite number of seconds greater than 0, e.g. 600",
                   f"{default:g} s")
    return value


def positive_int(name: str, default: int) -> int:
    """An integer >= 1 (``OMNITENSOR_NUM_THREADS=4``)."""
    raw = _raw(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise _bad(name, raw, "a whole number of at least 1, e.g. 4", str(default))
    return value


def byte_count(name: str, default: int) -> int:
    """A number of bytes >= 0, optionally with a unit: ``0``, ``1e9``, ``512MiB``, ``2G``."""
    raw = _raw(name)
    if raw is None:
        return default
    m = _BYTES.match(raw)
    unit = _UNITS.get(m.group(2).lower()) if m else None
    if m is None or unit is None:
        raise _bad(name, raw, "a number of bytes of at least 0, optionally with a unit "
                   "(0, 1e9, 512MiB, 2GiB)", f"{default} bytes")
    return int(float(m.group(1)) * unit)
