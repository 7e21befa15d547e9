"""Per-rank torchrun environment, then the user's program (what ``omnitensor-run`` starts).

``mpiexec`` gives every rank the same environment plus its launcher's own variables
(``OMPI_COMM_WORLD_RANK``, ``PMI_RANK``, ``SLURM_PROCID``...). Scripts written for torchrun
read ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE`` (and ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``,
``MASTER_PORT``) before they call ``init_process_group``, so each rank runs

    python -m omnitensor.distributed.rank_env (script.py | -m module | --exec program) args

which derives those variables from the launcher's (without initialising MPI) and then runs
the script as ``__main__`` (``runpy``), or replaces itself with ``program``. A variable the
user set already is kept.
"""
from __future__ import annotations

import os
import runpy
import sys
from typing import MutableMapping, Sequence

__all__ = ["torchrun_env", "main"]

#: torchrun variable -> the launchers' variables that carry it, in order of preference
_SOURCES = {
    "RANK": ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"),
    "WORLD_SIZE": ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"),
    "LOCAL_RANK": ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"),
    "LOCAL_WORLD_SIZE": ("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                         "SLURM_NTASKS_PER_NODE"),
}
#: torch's defaults for the rendezvous address (MPI does the rendezvous; scripts read them)
DEFAULT_MASTER_ADDR = "127.0.0.1"
DEFAULT_MASTER_PORT = "29500"


def torchrun_env(env: MutableMapping[str, str]) -> dict[str, str]:
    """Fill torchrun's variables in ``env`` from the MPI launcher's; returns what was set.
    Without a launcher (a plain ``python`` run) the job is one rank: RANK=0, WORLD_SIZE=1."""
    added: dict[str, str] = {}
    for var, sources in _SOURCES.items():
        if env.get(var, "").strip():
            continue
        value = next((env[s] for s in sources if env.get(s, "").strip()), None)
        if value is None:
            value = {"RANK": "0", "LOCAL_RANK": "0"}.get(var) or env.get("WORLD_SIZE") or "1"
        added[var] = env[var] = value.strip()
    for var, default in (("MASTER_ADDR", DEFAULT_MASTER_ADDR),
                         ("MASTER_PORT", DEFAULT_MASTER_PORT)):
        if not env.get(var, "").strip():
            added[var] = env[var] = default
    if not env.get("GROUP_RANK", "").strip():  # the node's index (torchrun's GROUP_RANK)
        try:
            per_node = max(1, int(env["LOCAL_WORLD_SIZE"]))
            added["GROUP_RANK"] = env["GROUP_RANK"] = str(int(env["RANK"]) // per_node)
        except ValueError:
            pass
    return added


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m omnitensor.distributed.rank_env "
              "(script.py | -m module | --exec program) [args...]", file=sys.stderr)
        return 2
    torchrun_env(os.environ)
    if args[0] == "--exec":
        if len(args) < 2:
            print("omnitensor rank_env: --exec needs a program", file=sys.stderr)
            return 2
        os.execvp(args[1], args[1:])  # does not return
    if args[0] == "-m":
        if len(args) < 2:
            print("omnitensor rank_env: -m needs a module", file=sys.stderr)
            return 2
        sys.argv = [args[1]] + args[2:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        return 0
    script = args[0]
    sys.argv = args
    # as ``python script.py`` does: the script's directory first on the import path
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
