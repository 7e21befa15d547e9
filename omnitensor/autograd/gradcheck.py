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


def _numerical(fn: Callable, inputs: tuple, i: int, eps: float, n_out: int) -> np.ndarray:
    """Central differences: row j is d(outputs)/d(input i, element j)."""
    x = inputs[i]
    host = x.detach().cpu().numpy().copy()
    numerical = np.zeros((host.size, n_out), dtype=np.complex128)
    flat = host.reshape(-1)
    for j in range(host.size):
        orig = flat[j]
        flat[j] = orig + eps
        plus = _flat_host(_outputs(fn, _replace(inputs, i, tensor(host, device=x.device))))
        flat[j] = orig - eps
        minus = _flat_host(_outputs(fn, _replace(inputs, i, tensor(host, device=x.device))))
        flat[j] = orig
        numerical[j] = (plus - minus) / (2 * eps)
    return numerical


def _backward_jacobian(outs: tuple, x: Tensor, check_dtypes: bool,
                       batched: bool) -> np.ndarray:
    """Row j, column k: d(output element k)/d(x element j), by one vector-Jacobian
    product per output element (or, ``batched``, one ``is_grads_batched`` call per
    output, which must agree)."""
    from .engine import grad as public_grad
    diff_outs = [o for o in outs if o.requires_grad]
    analytical = np.zeros((x.numel(), sum(o.numel() for o in outs)), dtype=np.complex128)
    k = 0
    for o in outs:
        cols = []
        for m in range(o.numel()):
            if o.requires_grad:
                unit = np.zeros(o.numel(), dtype=o.dtype.np)
                unit[m] = 1
                grads = [tensor(unit.reshape(o.shape), device=o.device) if oo is o else
                         zeros_like(oo) for oo in diff_outs]
                g, = autograd_grad(diff_outs, (x,), grads, retain_graph=True,
                                   allow_unused=True)
                if g is not None:
                    if check_dtypes and (g.dtype != x.dtype or g.device != x.device):
                        raise GradcheckError(f"Gradient has dtype mismatch: {g.dtype} on "
                                             f"{g.device} for an input of {x.dtype} on "
                                             f"{x.device}")
                    analytical[:, k + m] = np.asarray(g.detach().cpu().numpy(),
                                                      dtype=np.complex128).ravel()
                    cols.append(m)
        if batched and o.requires_grad and o.numel() > 0:
            from ..core.ops.creation import eye
            basis = eye(o.numel(), dtype=o.dtype, device=o.device).reshape(
                (o.numel(), *o.shape))
            grads = [basis if oo is o else zeros_like(oo).unsqueeze(0).expand(
                (o.numel(), *oo.shape)) for oo in diff_outs]
            gb, = public_grad(diff_outs, (x,), grads, retain_graph=True, allow_unused=True,
                              is_grads_batched=True)
            if gb is not None:
                got = np.asarray(gb.detach().cpu().numpy(), dtype=np.complex128).reshape(
                    o.numel(), -1).T
                if not np.allclose(got, analytical[:, k:k + o.numel()]):
                    raise GradcheckError("While computing batched gradients, got: "
                                         "batched grads differ from the per-vector grads")
        k += o.numel()
    return analytical


def _forward_jacobian(fn: Callable, inputs: tuple, i: int, n_out: int) -> np.ndarray:
    """Row j: the tangent of the outputs when input i's tangent is the unit vector j
    (forward-mode AD through ``forward_ad``)."""
    from . import forward_ad as fwAD
    x = inputs[i]
    jac = np.zeros((x.numel(), n_out), dtype=np.complex128)
    for j in range(x.numel()):
        unit = np.zeros(x.numel(), dtype=x.dtype.np)
        unit[j] = 1
        with fwAD.dual_level():
            dual = fwAD.make_dual(x.detach(), tensor(unit.reshape(x.shape), device=x.device))
            args = list(inputs)
            args[i] = dual
            outs = _outputs(fn, args)
            tangents = [fwAD.unpack_dual(o).tangent for o in outs]
            jac[j] = _flat_host([zeros_like(o) if t is None else t
                                 for o, t in zip(outs, tangents)])
    return jac


def _mismatch(kind: str, i: int, analytical: np.ndarray, numerical: np.ndarray,
              atol: float, rtol: float) -> str | None:
    if np.allclose(analytical, numerical, atol=atol, rtol=rtol):
        return None
    worst = np.unravel_index(np.argmax(np.abs(analytical - numerical)), analytical.shape)
    return (f"Jacobian mismatch for output {worst[1]} with respect to input {i}, element "
            f"{worst[0]} ({kind}):\nnumerical: {numerical[worst]}\nanalytical: "
            f"{analytical[worst]}\nmax abs difference "
            f"{np.max(np.abs(analytical - numerical)):.3e} (atol {atol}, rtol {rtol})")


def gradcheck(func: Callable, inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Compare the Jacobian of ``func`` at ``inputs`` from autograd (reverse mode, and
    forward mode with ``check_forward_ad``) with central differences.
    ``check_grad_dtypes``: gradients must have their input's dtype and device;
    ``check_batched_grad``: ``grad(..., is_grads_batched=True)`` must agree with the
    per-vector gradients (``check_batched_forward_grad``: the same of forward mode, whose
    batched tangents here are the per-vector ones)."""
    if masked:
        raise NotImplementedError("gradcheck(masked=True) is for sparse masked semantics; "
                                  "omnitensor's sparse tensors do not have them")
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck: no input requires grad")
    outs = _outputs(func, inputs)
    n_out = sum(o.numel() for o in outs)
    for i in diff_idx:
        numerical = _numerical(func, inputs, i, eps, n_out)
        msg = None
        if check_backward_ad:
            analytical = _backward_jacobian(outs, inputs[i], check_grad_dtypes,
                                            check_batched_grad)
            msg = _mismatch("backward mode", i, analytical, numerical, atol, rtol)
        if msg is None and (check_forward_ad or check_batched_forward_grad):
            forward = _forward_jacobian(func, inputs, i, n_out)
            msg = _mismatch("forward mode", i, forward, numerical, atol, rtol)
        if msg is not None:
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
