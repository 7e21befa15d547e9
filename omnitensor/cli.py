"""The ``omnitensor`` command: ``info`` (backends, devices, dtype support, why a backend is
absent), ``conformance`` (certify a device against NumPy), ``demo`` and ``train-digits``
(train an MLP and a CNN on scikit-learn's digits on every device)."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from .backends import registry
from .cli_support import (CLIError, Progress, check_devices, guarded, split_list,
                          take_debug_flag)


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _host_routines(be: Any) -> list[str]:
    """linalg/fft routines the backend has no native version of (they run on the host)."""
    from .backends.base import FFT, LINALG
    out = []
    native = set(be.native_routines("linalg"))
    missing = [n for n in LINALG if n not in native]
    if missing:
        out.append("linalg." + "/".join(missing))
    if len(be.native_routines("fft")) < len(FFT):
        out.append("fft.*")
    return out


def _installed(type_: str) -> str:
    """`` (pyopencl 2026.1 installed)`` for a backend whose packages (its declaration in
    the registry) are installed, read from package metadata: nothing is imported."""
    from importlib import metadata
    found = []
    for dist in registry.spec(type_).packages:
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
        install = f"pip install 'omnitensor[{be.pip_extra}]'" if be.pip_extra else "built in"
        lines.append(f"  {'':<9} {install}; collectives: {be.collective_transport}")
        for i in range(be.device_count()):
            d = be.device_info(i)
            name = registry.spec(type_).device_name(i)
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
        host_ops = list(be.host_fallback_ops)
        host_ops += _host_routines(be)
        if host_ops:
            lines.append(f"  runs on the host (no device kernel yet): {', '.join(host_ops)}")
    return "\n".join(lines)


def demo() -> int:
    """The same small computation on every device, checked against cpu
    (``omnitensor/demos/device_demo.py``)."""
    from .demos.device_demo import main as run
    return run()


def train_digits(argv: list[str]) -> int:
    """Run the digits training job (``omnitensor/demos/train_digits.py``) with ``argv``."""
    from .demos.train_digits import run
    return int(run(argv))


EXAMPLES = """examples:
  omnitensor info                                   backends, devices, what to install
  omnitensor train-digits --device opencl:0         the digits MLP and CNN on one device
  omnitensor conformance --device cpu,sycl:0 --op add,matmul,conv2d
  omnitensor conformance --json cert.json           a certificate of every op, every device
every error is one line; --debug (anywhere) or OMNITENSOR_DEBUG=1 shows the traceback"""


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``omnitensor`` command (and ``python -m omnitensor``)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    debug, argv = take_debug_flag(argv)
    cmd = next((a for a in argv if not a.startswith("-")), "")
    return guarded(f"omnitensor {cmd}".strip(), lambda: _dispatch(argv), debug)


def _dispatch(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="omnitensor", description=__doc__, epilog=EXAMPLES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error (also OMNITENSOR_DEBUG=1)")
    sub = parser.add_subparsers(dest="cmd")
    sub.add_parser("info", help="backends, devices, dtype support")
    sub.add_parser("demo", help="a short demo on every available device")
    conf = sub.add_parser("conformance", help="check every op on a device against NumPy")
    conf.add_argument("--device", action="append",
                      help="device(s) to check, repeatable or comma-separated (default: all)")
    conf.add_argument("--op", action="append",
                      help="only these ops, repeatable or comma-separated (add,matmul,conv2d)")
    conf.add_argument("--no-progress", action="store_true",
                      help="no progress line with the ETA on standard error")
    conf.add_argument("-v", "--verbose", action="store_true")
    conf.add_argument("--consistency", action="store_true",
                      help="also compare float32 results across devices and with float64 "
                           "(a fixed set of ops and seeded draws, whatever --op says)")
    conf.add_argument("--torch", action="store_true",
                      help="compare with PyTorch instead: torch's OpInfo samples (forward, "
                           "gradients, error inputs; needs torch installed); --op takes "
                           "OpInfo names (addmm, nn.functional.*)")
    conf.add_argument("--json", metavar="PATH",
                      help="write a machine-readable certificate (versions, devices, per-op "
                           "results) to PATH ('-' for standard output)")
    sub.add_parser("train-digits", add_help=False,
                   help="train an MLP and a CNN on scikit-learn's digits on every device "
                        "(options: omnitensor train-digits --help)")
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
        return demo()
    if args.cmd == "conformance":
        return conformance(args)
    return 2


def conformance(args: argparse.Namespace) -> int:
    """``omnitensor conformance``: the op table on each device (exit 1 on a failure, 2 on a
    bad argument), optionally the consistency table and a JSON certificate."""
    from .conformance import run
    from .conformance.runner import pair_count
    args.op = split_list(args.op)
    devs = check_devices(args.device)
    if args.torch:
        return _torch_conformance(args, devs)
    try:
        total = pair_count(args.op) * len(devs)
    except ValueError as e:  # an unknown --op
        raise CLIError(str(e).removeprefix("conformance: ")) from None
    bar = None if args.no_progress else Progress(total, "conformance", every=50)
    progress = None if bar is None else (lambda dev, op, dt: bar.step(f"{dev} {op} {dt}"))
    try:
        if args.json:
            from .conformance.certificate import build, write
            cert = build(devs, args.op, consistency=args.consistency, progress=progress)
            write(cert, args.json)
            failures = sum(e["failed"] for e in cert["devices"])
            if args.json != "-":
                for rec in cert["devices"]:
                    print(f"{rec['device']}: {rec['passed']}/{rec['total']} op-dtype pairs "
                          f"match NumPy, {rec['skipped']} skipped")
                print(f"certificate written to {args.json}")
        else:
            failures = sum(run(d, args.op, args.verbose, progress) for d in devs)
    finally:
        if bar is not None:
            bar.close()
    if args.consistency and not args.json:
        from .conformance.consistency import format_table, measure
        print(format_table(measure(devs)))
    elif args.consistency and args.json != "-":
        from .conformance.consistency import format_table
        print(format_table(cert["consistency"]))
    return 1 if failures else 0


def _torch_conformance(args: argparse.Namespace, devs: list[str]) -> int:
    """``omnitensor conformance --torch``: torch's OpInfo checks on each device, the
    figures table, the failing checks, and optionally the certificate (exit 1 on a
    failure, 2 without torch or on a bad --op)."""
    from .conformance.certificate import build_torch, write
    from .conformance.torch_opinfo import TorchUnavailable, print_check, table

    def show(r: Any) -> None:
        print_check(r, bool(args.verbose))
    try:
        cert = build_torch(devs, args.op, progress=None if args.json == "-" else show)
    except TorchUnavailable as e:
        print(f"omnitensor conformance --torch: {e}", file=sys.stderr)
        return 2
    except ValueError as e:  # an --op that matches no OpInfo
        print(f"omnitensor conformance --torch: {e}", file=sys.stderr)
        return 2
    if args.json:
        write(cert, args.json)
    if args.json != "-":
        print(table(cert["torch_opinfo"]["figures"]))
        if args.json:
            print(f"certificate written to {args.json}")
    return 0 if cert["passed"] else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
