"""``torch.nn.utils.prune``: masks on a module's parameters, reapplied before each forward.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, registers a buffer
``<name>_mask`` and a forward pre-hook (the pruning method itself) that sets the plain
attribute ``<name> = <name>_mask * <name>_orig``; pruning the same tensor again combines
the methods in a :class:`PruningContainer`, the new mask computed only on what the old one
kept. :func:`remove` makes the pruning permanent. The methods and their masks follow
torch's definitions (the random ones draw from omnitensor's generator, not torch's).
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from typing import Any, Iterable

from ...core.tensor import Tensor
from ..module import Module

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask",
           "identity", "random_unstructured", "l1_unstructured", "random_structured",
           "ln_structured", "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


def _ot() -> Any:
    import omnitensor
    return omnitensor


class BasePruningMethod(ABC):
    """A way to compute a mask; as a forward pre-hook it reapplies the mask."""

    PRUNING_TYPE = "unstructured"
    _tensor_name: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for ``t``, given the mask already applied (``default_mask``)."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_mask * <name>_orig`` of ``module``."""
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any, importance_scores: Any = None,
              **kwargs: Any) -> "BasePruningMethod":
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)`` (see the module doc)."""
        old = _take_old_method(module, name)
        method: BasePruningMethod = cls(*args, **kwargs)
        method._tensor_name = name
        if isinstance(old, PruningContainer):
            old.add_pruning_method(method)
            method = old
        elif old is not None:
            container = PruningContainer(old)
            container.add_pruning_method(method)
            method = container
        orig = getattr(module, name)
        scores = orig if importance_scores is None else importance_scores
        if scores.shape != orig.shape:
            raise ValueError(f"importance_scores should have the same shape as parameter "
                             f"{name} of {module}")
        if old is None:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = _ot().ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if old is None:  # put the parameter back as it was
                kept = getattr(module, name + "_orig")
                del module._parameters[name + "_orig"]
                module.register_parameter(name, kept)
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """``t`` times its mask (computed on ``importance_scores`` when given)."""
        scores = t if importance_scores is None else importance_scores
        if default_mask is None:
            default_mask = _ot().ones_like(t)
        return t * self.compute_mask(scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` a parameter again, holding the masked
        values; ``<name>_orig``, ``<name>_mask`` and the hook go."""
        name = self._tensor_name
        if name + "_orig" not in module._parameters:
            raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before "
                             f"pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = weight.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _take_old_method(module: Module, name: str) -> BasePruningMethod | None:
    """The pruning hook already on ``module.<name>`` (removed from the hooks), or None."""
    found = [(k, h) for k, h in module._forward_pre_hooks.items()
             if isinstance(h, BasePruningMethod) and h._tensor_name == name]
    if len(found) > 1:
        raise RuntimeError(f"Avoid adding multiple pruning hooks to the same tensor {name} of "
                           f"module {module}. Use a PruningContainer.")
    for k, _ in found:
        del module._forward_pre_hooks[k]
    return found[0][1] if found else None


class PruningContainer(BasePruningMethod):
    """Successive pruning of one tensor: each new method masks only what is still kept."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1 and not isinstance(args[0], BasePruningMethod):
            args = tuple(args[0])
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and hasattr(self, "_tensor_name") and \
                self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        if method is not None:
            self._tensor_name = method._tensor_name
            self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Any:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, computed on the entries (unstructured) or channels
        (structured) ``default_mask`` keeps, combined with ``default_mask``."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            slc: Any = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to "
                                     "have the attribute `dim` defined.")
            n_dims = t.dim()
            dim = method.dim if method.dim >= 0 else n_dims + method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor of dimension {n_dims}")
            keep = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            parts: list[Any] = [slice(None)] * n_dims
            parts[dim] = keep
            slc = tuple(parts)
        elif method.PRUNING_TYPE == "global":
            slc = tuple([slice(None)] * t.dim())
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Keeps everything (the mask of ones)."""

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> "BasePruningMethod":  # type: ignore[override]
        return super().apply(module, name)


