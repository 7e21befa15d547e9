"""``torch.distributed.checkpoint.state_dict``: with no sharded parameters (omnitensor has
no FSDP/DTensor), a model's distributed state dict is its ``state_dict()`` and an
optimizer's its ``state_dict()``, which is what torch returns for unsharded modules."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["StateDictOptions", "get_model_state_dict", "set_model_state_dict",
           "get_optimizer_state_dict", "set_optimizer_state_dict", "get_state_dict",
           "set_state_dict"]


@dataclass
class StateDictOptions:
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False


def _model_sd(model: Any, options: StateDictOptions | None) -> dict:
    sd = dict(model.state_dict())
    if options is not None and options.ignore_frozen_params:
        frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
        sd = {k: v for k, v in sd.items() if k not in frozen}
    if options is not None and options.cpu_offload:
        sd = {k: v.cpu() if hasattr(v, "cpu") else v for k, v in sd.items()}
    return sd


def get_model_state_dict(model: Any, *, submodules: Any = None,
                         options: StateDictOptions | None = None) -> dict:
    return _model_sd(model, options)


def set_model_state_dict(model: Any, model_state_dict: dict, *,
                         options: StateDictOptions | None = None) -> Any:
    strict = True if options is None else options.strict
    return model.load_state_dict(model_state_dict, strict=strict)


def get_optimizer_state_dict(model: Any, optimizers: Any, *, submodules: Any = None,
                             options: StateDictOptions | None = None) -> dict:
    opts = optimizers if isinstance(optimizers, (list, tuple)) else [optimizers]
    if len(opts) == 1:
        return opts[0].state_dict()
    return {"optimizers": [o.state_dict() for o in opts]}


def set_optimizer_state_dict(model: Any, optimizers: Any, optim_state_dict: dict, *,
                             options: StateDictOptions | None = None) -> None:
    opts = optimizers if isinstance(optimizers, (list, tuple)) else [optimizers]
    states = optim_state_dict["optimizers"] if len(opts) > 1 else [optim_state_dict]
    for o, s in zip(opts, states):
        o.load_state_dict(s)


def get_state_dict(model: Any, optimizers: Any, *, submodules: Any = None,
                   options: StateDictOptions | None = None) -> tuple[dict, dict]:
    return (get_model_state_dict(model, options=options),
            get_optimizer_state_dict(model, optimizers, options=options))


def set_state_dict(model: Any, optimizers: Any, *, model_state_dict: dict,
                   optim_state_dict: dict, options: StateDictOptions | None = None) -> Any:
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return set_model_state_dict(model, model_state_dict, options=options)
