"""``omnitensor.amp``: automatic mixed precision, torch.amp's API.

``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)`` runs torch's
listed ops (matmul, linear, convolutions, attention) in float16 or bfloat16 and the
precision-sensitive ones (losses; on accelerators also softmax, norms, exp/log, sums) in
float32; ``GradScaler`` scales the loss so float16 gradients do not underflow, and skips the
optimizer step when a gradient overflowed. The state and the op lists live in core
(:mod:`omnitensor.core.autocast_state`); ``omnitensor.autocast`` and
``omnitensor.cuda.amp`` are the same objects under torch's other spellings::

    scaler = omnitensor.amp.GradScaler("sycl")
    for x, y in loader:
        opt.zero_grad()
        with omnitensor.autocast("sycl", dtype=omnitensor.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
"""
from __future__ import annotations

from .autocast_mode import (autocast, autocast_decrement_nesting, autocast_increment_nesting,
                            clear_autocast_cache, custom_bwd, custom_fwd, get_autocast_cpu_dtype,
                            get_autocast_dtype, get_autocast_gpu_dtype, is_autocast_available,
                            is_autocast_cache_enabled, is_autocast_cpu_enabled,
                            is_autocast_enabled, set_autocast_cache_enabled,
                            set_autocast_dtype, set_autocast_enabled)
from .grad_scaler import GradScaler, OptState

__all__ = ["autocast", "GradScaler", "OptState", "is_autocast_available", "custom_fwd",
           "custom_bwd", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled",
           "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
           "is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype"]
