"""Numerical gradient checks: ``gradcheck`` (first order) and ``gradgradcheck``.

The analytical Jacobian comes from vector-Jacobian products through the engine, the
numerical one from central differences; both are compared on the host. Inputs should be
float64 where the device has it (float32 works with looser tolerances).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..core.engine import grad as autograd_grad
from ..core.ops.creation import tensor, zeros_like
from ..core.ops.random import rand
from ..core.tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Analytical and numerical gradients disagree."""


def _outputs(fn: Callable, inputs: Sequence[Any]) -> tuple:
    out = fn(*inputs)
    return (out,) if isinstance(out, Tensor) else tuple(o for o in out if isinstance(o, Tensor))


def _flat_host(outs: Sequence[Tensor]) -> np.ndarray:
    parts = [np.asarray(o.detach().cpu().numpy(force=True), dtype=np.complex128).ravel()
             for o in outs]
    return np.concatenate(parts) if parts else np.zeros(0)


def _replace(inputs: Sequence[Any], i: int, value: Tensor) -> list:
    out = list(inputs)
    value.requires_grad = inputs[i].requires_grad  # fn may differentiate internally
    out[i] = value
    return out


def gradcheck(fn: Callable, inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, fast_mode: bool = False) -> bool:
    """Compare autograd's Jacobian of ``fn`` at ``inputs`` with central differences."""
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck: no input requires grad")
    outs = _outputs(fn, inputs)
    out_sizes = [o.numel() for o in outs]
    n_out = sum(out_sizes)
    diff_outs = [o for o in outs if o.requires_grad]
    for i in diff_idx:
        x = inputs[i]
        host = x.detach().cpu().numpy().copy()
        n_in = host.size
        numerical = np.zeros((n_in, n_out), dtype=np.complex128)
        flat = host.reshape(-1)
        for j in range(n_in):
            orig = flat[j]
            flat[j] = orig + eps
            plus = _flat_host(_outputs(fn, _replace(inputs, i, tensor(host, device=x.device))))
            flat[j] = orig - eps
            minus = _flat_host(_outputs(fn, _replace(inputs, i, tensor(host, device=x.device))))
            flat[j] = orig
            numerical[j] = (plus - minus) / (2 * eps)
        analytical = np.zeros((n_in, n_out), dtype=np.complex128)
        k = 0
        for o in outs:
            for m in range(o.numel()):
                if o.requires_grad:
                    unit = np.zeros(o.numel(), dtype=o.dtype.np)
                    unit[m] = 1
                    grads = [tensor(unit.reshape(o.shape), device=o.device) if oo is o else
                             zeros_like(oo) for oo in diff_outs]
                    g, = autograd_grad(diff_outs, (x,), grads, retain_graph=True,
                                       allow_unused=True)
                    if g is not None:
                        analytical[:, k] = np.asarray(g.detach().cpu().numpy(),
                                                      dtype=np.complex128).ravel()
                k += 1
        if not np.allclose(analytical, numerical, atol=atol, rtol=rtol):
            worst = np.unravel_index(np.argmax(np.abs(analytical - numerical)),
                                     analytical.shape)
            msg = (f"Jacobian mismatch for output {worst[1]} with respect to input {i}, "
                   f"element {worst[0]}:\nnumerical: {numerical[worst]}\nanalytical: "
                   f"{analytical[worst]}\nmax abs difference "
                   f"{np.max(np.abs(analytical - numerical)):.3e} (atol {atol}, rtol {rtol})")
            if raise_exception:
                raise GradcheckError(msg)
            return False
    return True


def gradgradcheck(fn: Callable, inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
                  **_: Any) -> bool:
    """Check second derivatives: gradcheck of the (differentiable) vector-Jacobian
    product of ``fn``."""
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    outs = _outputs(fn, inputs)
    if grad_outputs is None:
        grad_outputs = tuple((rand(o.shape, dtype=o.dtype, device=o.device) + 0.5)
                             .requires_grad_(True) for o in outs if o.requires_grad)
    grad_outputs = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]

    def vjp(*args: Any) -> tuple:
        ins, gos = args[:n_in], args[n_in:]
        o = [t for t in _outputs(fn, ins) if t.requires_grad]
        gs = autograd_grad(o, [ins[i] for i in diff_idx], gos, create_graph=True,
                           allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(vjp, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
