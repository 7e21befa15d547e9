"""``Module``'s state dicts: ``state_dict``, ``load_state_dict`` (strict or not, ``assign``),
their hooks (pre and post, public and torch's private ``_register_*`` forms), the
per-module ``_metadata`` versions and ``get_extra_state``/``set_extra_state``, as a mixin
of :class:`omnitensor.nn.Module` (torch semantics: libraries override
``_load_from_state_dict`` and read ``local_metadata["version"]``)."""
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
    _state_dict_pre_hooks: dict[int, Callable]
    _load_state_dict_pre_hooks: dict[int, Callable]
    _load_state_dict_post_hooks: dict[int, Callable]
    #: the state-dict format version of a class, saved in ``_metadata`` (torch's
    #: ``_version``); a class that changes its layout bumps it and converts in
    #: ``_load_from_state_dict``
    _version: int = 1

    def get_extra_state(self) -> Any:
        """State beyond parameters and buffers, saved under ``_extra_state`` when a
        subclass overrides this (and :meth:`set_extra_state`)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called: override get_extra_state() to save extra state")

    def set_extra_state(self, state: Any) -> None:
        """Restore what :meth:`get_extra_state` returned."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called: override set_extra_state() to load extra state")

    def _has_extra_state(self) -> bool:
        return type(self).get_extra_state is not StateDictMixin.get_extra_state

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if self._has_extra_state():
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Tensor]:
        """Parameters and persistent buffers by dotted name (detached tensors that share
        storage with the module, unless ``keep_vars``)."""
        if args:
            raise TypeError("state_dict() takes keyword arguments only (destination=, "
                            "prefix=, keep_vars=)")
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            r = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if r is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif r is not None:
                destination = r
        return destination

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list, assign: bool = False) -> None:
        """Copy this module's own entries of ``state_dict`` (overridable, as in torch)."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
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
                    if head not in self._modules and head not in own and not (
                            rest == "_extra_state" and self._has_extra_state()):
                        unexpected_keys.append(key)
        extra_key = prefix + "_extra_state"
        if self._has_extra_state():
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)

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

        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)  # hooks may edit it: the caller's stays whole
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module: Any, prefix: str = "") -> None:
            local = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local["assign_to_params_buffers"] = assign
            module._load_from_state_dict(state_dict, prefix, local, True, missing, unexpected,
                                         errors, assign)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")
            # every module's post hooks, as torch (they may edit the key lists in place)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, IncompatibleKeys(missing, unexpected)) is not None:
                    raise AssertionError("Hooks registered with "
                                         "``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values; modify "
                                         "incompatible_keys in place")
        load(self)
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

    @staticmethod
    def _add_hook(registry: dict, hook: Callable) -> RemovableHandle:
        key = next(_hook_ids)
        registry[key] = hook
        return RemovableHandle(registry, hook, key)

    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` runs after ``state_dict``;
        it may return a replacement dict (torch's private form, used by libraries)."""
        return self._add_hook(self._state_dict_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` runs after ``state_dict``
        and edits it in place (returning a value is an error, as in torch)."""
        def public(*args: Any) -> Any:
            return hook(*args)
        public._from_public_api = True  # type: ignore[attr-defined]
        return self._add_hook(self._state_dict_hooks, public)

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs before ``state_dict`` saves."""
        return self._add_hook(self._state_dict_pre_hooks, hook)

    def _register_load_state_dict_pre_hook(self, hook: Callable,
                                           with_module: bool = False) -> RemovableHandle:
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before this module loads its entries (with
        ``with_module`` the module comes first); it may edit ``state_dict`` in place."""
        if with_module:
            module, inner = self, hook

            def hook(*args: Any) -> Any:
                return inner(module, *args)
        return self._add_hook(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before this module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after ``load_state_dict``; it may edit
        the key lists in place."""
        return self._add_hook(self._load_state_dict_post_hooks, hook)
