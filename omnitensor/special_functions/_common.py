"""What every special function shares: torch's argument rules (bool and integer inputs
promote to the default float dtype; the binary forms take a tensor and a number or two
tensors, never two numbers), series evaluation (Horner, Chebyshev/Clenshaw), and the
elementwise functions torch differentiates by a formula of its own (``d lgamma =
digamma``) rather than through its approximation.

Every branch of a piecewise formula is evaluated on a *safe* argument (``pick``) and the
branches are combined with ``where``, so a lane a branch does not select never produces
inf/nan values or gradients, and the function runs on every device as plain Tensor ops.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

from ..core import dtypes as _dt
from ..core.ops import elementwise as _ew
from ..core.ops.dtype_rules import floating as _floating, to_float
from ..core.ops.ternary import where
from ..core.tensor import Tensor

_NUMBERS = (bool, int, float)


def as_tensor(x: Any) -> Tensor:
    """``x`` as a tensor (a Python number becomes a 0-d cpu tensor)."""
    if isinstance(x, Tensor):
        return x
    from ..core.ops.creation import tensor
    return tensor(x)


def floating(x: Any) -> Tensor:
    """``x`` as a floating tensor (torch promotes bool and integer inputs of the special
    functions to the default float dtype)."""
    return _floating(as_tensor(x))


def binary_operands(name: str, x: Any, y: Any, names: tuple[str, str] = ("x", "n")
                    ) -> tuple[Tensor, Tensor]:
    """The two operands of a binary special function as floating tensors of one dtype,
    broadcast: torch's forms (Tensor, Tensor), (Number, Tensor), (Tensor, Number); two
    numbers are refused with torch's TypeError."""
    from ..core.ops.creation import tensor
    from ..core.ops.shape import broadcast_tensors
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        if isinstance(x, _NUMBERS) and isinstance(y, _NUMBERS):
            a, b = names
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got "
                f"({type(x).__name__}, {type(y).__name__}), but expected one of: "
                f"(Tensor {a}, Tensor {b}), (Number {a}, Tensor {b}), (Tensor {a}, Number {b}); "
                f"pass at least one tensor, e.g. torch.tensor({x!r})")
    for v, label in ((x, names[0]), (y, names[1])):
        if not isinstance(v, (Tensor,) + _NUMBERS):
            raise TypeError(f"{name}(): argument '{label}' must be a Tensor or a number, "
                            f"not {type(v).__name__}")
    dtype = to_float(_dt.result_type(x, y))
    like = x if isinstance(x, Tensor) else y
    xt = x.to(dtype) if isinstance(x, Tensor) else tensor(x, dtype=dtype, device=like.device)
    yt = y.to(dtype) if isinstance(y, Tensor) else tensor(y, dtype=dtype, device=like.device)
    if tuple(xt.shape) != tuple(yt.shape):
        xt, yt = broadcast_tensors(xt, yt)
    return xt, yt


def pick(mask: Tensor, x: Tensor | float, safe: Tensor | float) -> Tensor:
    """``x`` where ``mask`` holds, ``safe`` elsewhere: a branch's argument (either may be
    a number)."""
    return where(mask, x, safe)


def polevl(z: Any, coeffs: Sequence[float]) -> Any:
    """``c0 z^(n-1) + ... + c(n-1)`` by Horner's rule, highest coefficient first (Cephes'
    ``polevl``, whose leading 0*z + c0 is exact)."""
    acc: Any = coeffs[0]
    for c in coeffs[1:]:
        acc = acc * z + c
    return acc


def chbevl(z: Any, coeffs: Sequence[float]) -> Any:
    """The Chebyshev series ``sum' c_k T_k(z/2)`` by Clenshaw's recurrence, highest
    coefficient first (Cephes' ``chbevl``; ``z`` is twice the mapped argument)."""
    b0: Any = coeffs[0]
    b1: Any = 0.0
    b2: Any = 0.0
    for c in coeffs[1:]:
        b2 = b1
        b1 = b0
        b0 = z * b1 - b2 + c
    return 0.5 * (b0 - b2)


def not_differentiable(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``fn`` computed on detached operands: torch records no gradient for the Bessel,
    Airy and orthogonal-polynomial functions (their results do not require grad)."""
    @functools.wraps(fn)
    def wrapper(*args: Any) -> Tensor:
        return fn(*(a.detach() if isinstance(a, Tensor) else a for a in args))
    return wrapper


_FUNCTION: Any = None


def _function() -> Any:
    """The autograd Function behind :func:`with_derivative` (built on first use:
    ``autograd`` is a layer above core that plain ``import omnitensor`` does not pay
    for)."""
    global _FUNCTION
    if _FUNCTION is None:
        from ..autograd import Function

        class ElementwiseSpecial(Function):
            @staticmethod
            def forward(ctx: Any, x: Tensor, forward: Any, derivative: Any) -> Tensor:
                out = forward(x.detach())
                ctx.save_for_backward(x, out)
                ctx.derivative = derivative
                return out

            @staticmethod
            def backward(ctx: Any, grad: Tensor) -> tuple:
                x, out = ctx.saved_tensors
                return grad * ctx.derivative(x, out), None, None
        _FUNCTION = ElementwiseSpecial
    return _FUNCTION


def with_derivative(forward: Callable[[Tensor], Tensor],
                    derivative: Callable[[Tensor, Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    """An elementwise function whose gradient is ``grad * derivative(x, out)`` (torch's
    formula, written with differentiable special functions, so higher orders follow),
    not the derivative of ``forward``'s approximation."""
    def fn(x: Tensor) -> Tensor:
        if not x.requires_grad:  # a tangent-carrying tensor requires grad too
            return forward(x)
        return _function().apply(x, forward, derivative)
    return fn


def signum(x: Tensor) -> Tensor:
    """``sgn(x)`` as a float tensor (0 at 0)."""
    return _ew.sign(x)


def with_out(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``fn`` taking torch's keyword ``out=``: the result is written into ``out`` (resized
    to its shape; ``out`` must have its dtype and device) and ``out`` returned. The
    signature shown is ``fn``'s with ``*, out=None`` added, as torch documents it."""
    from ..core.ops.out_arg import write_out
    op = f"special_{fn.__name__}"

    @functools.wraps(fn)
    def wrapper(*args: Any, out: Any = None, **kwargs: Any) -> Tensor:
        result = fn(*args, **kwargs)
        return result if out is None else write_out(op, result, out)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # pragma: no cover - a builtin without one
        return wrapper
    params = [q for q in sig.parameters.values() if q.kind is not q.VAR_KEYWORD]
    rest = [q for q in sig.parameters.values() if q.kind is q.VAR_KEYWORD]
    out_param = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
    wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[*params, out_param, *rest])
    return wrapper
