"""``Module``'s state dicts: ``state_dict``, ``load_state_dict`` (strict or not, ``assign``)
and their hooks, as a mixin of :class:`omnitensor.nn.Module` (torch semantics)."""
from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import Any, Callable, NamedTuple

from ..core.graph import no_grad_ctx
from ..core.tensor import Tensor
from ..core.hooks import RemovableHandle
from .parameter import Parameter

__all__ = ["StateDictMixin", "IncompatibleKeys"]

#: one counter for every hook a module registers (shared with ``module.py``)
_hook_ids = itertools.count()


class IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` returns (torch's ``_IncompatibleKeys``)."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")


class StateDictMixin:
    """The state-dict half of ``Module`` (it uses the registries ``Module`` creates)."""

    # the registries Module.__init__ creates, declared for type checkers
    _parameters: dict[str, Any]
    _buffers: dict[str, Any]
    _non_persistent_buffers_set: set[str]
    _modules: dict[str, Any]
    _state_dict_hooks: dict[int, Callable]
    _load_state_dict_post_hooks: dict[int, Callable]

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def state_dict(self, *args: Any, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Tensor]:
        """Parameters and persistent buffers by dotted name (detached tensors that share
        storage with the module, unless ``keep_vars``)."""
        if args:
            raise TypeError("state_dict() takes keyword arguments only (destination=, "
                            "prefix=, keep_vars=)")
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            r = hook(self, destination, prefix)
            if r is not None:
                destination = r
        return destination

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list, assign: bool = False) -> None:
        """Copy this module's own entries of ``state_dict`` (overridable, as in torch)."""
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local = itertools.chain(self._parameters.items(), persistent.items())
        for name, param in local:
            key = prefix + name
            if param is None:
                continue
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected a '
                                  f'Tensor from checkpoint but received {type(value).__name__}')
                continue
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{tuple(value.shape)} from checkpoint, the shape in current "
                                  f"model is {tuple(param.shape)}.")
                continue
            try:
                with no_grad_ctx():
                    if assign:
                        if isinstance(param, Parameter):
                            new = value if isinstance(value, Parameter) else \
                                Parameter(value.detach(), param.requires_grad)
                            setattr(self, name, new)
                        else:
                            setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as e:  # noqa: BLE001 - reported with the key, like torch
                error_msgs.append(f'While copying the parameter named "{key}", whose '
                                  f'dimensions in the model are {tuple(param.shape)} and whose '
                                  f'dimensions in the checkpoint are {tuple(value.shape)}, an '
                                  f'exception occurred: {e}')
        if strict:
            # entries holding None (e.g. BatchNorm without running stats) are not state
            own = {k for k, v in itertools.chain(self._parameters.items(), persistent.items())
                   if v is not None}
            for key in state_dict:
                if key.startswith(prefix):
                    rest = key[len(prefix):]
                    head = rest.split(".", 1)[0]
                    if head not in self._modules and head not in own:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Any, strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` (any device: values are copied
        onto each parameter's device). With ``strict``, missing or unexpected keys raise a
        RuntimeError that lists them; shape mismatches always raise."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []

        def load(module: Any, prefix: str = "") -> None:
            module._load_from_state_dict(state_dict, prefix, {}, True, missing, unexpected,
                                         errors, assign)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")
        load(self)
        for hook in self._load_state_dict_post_hooks.values():
            hook(self, IncompatibleKeys(missing, unexpected))
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:"
                               f"\n\t" + "\n\t".join(errors))
        return IncompatibleKeys(missing, unexpected)

    def register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix)`` runs after ``state_dict``; it may return a
        replacement dict."""
        key = next(_hook_ids)
        self._state_dict_hooks[key] = hook
        return RemovableHandle(self._state_dict_hooks, hook, key)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after ``load_state_dict``."""
        key = next(_hook_ids)
        self._load_state_dict_post_hooks[key] = hook
        return RemovableHandle(self._load_state_dict_post_hooks, hook, key)
