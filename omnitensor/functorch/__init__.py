"""``functorch`` (``import functorch`` under ``as_torch``): torch's functorch package.

The transforms are :mod:`omnitensor.func`'s under functorch's names (those functorch has:
not ``linearize``, which only ``torch.func`` has); functorch's older
stateless-module API (``make_functional``, ``make_functional_with_buffers``,
``combine_state_for_ensemble``) is in :mod:`._make_functional`. Submodules as torch's:
``functorch.experimental`` (``chunk_vmap`` and re-exports), ``functorch.einops``
(``rearrange``) and ``functorch.compile`` (``memory_efficient_fusion`` through
``omnitensor.compile``; the FX-graph compilers refuse). ``make_fx`` refuses: omnitensor has
no ``torch.fx`` (``omnitensor.jit.trace`` captures a program). See docs/func.md.
"""
from __future__ import annotations

from .._unsupported import unsupported as _unsupported
from ..func import (functionalize, grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp,
                    vmap)
from ..version import __version__  # torch's: functorch's version is torch's
from ._make_functional import (FunctionalModule, FunctionalModuleWithBuffers,
                               combine_state_for_ensemble, make_functional,
                               make_functional_with_buffers)

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "functionalize", "make_functional", "make_functional_with_buffers",
           "combine_state_for_ensemble", "FunctionalModule", "FunctionalModuleWithBuffers",
           "make_fx", "__version__"]

make_fx = _unsupported("functorch.make_fx", "omnitensor has no torch.fx graphs; "
                       "omnitensor.jit.trace captures a program, omnitensor.compile compiles it")
