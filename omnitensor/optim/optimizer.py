"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad``, state dicts.

Updates run under no_grad with in-place Tensor ops, so optimizer state (momentum buffers,
moment estimates) lives on each parameter's device and a step never moves data. Step
counts are Python numbers, so no step needs a host synchronization.

Each update is one formula written against an op namespace, chosen by :func:`update_ops`:
the trusted ops of ``core/trusted.py`` when the parameter, its gradient and its state
share one device, dtype and shape (nothing is left to validate: torch's ``foreach`` idea
without a second implementation), else the checked Tensor methods (``foreach=False``,
or a loaded state dict of another dtype).
"""
from __future__ import annotations

import copy
from collections import defaultdict
from typing import Any, Callable, Iterable, Iterator

from ..core.graph import set_grad_enabled_raw
from ..core.tensor import Tensor
from ..core.trusted import inplace_ops_for

__all__ = ["Optimizer", "required", "update_ops"]


#: The op namespace for an in-place update of a parameter from its gradient and state
#: (``update_ops(p, grad, *state)``, None entries skipped): the trusted ops when all match
#: ``p``'s device, floating dtype and shape, else ``Tensor`` (the checked ops).
update_ops = inplace_ops_for


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class: ``params`` is an iterable of Tensors or of dicts (parameter groups with
    per-group options overriding ``defaults``)."""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got a Tensor")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (with its own options) to optimize."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params "
                                f"is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group)
        group["params"] = params
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params) or len({id(p) for p in params}) != len(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset gradients: to None (default; the next backward allocates fresh ones) or to
        zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g = g.detach()
                        p.grad = g
                    g.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter (subclasses implement ``_step``)."""
        loss = None
        if closure is not None:
            prev = set_grad_enabled_raw(True)
            try:
                loss = closure()
            finally:
                set_grad_enabled_raw(prev)
        prev = set_grad_enabled_raw(False)
        try:
            self._step()
        finally:
            set_grad_enabled_raw(prev)
        return loss

    @staticmethod
    def _grads(group: dict[str, Any]) -> Iterator[tuple[Tensor, Tensor]]:
        """``(param, gradient)`` for the group's parameters that have a gradient, the
        gradient negated when the group has ``maximize``."""
        for p in group["params"]:
            g = p.grad
            if g is not None:
                yield p, (-g if group.get("maximize") else g)

    def _step(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # ------------------------------------------------------------------ state dicts
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``
        with parameters numbered in group order (torch's format)."""
        index: dict[int, int] = {}
        groups = []
        start = 0
        for g in self.param_groups:
            for i, p in enumerate(g["params"], start):
                if id(p) not in index:
                    index[id(p)] = i
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in g["params"]]
            start += len(g["params"])
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore options and state; state tensors are copied onto each parameter's
        device (floating ones cast to its dtype), so a checkpoint loads anywhere."""
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError(f"loaded state dict has a different number of parameter groups "
                             f"({len(saved_groups)} vs {len(groups)})")
        for i, (g, sg) in enumerate(zip(groups, saved_groups)):
            if len(g["params"]) != len(sg["params"]):
                raise ValueError(f"loaded state dict contains a parameter group {i} that "
                                 f"doesn't match the size of optimizer's group "
                                 f"({len(sg['params'])} vs {len(g['params'])} parameters)")
        id_map = {}
        for g, sg in zip(groups, saved_groups):
            for p, idx in zip(g["params"], sg["params"]):
                id_map[idx] = p
        new_state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            key = int(k) if isinstance(k, str) and k.isdigit() else k
            if key not in id_map:
                continue
            p = id_map[key]
            new_state[p] = {name: _cast_state(p, name, value) for name, value in v.items()}
        self.state = new_state
        new_groups = []
        for g, sg in zip(groups, saved_groups):
            ng = {k: copy.copy(v) for k, v in sg.items() if k != "params"}
            ng["params"] = g["params"]
            new_groups.append(ng)
        self.param_groups = new_groups

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(g):
                if k != "params":
                    lines.append(f"    {k}: {g[k]}")
        lines.append(")")
        return "\n".join(lines)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def _cast_state(p: Tensor, name: str, value: Any) -> Any:
    if isinstance(value, Tensor):
        if name == "step":
            return value
        if p.dtype.kind in "fc" and value.dtype.kind in "fc":
            return value.to(device=p.device, dtype=p.dtype).detach().clone()
        return value.to(p.device).detach().clone()
    if isinstance(value, dict):
        return {k: _cast_state(p, k, v) for k, v in value.items()}
    return value
