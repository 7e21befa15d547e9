"""The ``probs``-or-``logits`` parameterisation shared by the discrete families: exactly
one is given, the other is derived on first use (a ``lazy_property``)."""
from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ProbsOrLogits"]


class ProbsOrLogits:
    """Mixin: ``_is_binary`` says whether the parameter is one probability per event
    (sigmoid/logit) or a vector over categories (softmax/log)."""
    _is_binary = True
    _given: str

    def _set_probs_or_logits(self, probs: Any, logits: Any, *rest: Any) -> tuple:
        """Store the one given (broadcast with ``rest``, returned after it)."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        self._given = "probs" if probs is not None else "logits"
        param, *others = broadcast_all(probs if probs is not None else logits, *rest)
        setattr(self, self._given, param)
        return (param, *others)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=self._is_binary)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=self._is_binary)

    @property
    def _param(self) -> Tensor:
        return self.__dict__[self._given]

    @property
    def param_shape(self) -> Any:
        """The shape of the given parameter."""
        return self._param.shape

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        """A tensor like the parameter (torch's ``_param.new``): uninitialised of the
        given size, or from data."""
        p = self._param
        if args and all(isinstance(a, int) for a in args):
            return p.new_empty(args, **kwargs)
        if len(args) == 1 and isinstance(args[0], tuple):
            return p.new_empty(args[0], **kwargs)
        return p.new_tensor(*args, **kwargs)
