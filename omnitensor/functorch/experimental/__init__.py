"""``functorch.experimental``: ``chunk_vmap`` and the transforms torch re-exports here."""
from __future__ import annotations

from typing import Any, Callable

from ...func import (functionalize, hessian, jacfwd, jvp, replace_all_batch_norm_modules_,
                     vmap)
from ...func.vmap import RandomnessGuard

__all__ = ["chunk_vmap", "functionalize", "hessian", "jacfwd", "jvp",
           "replace_all_batch_norm_modules_"]


def chunk_vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0,
               randomness: str = "error", chunks: int = 2) -> Callable:
    """torch's ``chunk_vmap``: ``vmap`` over ``chunks`` pieces of the batch at a time.
    omnitensor's ``vmap`` runs the examples one by one, so the chunking changes nothing
    but the argument is checked as torch's (``vmap(..., chunk_size=)`` is the newer API)."""
    RandomnessGuard(randomness, "chunk_vmap")  # checks the flag now, as torch does
    if not isinstance(chunks, int) or isinstance(chunks, bool) or chunks <= 0:
        raise ValueError(f"chunk_vmap: chunks should be a positive int, got {chunks!r}")
    return vmap(func, in_dims=in_dims, out_dims=out_dims, randomness=randomness)
