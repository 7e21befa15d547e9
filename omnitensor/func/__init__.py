"""``omnitensor.func``: torch.func's function transforms.

``grad``, ``grad_and_value``, ``vjp``, ``jacrev`` (reverse mode, ``func/reverse.py``);
``jvp``, ``jacfwd``, ``linearize``, ``hessian`` (forward mode through
``omnitensor.autograd.forward_ad``, ``func/forward.py``); ``vmap`` (``func/vmap.py``: a
loop over the mapped dimension, not vectorized); ``functional_call``,
``stack_module_state``, ``replace_all_batch_norm_modules_`` (``func/module.py``);
``rearrange`` (einops patterns, ``func/_einops.py``). All take
and return pytrees (``omnitensor.utils._pytree``) with torch.func's signatures, and nest
with each other. See docs/func.md.
"""
from ._einops import rearrange
from .forward import hessian, jacfwd, jvp, linearize
from .module import (debug_unwrap, functional_call, functionalize,
                     replace_all_batch_norm_modules_, stack_module_state)
from .reverse import grad, grad_and_value, jacrev, vjp
from .vmap import vmap

__all__ = ["grad", "grad_and_value", "vmap", "replace_all_batch_norm_modules_",
           "functionalize", "hessian", "jacfwd", "jacrev", "jvp", "linearize", "vjp",
           "functional_call", "stack_module_state", "debug_unwrap", "rearrange"]
