"""``torch.signal.windows`` and torch's ``*_window`` functions.

Each window is a closed formula over ``arange(M)`` (a composite of core ops: every device,
every floating dtype). ``sym=True`` gives the symmetric window (for filter design);
``sym=False`` the periodic one (for spectral analysis: the symmetric window of ``M + 1``
points without its last), which torch's ``periodic=True`` means.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence

import omnitensor as _ot
from ..core.tensor import Tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall",
           "hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


def _make(M: int, sym: bool, formula: Callable[[Tensor, int], Tensor], *, dtype: Any,
          device: Any, requires_grad: bool, name: str) -> Tensor:
    """Evaluate ``formula(n, points)`` for the symmetric window of ``points`` samples
    (``M``, or ``M + 1`` cut to ``M`` for a periodic window)."""
    if not isinstance(M, int) or isinstance(M, bool) or M < 0:
        raise ValueError(f"{name}: expected a non-negative integer window length, got {M!r}")
    d = _ot.get_default_dtype() if dtype is None else _ot.as_dtype(dtype)
    if d.kind != "f":
        raise ValueError(f"{name}: expected a floating point dtype, got {d.name}")
    if M <= 1:
        out = _ot.ones(M, dtype=d, device=device)
    else:
        points = M if sym else M + 1
        n = _ot.arange(points, dtype=_ot.float64 if _dev_has_f64(device) else d,
                       device=device)
        out = formula(n, points)[:M].to(d)
    return out.requires_grad_(requires_grad)


def _dev_has_f64(device: Any) -> bool:
    dev = _ot.device(device) if device is not None else _ot.get_default_device()
    return dev.supports_dtype(_ot.float64)


def general_cosine(M: int, *, a: Sequence[float], sym: bool = True, dtype: Any = None,
                   layout: Any = None, device: Any = None, requires_grad: bool = False
                   ) -> Tensor:
    """``sum_k (-1)^k a[k] cos(2 pi k n / (M - 1))``."""
    if not isinstance(a, (list, tuple)) and not isinstance(a, Tensor):
        raise TypeError(f"Coefficients must be a list/tuple, got {type(a).__name__}")
    if len(a) == 0:
        raise ValueError("Coefficients cannot be empty")
    def f(n: Tensor, points: int) -> Tensor:
        x = n * (2 * math.pi / (points - 1))
        return sum((((-1) ** k) * c * (x * k).cos() for k, c in enumerate(a)),
                   _ot.zeros_like(x))
    return _make(M, sym, f, dtype=dtype, device=device, requires_grad=requires_grad,
                 name="general_cosine")


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype: Any = None,
                    layout: Any = None, device: Any = None, requires_grad: bool = False
                    ) -> Tensor:
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False) -> Tensor:
    return general_cosine(M, a=[0.5, 0.5], sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    return general_hamming(M, sym=sym, dtype=dtype, device=device, requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, device=device, requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """The triangular window ``1 - |2 n / (M - 1) - 1|``."""
    return _make(M, sym, lambda n, p: 1 - (n * (2 / (p - 1)) - 1).abs(), dtype=dtype,
                 device=device, requires_grad=requires_grad, name="bartlett")


def cosine(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """``sin(pi (n + 1/2) / M)`` (torch.signal's cosine window)."""
    return _make(M, sym, lambda n, p: ((n + 0.5) * (math.pi / p)).sin(), dtype=dtype,
                 device=device, requires_grad=requires_grad, name="cosine")


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype: Any = None, layout: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    """``exp(-|n - center| / tau)``; ``center`` defaults to the middle."""
    if tau <= 0:
        raise ValueError(f"exponential: tau must be positive, got {tau}")
    if sym and center is not None:
        raise ValueError("exponential: center must be None for symmetric windows")

    def f(n: Tensor, points: int) -> Tensor:
        c = (points - 1) / 2 if center is None else center
        return (-(n - c).abs() / tau).exp()
    return _make(M, sym, f, dtype=dtype, device=device, requires_grad=requires_grad,
                 name="exponential")


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``exp(-((n - (M - 1) / 2) / std)^2 / 2)``."""
    if std <= 0:
        raise ValueError(f"gaussian: std must be positive, got {std}")
    return _make(M, sym, lambda n, p: (-(((n - (p - 1) / 2) / std) ** 2) / 2).exp(),
                 dtype=dtype, device=device, requires_grad=requires_grad, name="gaussian")


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype: Any = None,
           layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``I0(beta sqrt(1 - (2 n / (M - 1) - 1)^2)) / I0(beta)``."""
    if beta < 0:
        raise ValueError(f"kaiser: beta must be non-negative, got {beta}")
    from ..special import i0

    def f(n: Tensor, points: int) -> Tensor:
        r = n * (2 / (points - 1)) - 1
        arg = (1 - r * r).clamp(min=0).sqrt() * beta
        return i0(arg) / i0(_ot.tensor(float(beta), dtype=n.dtype, device=n.device))
    return _make(M, sym, f, dtype=dtype, device=device, requires_grad=requires_grad,
                 name="kaiser")


# torch's top-level spellings: periodic=True is sym=False
def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                layout: Any = None, device: Any = None, requires_grad: bool = False,
                pin_memory: bool = False) -> Tensor:
    return hann(window_length, sym=not periodic, dtype=dtype, device=device,
                requires_grad=requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    return general_cosine(window_length, a=[alpha, beta], sym=not periodic, dtype=dtype,
                          device=device, requires_grad=requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, requires_grad: bool = False,
                    pin_memory: bool = False) -> Tensor:
    return blackman(window_length, sym=not periodic, dtype=dtype, device=device,
                    requires_grad=requires_grad)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, requires_grad: bool = False,
                    pin_memory: bool = False) -> Tensor:
    return bartlett(window_length, sym=not periodic, dtype=dtype, device=device,
                    requires_grad=requires_grad)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    return kaiser(window_length, beta=beta, sym=not periodic, dtype=dtype, device=device,
                  requires_grad=requires_grad)


def _checked(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``fn`` with torch's entry checks: a strided ``layout=`` only, and for the
    ``torch.signal.windows`` functions (not the ``*_window`` ones, which take float16 and
    bfloat16) a float32 or float64 ``dtype=``."""
    windows_module = not fn.__name__.endswith("_window")

    @functools.wraps(fn)
    def window(*args: Any, **kwargs: Any) -> Tensor:
        layout = kwargs.get("layout")
        if layout is not None and layout is not _ot.strided:
            raise ValueError(f"{fn.__name__} is implemented for strided tensors only, got: "
                             f"{layout}")
        dtype = kwargs.get("dtype")
        if windows_module and dtype is not None and \
                _ot.as_dtype(dtype) in (_ot.float16, _ot.bfloat16):
            raise ValueError(f"{fn.__name__} expects float32 or float64 dtypes, got: "
                             f"{_ot.as_dtype(dtype)}")
        return fn(*args, **kwargs)
    return window


# every public window checks its arguments once, at the entry (inner calls pass none)
for _name in __all__:
    globals()[_name] = _checked(globals()[_name])
