"""The ``omnitensor`` command: ``info`` (backends, devices, dtype support, why a backend is
absent), ``conformance`` (certify a device against NumPy), ``demo`` and ``train-digits``
(train an MLP and a CNN on scikit-learn's digits on every device)."""
from __future__ import annotations

import argparse
import sys
from .backends import registry


def _fmt_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _host_routines(be: object) -> list[str]:
    """linalg/fft routines the backend has no native version of (they run on the host)."""
    from .backends.namespace_backend import FFT, LINALG
    out = []
    missing = [n for n in LINALG if getattr(be, "linalg_" + n, None) is None]
    if missing:
        out.append("linalg." + "/".join(missing))
    if any(getattr(be, "fft_" + n, None) is None for n in FFT):
        out.append("fft.*")
    return out


#: the distributions a backend needs, to report their versions when it finds no device
_BACKEND_PACKAGES = {"opencl": ("pyopencl", "pocl-binary-distribution"),
                     "sycl": ("dpctl", "dpnp"), "cuda": ("cupy-cuda12x", "cupy-cuda13x",
                                                         "cupy", "cupy-rocm-6-0")}


def _installed(type_: str) -> str:
    """`` (pyopencl 2026.1 installed)`` for a backend whose packages are installed (read
    from package metadata: nothing is imported)."""
    from importlib import metadata
    found = []
    for dist in _BACKEND_PACKAGES.get(type_, ()):
        try:
            found.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            pass
    return f" ({', '.join(found)} installed)" if found else ""


def info_report() -> str:
    """The text ``omnitensor info`` prints."""
    from . import __version__
    import numpy as np
    lines = [f"omnitensor {__version__} (numpy {np.__version__}, python "
             f"{sys.version.split()[0]})", ""]
    for type_ in registry.device_types():
        be, why = registry.try_backend(type_)
        if be is None:
            lines.append(f"{type_:<7} absent{_installed(type_)}: {why}")
            continue
        lines.append(f"{type_:<7} {be.version()}")
        for i in range(be.device_count()):
            d = be.device_info(i)
            name = f"{type_}:{i}" if type_ != "cpu" else "cpu"
            extras = [f"fp16 {'yes' if d.get('fp16') else 'no'}",
                      f"fp64 {'yes' if d.get('fp64') else 'no'}"]
            if d.get("compute_units"):
                extras.insert(0, f"{d['compute_units']} compute units")
            if d.get("memory"):
                extras.insert(0, _fmt_bytes(int(d["memory"])))
            plat = f" [{d['platform']}]" if d.get("platform") else ""
            lines.append(f"  {name:<9} {d.get('name', '?')}{plat}: {', '.join(extras)}")
            notes = d.get("notes") or []
            for note in [notes] if isinstance(notes, str) else notes:
                lines.append(f"            {note}")
        host_ops = list(getattr(be, "host_fallback_ops", ()) or ())
        host_ops += _host_routines(be)
        if host_ops:
            lines.append(f"  runs on the host (no device kernel yet): {', '.join(host_ops)}")
    return "\n".join(lines)


def demo() -> None:
    """A short computation on every available device, checked against the cpu result."""
    import omnitensor as ot
    ot.manual_seed(0)
    ref = None
    for dev in ot.devices():
        x = ot.randn(256, 256, device=dev)
        w = ot.randn(256, 64, device=dev, requires_grad=True)
        loss = ((x @ w).tanh() ** 2).mean()
        loss.backward()
        val = loss.item()
        gnorm = w.grad.norm().item()
        ok = "" if ref is None else ("  (matches cpu)" if abs(val - ref) < 1e-4 * max(1, ref)
                                     else "  (DIFFERS from cpu!)")
        ref = val if ref is None else ref
        print(f"{str(dev):<9} loss {val:.6f}  |grad| {gnorm:.6f}{ok}")


def train_digits(argv: list[str]) -> int:
    """Run the digits training job (``omnitensor/demos/train_digits.py``) with ``argv``."""
    from .demos.train_digits import main as run
    return int(run(argv))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="omnitensor", description=__doc__)
    sub = parser.add_subparsers(dest="cmd")
    sub.add_parser("info", help="backends, devices, dtype support")
    sub.add_parser("demo", help="a short demo on every available device")
    conf = sub.add_parser("conformance", help="check every op on a device against NumPy")
    conf.add_argument("--device", action="append", help="device(s) to check (default: all)")
    conf.add_argument("--op", action="append", help="only these ops")
    conf.add_argument("-v", "--verbose", action="store_true")
    sub.add_parser("train-digits", add_help=False,
                   help="train an MLP and a CNN on scikit-learn's digits on every device "
                        "(options: omnitensor train-digits --help)")
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "train-digits":
        return train_digits(argv[1:])
    args = parser.parse_args(argv)
    if args.cmd == "info" or args.cmd is None:
        try:
            print(info_report(), flush=True)
        except BrokenPipeError:  # `omnitensor info | head`: the reader left, not an error
            sys.stdout = None  # nothing left to flush at exit
        return 0
    if args.cmd == "demo":
        demo()
        return 0
    if args.cmd == "conformance":
        import omnitensor as ot
        from .conformance import run
        devs = args.device or [str(d) for d in ot.devices()]
        failures = sum(run(d, args.op, args.verbose) for d in devs)
        return 1 if failures else 0
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
