"""torch's ``torch.utils`` tree: ``data`` (the data package), ``checkpoint``, ``hooks``,
``tensorboard``, ``_pytree``, ``model_zoo``, ``benchmark``, ``flop_counter``,
``module_tracker``, ``dlpack``, ``weak``, ``collect_env``, ``cpp_extension`` and
``mobile_optimizer`` (importable; their builders raise), ``deterministic``; each submodule is
imported on first use."""
from __future__ import annotations

import importlib
from typing import Any

_SUBMODULES = ("data", "checkpoint", "hooks", "tensorboard", "_pytree", "model_zoo",
               "benchmark", "flop_counter", "module_tracker", "dlpack", "weak",
               "collect_env", "cpp_extension", "mobile_optimizer", "deterministic")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBMODULES))
