"""The rest of torch's top-level functions and Tensor methods, gathered from the modules
that define them (one implementation each):

* :mod:`.fused_products`: addmm, addmv, addr, baddbmm, addbmm, addcmul, addcdiv
* :mod:`.complex_ops`: angle, complex, polar, view_as_real/complex, conj_physical...
* :mod:`.scatter_reduce`: scatter_reduce, index_reduce, scatter(reduce=...)
* :mod:`.view_scatter`: diagonal/select/slice/as_strided_scatter, masked_scatter, put
* :mod:`.copies`: the ``*_copy`` views, empty_strided/permuted, fill, resize_...
* :mod:`.numeric_extras`: frexp, ldexp, gcd, lcm, rsub, fmax/fmin, renorm, isin,
  cummax/cummin, cumulative_trapezoid, gradient
* :mod:`.counting`: histogram(dd), mode, unique_consecutive, nanquantile, unravel_index,
  combinations, nonzero_static, broadcast_shapes
* :mod:`.native_norms`: native_batch_norm, native_layer_norm, native_group_norm
* :mod:`.random_fills`: Tensor.cauchy_, geometric_, log_normal_
"""
from __future__ import annotations

from typing import Any

from . import complex_ops, copies, counting, fused_products, random_fills, view_scatter
from . import scatter_reduce as _scatter_reduce_ops
from .complex_ops import (angle, complex, conj_physical, polar, resolve_conj,  # noqa: A004
                          resolve_neg, view_as_complex, view_as_real)
from .copies import (alias_copy, as_strided_copy, constant_pad_nd, diagonal_copy,
                     empty_permuted, empty_strided, expand_copy, fill, narrow_copy,
                     permute_copy, resize_as_, scalar_tensor, split_with_sizes_copy,
                     squeeze_copy, t_copy, transpose_copy, unbind_copy, unfold_copy,
                     unsafe_chunk, unsafe_split, unsqueeze_copy, view_copy, zero_,
                     detach_copy, select_copy, slice_copy, split_copy, view_as_real_copy,
                     view_as_complex_copy)
from .counting import (broadcast_shapes, combinations, histogram, histogramdd, mode,
                       nanquantile, nonzero_static, unique_consecutive, unravel_index)
from .fused_products import addbmm, addcdiv, addcmul, addmm, addmv, addr, baddbmm
from .native_norms import native_batch_norm, native_group_norm, native_layer_norm
from .numeric_extras import (cummax, cummin, cumulative_trapezoid, fmax, fmin, frexp, gcd,
                             gradient, isin, lcm, ldexp, renorm, rsub)
from .scatter_reduce import index_reduce, scatter_reduce
from .torch_extras import index_put
from .view_scatter import (as_strided_scatter, diagonal_scatter, masked_scatter, put,
                           select_scatter, slice_scatter)

__all__ = [
    "angle", "complex", "conj_physical", "polar", "resolve_conj", "resolve_neg",
    "view_as_complex", "view_as_real",
    "alias_copy", "as_strided_copy", "constant_pad_nd", "diagonal_copy", "empty_permuted",
    "empty_strided", "expand_copy", "fill", "narrow_copy", "permute_copy", "resize_as_",
    "scalar_tensor", "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy",
    "unbind_copy", "unfold_copy", "unsafe_chunk", "unsafe_split", "unsqueeze_copy",
    "view_copy", "zero_", "detach_copy", "select_copy", "slice_copy", "split_copy",
    "view_as_real_copy", "view_as_complex_copy",
    "broadcast_shapes", "combinations", "histogram", "histogramdd", "mode", "nanquantile",
    "nonzero_static", "unique_consecutive", "unravel_index",
    "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "baddbmm",
    "native_batch_norm", "native_group_norm", "native_layer_norm",
    "cummax", "cummin", "cumulative_trapezoid", "fmax", "fmin", "frexp", "gcd", "gradient",
    "isin", "lcm", "ldexp", "renorm", "rsub",
    "index_reduce", "scatter_reduce", "index_put",
    "as_strided_scatter", "diagonal_scatter", "masked_scatter", "put", "select_scatter",
    "slice_scatter",
]


def _special(name: str, attr: str) -> Any:
    """A Tensor method answered by ``omnitensor.special`` (a face above core, reached
    through the package root at call time): ``x.igamma(y)`` is ``special.gammainc(x, y)``."""
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        import omnitensor
        return getattr(omnitensor.special, attr)(self, *args, **kwargs)
    method.__name__ = name
    return method


def _polygamma(self: Any, n: int) -> Any:
    """torch's ``x.polygamma(n)``: ``special.polygamma(n, x)``."""
    import omnitensor
    return omnitensor.special.polygamma(n, self)


def bind(T: Any) -> None:
    """Install this module's Tensor methods and their in-place variants."""
    from .inplace import inplace_method
    plain = (addmm, addmv, addr, baddbmm, addbmm, addcmul, addcdiv, angle, conj_physical,
             resolve_conj, resolve_neg, frexp, ldexp, gcd, lcm, renorm, fmax, fmin, cummax,
             cummin)
    for fn in plain:
        setattr(T, fn.__name__, fn)
    for fn in (addmm, addmv, addr, baddbmm, addbmm, ldexp, gcd, lcm, renorm, conj_physical):
        setattr(T, fn.__name__ + "_", inplace_method(fn, fn.__name__))
    T.addcmul_, T.addcdiv_ = fused_products.addcmul_, fused_products.addcdiv_
    T.chalf = complex_ops.chalf
    T.__rdiv__ = T.__rtruediv__  # torch's Python-2 spelling of the reflected division
    for name, attr in (("igamma", "gammainc"), ("igammac", "gammaincc"),
                       ("mvlgamma", "multigammaln"), ("digamma", "digamma"),
                       ("erfinv", "erfinv"), ("i0", "i0"), ("lgamma", "gammaln")):
        setattr(T, name, _special(name, attr))
        setattr(T, name + "_", inplace_method(_special(name, attr), name))
    T.polygamma = _polygamma
    T.polygamma_ = inplace_method(_polygamma, "polygamma")
    for module in (_scatter_reduce_ops, view_scatter, copies, counting, random_fills):
        module.bind(T)
