"""Modules as functions of their state: ``functional_call``, ``stack_module_state``,
``replace_all_batch_norm_modules_``, and ``functionalize``/``debug_unwrap``."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..core.ops.join import stack
from ..core.tensor import Tensor

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_",
           "functionalize", "debug_unwrap"]

_MISSING = object()


def _merge(dicts: Any) -> dict[str, Any]:
    if isinstance(dicts, dict):
        return dict(dicts)
    if not isinstance(dicts, (tuple, list)) or not all(isinstance(d, dict) for d in dicts):
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(dicts)}")
    merged: dict[str, Any] = {}
    dup = sorted({k for i, d in enumerate(dicts) for k in d
                  if any(k in other for other in dicts[:i])})
    if dup:
        raise ValueError(f"{dup} appeared in multiple dictionaries; behavior of functional "
                         f"call is ambiguous")
    for d in dicts:
        merged.update(d)
    return merged


def _tie(module: Any, values: dict[str, Any]) -> dict[str, Any]:
    """Names sharing one tensor in ``module`` (tied weights) all get the value given for
    any of them."""
    groups: dict[int, list[str]] = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        groups.setdefault(id(t), []).append(name)
    out = dict(values)
    for names in groups.values():
        given = [n for n in names if n in values]
        if len(names) < 2 or not given:
            continue
        if len({id(values[n]) for n in given}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {given}, which "
                             f"are tied. Consider using tie_weights=False")
        for n in names:
            out[n] = values[given[0]]
    return out


def _check_strict(module: Any, values: dict[str, Any]) -> None:
    names = {n for n, _ in module.named_parameters(remove_duplicate=False)} | \
        {n for n, _ in module.named_buffers(remove_duplicate=False)}
    unexpected = sorted(set(values) - names)
    missing = sorted(names - set(values))
    if unexpected or missing:
        msgs = []
        if unexpected:
            msgs.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
        if missing:
            msgs.append("Missing key(s): " + ", ".join(repr(k) for k in missing) + ".")
        raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" +
                           "\n\t".join(msgs))


def _swap(module: Any, name: str, value: Any) -> Callable[[], None]:
    """Put ``value`` at dotted ``name`` (a parameter, buffer or plain attribute); returns
    the function that restores what was there."""
    owner_name, _, attr = name.rpartition(".")
    owner = module.get_submodule(owner_name) if owner_name else module
    for slot in (owner._parameters, owner._buffers):
        if attr in slot:
            old = slot[attr]
            slot[attr] = value  # the module's lookups read these dicts; no Parameter check

            def restore_slot(slot: dict = slot, old: Any = old) -> None:
                slot[attr] = old
            return restore_slot
    prev = owner.__dict__.get(attr, _MISSING)
    object.__setattr__(owner, attr, value)

    def restore_attr() -> None:
        if prev is _MISSING:
            owner.__dict__.pop(attr, None)
        else:
            object.__setattr__(owner, attr, prev)
    return restore_attr


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with its parameters and buffers (by dotted
    ``state_dict`` name) replaced by the given tensors: one dict, or several (a tuple, e.g.
    ``(params, buffers)``) with distinct keys. Tied weights follow each other
    (``tie_weights``); ``strict`` requires every parameter and buffer and nothing else. The
    module is restored afterwards, even on error."""
    values = _merge(parameter_and_buffer_dicts)
    if tie_weights:
        values = _tie(module, values)
    if strict:
        _check_strict(module, values)
    restores = []
    try:
        for name, value in values.items():
            restores.append(_swap(module, name, value))
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for restore in reversed(restores):
            restore()


def _stacked(tensors: list, name: str, detach_grad: bool) -> Tensor:
    if detach_grad:
        flags = {t.requires_grad for t in tensors}
        if len(flags) != 1:
            raise RuntimeError(f"Expected {name} from each model to have the same "
                               f".requires_grad")
        return stack([t.detach() for t in tensors]).requires_grad_(flags.pop())
    return stack([t.detach() for t in tensors])


def stack_module_state(models: Sequence[Any]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """``(params, buffers)``: each model's parameters and buffers stacked along a new first
    dimension, by name (for ``vmap(functional_call)`` over a model ensemble). The stacked
    parameters are new leaves (requiring grad as the models' do)."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not all(m.training == models[0].training for m in models):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    per_model = [(dict(m.named_parameters()), dict(m.named_buffers())) for m in models]
    names = (list(per_model[0][0]), list(per_model[0][1]))
    for p, b in per_model:
        if list(p) != names[0] or list(b) != names[1]:
            raise RuntimeError("stack_module_state: Expected all models to have the same "
                               "parameters and buffers (by name)")
    params = {n: _stacked([p[n] for p, _ in per_model], n, True) for n in names[0]}
    buffers = {n: _stacked([b[n] for _, b in per_model], n, False) for n in names[1]}
    return params, buffers


def replace_all_batch_norm_modules_(root: Any) -> Any:
    """Make every batch-norm module under ``root`` use batch statistics (no running stats:
    ``running_mean``/``running_var``/``num_batches_tracked`` None,
    ``track_running_stats=False``), so it can run under ``vmap``; returns ``root``."""
    from ..nn.normalization import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm):
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """torch's ``functionalize``: the same function. omnitensor runs it eagerly with no
    functionalization pass; the results (values, gradients, mutated inputs) are those of
    ``func``, which is what functionalization preserves."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument "
                           f"for remove={remove}. Valid options are:\n     remove='mutations'"
                           f"\n     remove='mutations_and_views'")

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)
    wrapper.__wrapped__ = func  # type: ignore[attr-defined]
    return wrapper


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """The tensor itself: omnitensor's transforms wrap nothing."""
    return tensor
