"""``parameters_to_vector`` and ``vector_to_parameters``."""
from __future__ import annotations

from typing import Iterable

from ...core.graph import no_grad_ctx
from ...core.ops.join import cat
from ...core.tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated into one 1-D tensor (differentiable;
    every parameter must be on one device)."""
    params = list(parameters)
    if params:
        dev = params[0].device
        for p in params[1:]:
            if p.device is not dev:
                raise TypeError(f"Found two parameters on different devices, this is "
                                f"currently not supported ({dev} and {p.device})")
    return cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into the parameters, in place."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected a Tensor, but got: {type(vec).__name__}")
    if vec.ndim != 1:
        raise ValueError(f"vector_to_parameters: vec must be 1-D, got shape {tuple(vec.shape)}")
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.numel() != total:
        raise ValueError(f"vector_to_parameters: vec has {vec.numel()} elements, the "
                         f"parameters {total}")
    offset = 0
    with no_grad_ctx():
        for p in params:
            n = p.numel()
            p.copy_(vec[offset:offset + n].reshape(p.shape))
            offset += n
