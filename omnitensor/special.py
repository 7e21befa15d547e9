"""``omnitensor.special``: torch.special's functions, written once from Tensor ops so they
run, and differentiate, on every device.

This module is the public face; the families live in :mod:`omnitensor.special_functions`
(Bessel and Airy functions, modified Bessel functions, orthogonal polynomials, the gamma
family with polygamma and the Hurwitz zeta, the incomplete gamma functions, the error
functions). Those follow torch's own evaluation (ATen's Cephes approximations, in the same
order), so float32 results round as torch's do; the gradients are torch's formulas where
torch has them (``d lgamma = digamma``, ``i0' = i1``...), and the functions torch does
not differentiate (Bessel J/Y/K, Airy, the polynomials) return results that do not
require grad. Every branch is evaluated on a "safe" argument so that a branch ``where``
does not select never produces inf/nan values or gradients.
"""
from __future__ import annotations

import math
from typing import Any

from .core.ops import elementwise as _ew
from .core.ops.composite import logit as _logit, sinc as _sinc, xlogy as _xlogy
from .core.ops.reduction import logsumexp as _logsumexp
from .core.ops.ternary import where as _where
from .core.ops.torch_extras import erfc as _erfc, log_softmax as _log_softmax, \
    softmax as _softmax
from .core.tensor import Tensor
from .special_functions._common import binary_operands as _binary, floating as _floating, \
    with_out as _with_out
from .special_functions.bessel import (airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1,
                                       spherical_bessel_j0)
from .special_functions.error_functions import erfcx, erfinv, log_ndtr, ndtr, ndtri
from .special_functions.gamma import digamma, gammaln, multigammaln, polygamma, zeta
from .special_functions.incomplete_gamma import gammainc, gammainc_grad_a, gammaincc
from .special_functions.modified_bessel import (i0, i0e, i1, i1e, modified_bessel_i0,
                                                modified_bessel_i1, modified_bessel_k0,
                                                modified_bessel_k1, scaled_modified_bessel_k0,
                                                scaled_modified_bessel_k1)
from .special_functions.polynomials import (chebyshev_polynomial_t, chebyshev_polynomial_u,
                                            chebyshev_polynomial_v, chebyshev_polynomial_w,
                                            hermite_polynomial_h, hermite_polynomial_he,
                                            laguerre_polynomial_l, legendre_polynomial_p,
                                            shifted_chebyshev_polynomial_t,
                                            shifted_chebyshev_polynomial_u,
                                            shifted_chebyshev_polynomial_v,
                                            shifted_chebyshev_polynomial_w)

__all__ = ["erf", "erfc", "erfcx", "erfinv", "expit", "logit", "xlogy", "xlog1py",
           "log_softmax", "softmax", "logsumexp", "sinc", "entr", "ndtr", "ndtri", "log_ndtr",
           "log1p", "expm1", "exp2", "round", "gammaln", "digamma", "psi", "polygamma",
           "multigammaln", "zeta", "gammainc", "gammaincc", "gammainc_grad_a",
           "i0", "i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
           "airy_ai", "spherical_bessel_j0", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
           "chebyshev_polynomial_v", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p"]

erf = _ew.erf
erfc = _erfc
expit = _ew.sigmoid
logit = _logit
xlogy = _xlogy
sinc = _sinc
log1p = _ew.log1p
expm1 = _ew.expm1
round = _ew.round  # noqa: A001 - torch.special.round
softmax = _softmax
log_softmax = _log_softmax
psi = digamma


def exp2(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """``2 ** x`` (torch.special.exp2; integer inputs give the default float dtype)."""
    return _ew.pow(2.0, _floating(input))


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:  # noqa: A002
    """``log(sum(exp(x)))`` over ``dim``, computed stably (torch.special.logsumexp)."""
    return _logsumexp(input, dim, keepdim)


def xlog1py(input: Any, other: Any) -> Tensor:  # noqa: A002 - torch's names
    """``x * log1p(y)``, 0 where ``x == 0`` (torch.special.xlog1py); two numbers are
    refused, as torch."""
    x, y = _binary("special_xlog1py", input, other, ("self", "other"))
    # as xlogy: the masked lanes (x == 0, y <= -1 or inf) take y = 0, keeping the
    # x-gradient log1p(y) elsewhere at x == 0 (torch's)
    return x * _ew.log1p(_where((x == 0) & ((y <= -1) | (y == math.inf)), 0.0, y))


def entr(input: Any) -> Tensor:  # noqa: A002 - torch's name
    """``-x log x`` for ``x > 0``, 0 at 0, ``-inf`` below (torch.special.entr)."""
    x = _floating(input)
    safe = _where(x > 0, x, 1.0)
    out = _where(x > 0, -x * _ew.log(safe), 0.0 * x)
    return _where(x < 0, -math.inf, out)


def _add_out_arguments() -> None:
    """torch.special's functions take ``*, out=None`` (all but softmax and log_softmax,
    which take ``dtype=``): every exported function gets it, once, at import."""
    namespace = globals()
    for name in __all__:
        if name not in ("softmax", "log_softmax", "gammainc_grad_a", "psi"):
            namespace[name] = _with_out(namespace[name])
    namespace["psi"] = namespace["digamma"]


_add_out_arguments()
