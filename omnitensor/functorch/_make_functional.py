"""functorch's stateless-module API: ``make_functional``,
``make_functional_with_buffers``, ``combine_state_for_ensemble`` (written on
:func:`omnitensor.func.functional_call` and :func:`omnitensor.func.stack_module_state`).
"""
from __future__ import annotations

import copy
from typing import Any

from ..func.module import functional_call, stack_module_state

__all__ = ["make_functional", "make_functional_with_buffers", "combine_state_for_ensemble",
           "FunctionalModule", "FunctionalModuleWithBuffers"]


class FunctionalModule:
    """``fmodel(params, *args, **kwargs)``: a copy of a module called with the given
    parameters (in ``named_parameters`` order)."""

    def __init__(self, stateless_model: Any, param_names: tuple[str, ...]) -> None:
        self.stateless_model = stateless_model
        self.param_names = param_names

    def __call__(self, params: Any, *args: Any, **kwargs: Any) -> Any:
        _check_count("params", params, self.param_names)
        return functional_call(self.stateless_model, dict(zip(self.param_names, params)),
                               args, kwargs)


class FunctionalModuleWithBuffers:
    """``fmodel(params, buffers, *args, **kwargs)``, as :class:`FunctionalModule` with the
    buffers passed too."""

    def __init__(self, stateless_model: Any, param_names: tuple[str, ...],
                 buffer_names: tuple[str, ...]) -> None:
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names

    def __call__(self, params: Any, buffers: Any, *args: Any, **kwargs: Any) -> Any:
        _check_count("params", params, self.param_names)
        _check_count("buffers", buffers, self.buffer_names)
        state = {**dict(zip(self.param_names, params)),
                 **dict(zip(self.buffer_names, buffers))}
        return functional_call(self.stateless_model, state, args, kwargs)


def _check_count(what: str, given: Any, names: tuple) -> None:
    if len(given) != len(names):
        raise RuntimeError(f"functional module: expected {len(names)} {what}, got "
                           f"{len(given)}")


def _params(model: Any, disable_autograd_tracking: bool) -> tuple[tuple[str, ...], tuple]:
    names, params = zip(*model.named_parameters()) if list(model.parameters()) else ((), ())
    if disable_autograd_tracking:
        params = tuple(p.detach() for p in params)
    return tuple(names), tuple(params)


def make_functional(model: Any, disable_autograd_tracking: bool = False) -> tuple:
    """``(fmodel, params)``: ``fmodel(params, *args)`` runs a copy of ``model`` with
    ``params`` (the copy's own parameters, as functorch)."""
    if list(model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    stateless = copy.deepcopy(model)
    names, params = _params(stateless, disable_autograd_tracking)
    return FunctionalModule(stateless, names), params


def make_functional_with_buffers(model: Any, disable_autograd_tracking: bool = False
                                 ) -> tuple:
    """``(fmodel, params, buffers)``: ``fmodel(params, buffers, *args)``."""
    stateless = copy.deepcopy(model)
    names, params = _params(stateless, disable_autograd_tracking)
    named_buffers = list(stateless.named_buffers())
    buffer_names = tuple(n for n, _ in named_buffers)
    buffers = tuple(b for _, b in named_buffers)
    return FunctionalModuleWithBuffers(stateless, names, buffer_names), params, buffers


def combine_state_for_ensemble(models: Any) -> tuple:
    """``(fmodel, params, buffers)`` for an ensemble of same-class models: their
    parameters and buffers stacked (``vmap(fmodel)(params, buffers, x)``)."""
    params, buffers = stack_module_state(models)
    fmodel = FunctionalModuleWithBuffers(copy.deepcopy(list(models)[0]), tuple(params),
                                         tuple(buffers))
    return fmodel, tuple(params.values()), tuple(buffers.values())
