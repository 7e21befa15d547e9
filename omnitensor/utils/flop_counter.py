"""``FlopCounterMode``: torch.utils.flop_counter's FLOP counter (per module and op).

::

    with FlopCounterMode(depth=2) as fc:      # prints the table on exit (display=True)
        model(x).sum().backward()
    fc.get_total_flops(); fc.get_flop_counts()   # {"Global": {"aten.linear": ...}, "Net.fc1": ...}

Counting is the profiler's (``omnitensor/profiler/flops.py``): every matrix product
(linear, convolution, matmul, attention; forward and backward) counts ``2*M*N*K``, under the
torch op that ran it (``aten.linear``, ``aten.conv2d``, ``aten.matmul``: omnitensor's op
names, where torch names its decompositions ``aten.addmm``/``aten.mm``/``aten.convolution``;
the totals agree). Modules are named as torch names them (the root module's class, then
dotted attribute paths: ``Sequential.0``). Backward FLOPs count in the total (``Global``)
but, unlike torch, are not attributed to the modules whose forward made them. It runs a
profiler session, so it cannot run inside ``omnitensor.profiler.profile`` (use
``profile(with_flops=True)`` there).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..profiler.session import Session

__all__ = ["FlopCounterMode"]

_SUFFIXES = ["", "K", "M", "B", "T"]


def _suffix(number: int) -> str:
    # torch's rule: by the digits of the total, so 1.01B shows as 1001M
    return _SUFFIXES[max(0, min(len(_SUFFIXES) - 1, (len(str(number)) - 2) // 3))]


def _with_suffix(number: int, suffix: str) -> str:
    value = number / 1000 ** _SUFFIXES.index(suffix)
    # a plain count reads as a number (672, 12.5); a scaled one keeps 3 decimals
    return f"{value:g}" if not suffix else f"{value:.3f}{suffix}"


def _percent(num: int, denom: int) -> str:
    return "0%" if denom == 0 else f"{num / denom:.2%}"


class _CountingSession(Session):
    """A profiler session whose module events carry torch's dotted module names."""

    def __init__(self) -> None:
        super().__init__(record_cpu=True, device_time=False, record_shapes=False,
                         profile_memory=False, with_flops=True, with_modules=True)
        self._mods: list[tuple[Any, str]] = []

    def module_label(self, module: Any) -> str:
        if not self._mods:
            return type(module).__name__
        parent, name = self._mods[-1]
        for attr, child in getattr(parent, "_modules", {}).items():
            if child is module:
                return f"{name}.{attr}"
        return f"{name}.{type(module).__name__}"  # called, not owned, by the parent

    def module_enter(self, module: Any) -> Any:
        ev = super().module_enter(module)
        if ev is not None:
            self._mods.append((module, ev.name))
        return ev

    def module_exit(self, ev: Any) -> None:
        if ev is not None and self._mods and self._mods[-1][1] == ev.name:
            self._mods.pop()
        super().module_exit(ev)


class FlopCounterMode:
    """Count FLOPs of what runs inside (a context manager; not re-entrant). ``depth``:
    how deep the printed table goes; ``display``: print it on exit."""

    def __init__(self, mods: Any = None, depth: int = 2, display: bool = True,
                 custom_mapping: dict[Any, Any] | None = None) -> None:
        if custom_mapping:
            raise NotImplementedError(
                "FlopCounterMode(custom_mapping=...) is not supported: omnitensor counts "
                "the FLOPs of matrix products itself and has no per-op formula table")
        self.depth = depth
        self.display = display
        self.flop_counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self._session: _CountingSession | None = None

    def __enter__(self) -> "FlopCounterMode":
        self.flop_counts.clear()
        s = _CountingSession()
        try:
            s.install()
        except RuntimeError as e:
            raise RuntimeError(f"FlopCounterMode: {e} (FLOPs are counted by a profiler "
                               f"session; inside a profile use profile(with_flops=True))") \
                from None
        s.recording = True
        self._session = s
        return self

    def __exit__(self, *exc: Any) -> None:
        s, self._session = self._session, None
        if s is None:
            raise RuntimeError("FlopCounterMode.__exit__ without __enter__")
        s.uninstall()
        for ev in s.events:
            if ev.kind != "op" or ev.flops <= 0:
                continue
            op = ev.name.replace("aten::", "aten.", 1)
            self.flop_counts["Global"][op] += ev.flops
            p = ev.cpu_parent
            while p is not None:
                if p.kind == "module":
                    self.flop_counts[p.name][op] += ev.flops
                p = p.cpu_parent
        if self.display:
            print(self.get_table(self.depth))

    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[str, int]]:
        """``{module name: {op: flops}}``, with ``"Global"`` for everything."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth: int | None = None) -> str:
        """The table torch prints: modules to ``depth`` (dotted names), their ops, FLOPs
        and share of the total."""
        depth = 999999 if depth is None else depth
        total = self.get_total_flops()
        suffix = _suffix(total)
        rows: list[list[str]] = []
        subsumed = False

        def module_rows(name: str) -> list[list[str]]:
            nonlocal subsumed
            flops = sum(self.flop_counts[name].values())
            subsumed |= flops >= total
            out = [[name, _with_suffix(flops, suffix), _percent(flops, total)]]
            out += [["- " + op, _with_suffix(v, suffix), _percent(v, total)]
                    for op, v in self.flop_counts[name].items()]
            return out
        for name in sorted(k for k in self.flop_counts if k != "Global"):
            if name.count(".") + 1 <= depth:
                rows += module_rows(name)
        if "Global" in self.flop_counts and not subsumed:  # FLOPs outside every module
            rows = module_rows("Global") + rows
        if not rows:
            rows = [["Global", "0", "0%"]]
        return _format(["Module", "FLOP", "% Total"], rows)


def _format(headers: list[str], rows: list[list[str]]) -> str:
    """A plain table: the first column left-aligned, the others right-aligned, two spaces
    between columns, a dashed rule under the headers, each column at least two wider than
    its header (the layout of ``tabulate``'s "simple" format, which torch prints with; it
    strips the cells, so nested modules show unindented there too)."""
    widths = [max([len(h) + 2] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(headers), "  ".join("-" * w for w in widths)]
                     + [line(r) for r in rows])