def _check_amount(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or \
            (not isinstance(amount, numbers.Integral) and (float(amount) > 1.0
                                                           or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or "
                         f"a non-negative integer")


def _n_to_prune(amount: Any, size: int) -> int:
    """How many of ``size`` entries ``amount`` (a count, or a fraction) prunes."""
    if isinstance(amount, numbers.Integral):
        if int(amount) > size:
            raise ValueError(f"amount={amount} should be smaller than the number of "
                             f"parameters to prune={size}")
        return int(amount)
    return round(amount * size)


def _zero_extremes(default_mask: Tensor, scores: Tensor, amount: Any,
                   largest: bool) -> Tensor:
    """``default_mask`` with the entries of the ``amount`` largest (or smallest) scores
    zeroed, as torch's unstructured methods pick them (``topk`` of the flat scores)."""
    k = _n_to_prune(amount, scores.numel())
    mask = default_mask.clone()
    if k:
        idx = _ot().topk(scores.reshape(-1), k=k, largest=largest).indices
        mask.view(-1)[idx] = 0
    return mask


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries chosen at random."""

    def __init__(self, amount: Any) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _zero_extremes(default_mask, _ot().rand_like(t), self.amount, largest=True)

    @classmethod
    def apply(cls, module: Module, name: str, amount: Any) -> "BasePruningMethod":  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries of smallest absolute value."""

    def __init__(self, amount: Any) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _zero_extremes(default_mask, t.abs(), self.amount, largest=False)

    @classmethod
    def apply(cls, module: Module, name: str, amount: Any,  # type: ignore[override]
              importance_scores: Any = None) -> "BasePruningMethod":
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t: Tensor, dim: int, channels: Tensor) -> Tensor:
    """Ones on the ``channels`` (indices or a boolean mask) of ``dim``, zeros elsewhere."""
    mask = _ot().zeros_like(t)
    parts: list[Any] = [slice(None)] * t.dim()
    parts[dim] = channels
    mask[tuple(parts)] = 1
    return mask


def _check_structured(t: Tensor) -> None:
    if t.dim() <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional "
                         f"tensors. Found tensor of shape {tuple(t.shape)} with {t.dim()} "
                         f"dims")


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: Any, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t)
        n = t.shape[self.dim]
        k = _n_to_prune(self.amount, n)
        if k == 0:
            return default_mask
        prob = _ot().rand(n, device=t.device)
        threshold = _ot().kthvalue(prob, k=k).values
        mask = _channel_mask(t, self.dim, prob > threshold)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, amount: Any,  # type: ignore[override]
              dim: int = -1) -> "BasePruningMethod":
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest L``n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: Any, n: Any, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t)
        nch = t.shape[self.dim]
        k = _n_to_prune(self.amount, nch)
        if k == 0:
            return default_mask
        dim = self.dim if self.dim >= 0 else t.dim() + self.dim
        others = [d for d in range(t.dim()) if d != dim]
        norm = _ot().linalg.vector_norm(t, ord=self.n, dim=others)
        keep = _ot().topk(norm, k=nch - k, largest=True).indices
        mask = _channel_mask(t, self.dim, keep)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, amount: Any, n: Any,  # type: ignore[override]
              dim: int, importance_scores: Any = None) -> "BasePruningMethod":
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise ValueError(f"the mask's shape {tuple(self.mask.shape)} is not the tensor's "
                             f"{tuple(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor) -> "BasePruningMethod":  # type: ignore[override]
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    """Prune nothing of ``module.<name>`` (set up the reparametrization only)."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: Any) -> Module:
    """Prune ``amount`` random entries of ``module.<name>``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: Any,
                    importance_scores: Any = None) -> Module:
    """Prune the ``amount`` entries of ``module.<name>`` of smallest magnitude."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: Any, dim: int) -> Module:
    """Prune ``amount`` random channels of ``module.<name>`` along ``dim``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: Any, n: Any, dim: int,
                  importance_scores: Any = None) -> Module:
    """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` of smallest norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` where ``mask`` is 0."""
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters: Iterable[tuple[Module, str]], pruning_method: type,
                        importance_scores: dict | None = None, **kwargs: Any) -> None:
    """Prune the ``(module, name)`` tensors together: ``pruning_method(**kwargs)`` ranks
    all their entries as one vector (e.g. the globally smallest by magnitude)."""
    ot = _ot()
    params = list(parameters)
    scores_of = importance_scores if importance_scores is not None else {}
    scores = ot.cat([scores_of.get((m, n), getattr(m, n)).reshape(-1) for m, n in params])
    masks = ot.cat([getattr(m, n + "_mask", ot.ones_like(getattr(m, n))).reshape(-1)
                    for m, n in params])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the '
                        f"`pruning_method`. Found method {pruning_method} of type "
                        f"{method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final = container.compute_mask(scores, masks)
    at = 0
    for m, n in params:
        p = getattr(m, n)
        custom_from_mask(m, n, mask=final[at:at + p.numel()].view_as(p))
        at += p.numel()


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent (see :meth:`BasePruningMethod.remove`)."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     f"can be removed")


def is_pruned(module: Module) -> bool:
    """Whether any submodule of ``module`` carries a pruning hook."""
    return any(isinstance(h, BasePruningMethod)
               for m in module.modules() for h in m._forward_pre_hooks.values())

