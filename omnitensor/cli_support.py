"""What every ``omnitensor`` command shares: one-line errors (the traceback only with
``--debug`` or ``OMNITENSOR_DEBUG=1``), comma-separated option lists, device names checked
against this machine with the fix in the message, and a progress line with an ETA."""
from __future__ import annotations

import os
import sys
import time
import traceback
from typing import Callable, TextIO

DEBUG_FLAG = "--debug"
DEBUG_HINT = f"{DEBUG_FLAG} or OMNITENSOR_DEBUG=1 shows the traceback"


class CLIError(Exception):
    """A bad command line or an unusable request: printed as one line, exit status 2."""


def take_debug_flag(argv: list[str]) -> tuple[bool, list[str]]:
    """(debug wanted, ``argv`` without ``--debug``): the flag is accepted anywhere on the
    line, so ``omnitensor train-digits --device x --debug`` works too."""
    env = os.environ.get("OMNITENSOR_DEBUG", "").strip().lower() not in ("", "0", "false", "no")
    rest = [a for a in argv if a != DEBUG_FLAG]
    return env or len(rest) != len(argv), rest


def one_line(e: BaseException) -> str:
    """``Type: message`` on one line (a multi-line message joined with '; ')."""
    text = "; ".join(part.strip() for part in str(e).splitlines() if part.strip())
    if isinstance(e, CLIError):
        return text
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def guarded(prog: str, fn: Callable[[], int], debug: bool) -> int:
    """Run ``fn`` (a command); any exception becomes one line on stderr naming ``prog``
    (exit 2 for a :class:`CLIError`, 130 for Ctrl-C, else 1), or the traceback with
    ``debug``."""
    try:
        return fn()
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - the one place a command's error is reported
        if debug:
            traceback.print_exc()
        hint = "" if debug or isinstance(e, CLIError) else f" ({DEBUG_HINT})"
        print(f"{prog}: error: {one_line(e)}{hint}", file=sys.stderr)
        return 2 if isinstance(e, CLIError) else 1


def split_list(values: list[str] | None) -> list[str] | None:
    """``["add,matmul", "sum"]`` -> ``["add", "matmul", "sum"]`` (repeatable options that
    also take comma lists); None stays None (the option was not given)."""
    if values is None:
        return None
    return [v.strip() for spec in values for v in spec.split(",") if v.strip()]


def _found() -> str:
    import omnitensor as ot
    return ", ".join(str(d) for d in ot.devices()) or "none"


def check_device(spec: str, option: str = "--device") -> str:
    """The canonical name of device ``spec`` (``opencl`` -> ``opencl:0``) when this machine
    has it; else a :class:`CLIError` naming why (unknown name, backend not installed and
    what to install, index out of range) and the devices there are."""
    import omnitensor as ot
    from .backends import registry
    from .errors import OmnitensorError
    try:
        dev = ot.device(spec)
    except (OmnitensorError, ValueError, TypeError) as e:
        raise CLIError(f"bad {option} {spec!r}: {one_line(e)}. Devices on this machine: "
                       f"{_found()}") from None
    be, why = registry.try_backend(dev.type)
    if be is None:
        raise CLIError(f"no device {dev}: {why}. Devices on this machine: {_found()} "
                       f"(`omnitensor info` says why a backend is absent)")
    if (dev.index or 0) >= be.device_count():
        raise CLIError(f"no device {dev}: the {dev.type} backend has {be.device_count()} "
                       f"device(s). Devices on this machine: {_found()}")
    return str(dev)


def check_devices(specs: list[str] | None, option: str = "--device") -> list[str]:
    """:func:`check_device` of each name (comma lists allowed); None: every device found."""
    import omnitensor as ot
    names = split_list(specs)
    if not names:
        return [str(d) for d in ot.devices()]
    return [check_device(n, option) for n in names]


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """A progress report on ``stream`` (stderr): on a terminal one line rewritten in place,
    otherwise a line every ``every`` items (and at the end), each with the count, the
    elapsed time and an ETA from the mean time per item so far."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None,
                 every: int = 50) -> None:
        self.total, self.label, self.every = total, label, max(1, every)
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = 0
        self.t0 = time.perf_counter()

    def line(self, what: str = "") -> str:
        """The report after ``self.done`` items (``what``: the item just finished)."""
        elapsed = time.perf_counter() - self.t0
        pct = 100 * self.done / self.total if self.total else 100.0
        eta = (elapsed / self.done * (self.total - self.done)) if self.done else None
        tail = f", ETA {_clock(eta)}" if eta is not None and self.done < self.total else ""
        item = f" ({what})" if what else ""
        return (f"{self.label}: {self.done}/{self.total} ({pct:.0f}%), "
                f"{_clock(elapsed)} elapsed{tail}{item}")

    def step(self, what: str = "") -> None:
        """One item finished."""
        self.done += 1
        if self.tty:
            self.stream.write("\r\033[K" + self.line(what))
        elif self.done % self.every == 0 or self.done == self.total:
            self.stream.write(self.line(what) + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the in-place line (a terminal), so what follows starts on its own line."""
        if self.tty and self.done:
            self.stream.write("\r\033[K")
            self.stream.flush()
