"""torch functions a PyTorch user reaches for that are compositions of the core ops:
``index_add``/``index_copy``/``index_fill``, ``nan_to_num``, ``kron``, ``rot90``,
``cov``/``corrcoef``, ``cdist``, ``block_diag``, ``cartesian_prod``, ``bincount``,
``histc``, ``logcumsumexp``, ``unfold``, the ``*stack``/``*split`` family...

Each is written once with Tensor ops, so it runs on every backend and is differentiable
through its parts; none has a backend primitive of its own. Results follow torch,
compared with it in ``tests/core/test_torch_extras.py``.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from ...errors import ShapeError
from .. import dtypes as _dt
from ..graph import no_grad_ctx
from ..shape_util import normalize_axis
from ..tensor import Tensor
from . import creation, join, linalg, shape as sh
from .dtype_rules import floating
from .elementwise import imag, isinf, isnan, logaddexp, real
from .gather import scatter, scatter_add
from .inplace import inplace_method
from .reduction import vector_norm
from .covariance import corrcoef, cov  # bound below; exported from here
from .softmax import log_softmax, softmax  # torch.softmax and Tensor.softmax
from .ternary import where

__all__ = ["clamp_min", "clamp_max", "index_add", "index_copy", "index_fill", "index_put",
           "nan_to_num",
           "exp2", "logaddexp2", "erfc", "sgn", "isposinf", "isneginf", "isreal", "ravel",
           "hsplit", "vsplit", "dsplit", "split_with_sizes", "atleast_1d", "atleast_2d",
           "atleast_3d", "column_stack", "row_stack", "dstack", "diagflat", "kron", "rot90",
           "float_power", "cov", "corrcoef", "cdist", "block_diag", "cartesian_prod",
           "trapezoid", "bincount", "histc", "logcumsumexp", "unfold", "sum_to_size",
           "norm", "softmax", "log_softmax", "logdet", "det", "inverse", "slogdet", "pinverse",
           "matrix_power"]


# ---------------------------------------------------------------------- elementwise
def clamp_min(x: Tensor, min: Any) -> Tensor:  # noqa: A002 - torch's name
    """``clamp(x, min=min)``."""
    return x.clamp(min=min)


def clamp_max(x: Tensor, max: Any) -> Tensor:  # noqa: A002 - torch's name
    """``clamp(x, max=max)``."""
    return x.clamp(max=max)


def nan_to_num(x: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """NaN -> ``nan``, +inf -> ``posinf`` (the dtype's max), -inf -> ``neginf`` (its
    lowest); integers pass through."""
    if x.dtype.kind not in "fc":
        return x.clone()
    if x.dtype.kind == "c":
        return nan_to_num(real(x), nan, posinf, neginf) + \
            nan_to_num(imag(x), nan, posinf, neginf) * 1j
    fi = _dt.finfo(x.dtype)
    hi = fi.max if posinf is None else posinf
    lo = fi.min if neginf is None else neginf
    return where(isnan(x), nan, where(isposinf(x), hi, where(isneginf(x), lo, x)))


def exp2(x: Tensor) -> Tensor:
    """``2 ** x`` (floats; integers promote to the default float, as in torch)."""
    return 2.0 ** floating(x)


def logaddexp2(a: Tensor, b: Tensor) -> Tensor:
    """``log2(2**a + 2**b)`` without overflow."""
    return logaddexp(a * math.log(2.0), b * math.log(2.0)) / math.log(2.0)


from .elementwise import erfc  # noqa: E402  (a primitive: 1 - erf(x) cancels for x >> 0)


def sgn(x: Tensor) -> Tensor:
    """torch.sgn: the sign for real tensors (0 at NaN, where the Array API's ``sign``
    gives NaN), ``x / |x|`` (0 at 0) for complex ones."""
    s = x.sign()
    return where(isnan(x), 0, s) if x.dtype.kind == "f" else s


def isposinf(x: Tensor) -> Tensor:
    return isinf(x) & (x > 0) if x.dtype.kind == "f" else isinf(x) & False


def isneginf(x: Tensor) -> Tensor:
    return isinf(x) & (x < 0) if x.dtype.kind == "f" else isinf(x) & False


def isreal(x: Tensor) -> Tensor:
    """True where the imaginary part is 0 (everywhere for real dtypes)."""
    if x.dtype.kind == "c":
        return imag(x) == 0
    return creation.ones_like(x, dtype=_dt.bool_)


def float_power(a: Any, b: Any) -> Tensor:
    """``a ** b`` in double precision (complex128 for complex operands), as torch."""
    def wide(v: Any) -> Any:
        if not isinstance(v, Tensor):
            return v
        return v.to(_dt.complex128 if v.dtype.kind == "c" else _dt.float64)
    a, b = wide(a), wide(b)
    if not isinstance(a, Tensor):
        a = creation.full_like(b, a)
    return a ** b


# ----------------------------------------------------------------------- indexing
def _along(index: Tensor, dim: int, shape: Sequence[int]) -> Tensor:
    """A 1-D ``index`` broadcast to ``shape`` along ``dim`` (for scatter/gather)."""
    view = [1] * len(shape)
    view[dim] = index.shape[0]
    return index.reshape(view).expand(*shape)


def _check_index(name: str, index: Tensor) -> None:
    if index.ndim > 1 or index.dtype.kind not in "iu":
        raise IndexError(f"{name}: index must be a 1-D integer tensor, got a "
                         f"{index.ndim}-D {index.dtype.name} tensor")


def _index_op(name: str, x: Tensor, dim: int, index: Tensor, source: Any,
              apply: Any) -> Tensor:
    """The shared frame of index_add/copy/fill: ``apply(x, d, index, source)`` with a 0-d
    ``x`` (and source) taken as 1-D of one element, as torch does."""
    _check_index(name, index)
    if x.ndim == 0:
        src = source.reshape(1) if isinstance(source, Tensor) and source.ndim == 0 else source
        normalize_axis(dim, 1)  # dims -1 and 0 only
        return apply(x.reshape(1), 0, index.reshape(-1), src).reshape(())
    return apply(x, normalize_axis(dim, x.ndim), index.reshape(-1), source)


def index_add(x: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1
              ) -> Tensor:
    """``out[..., index[i], ...] += alpha * source[..., i, ...]`` (duplicates summed)."""
    def apply(t: Tensor, d: int, idx: Tensor, src: Tensor) -> Tensor:
        if alpha != 1 or isinstance(alpha, bool):
            src = src * alpha if src.dtype is not _dt.bool_ else src & bool(alpha)
        return scatter_add(t, d, _along(idx, d, src.shape), src.to(t.dtype))
    return _index_op("index_add", x, dim, index, source, apply)


def index_copy(x: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``out[..., index[i], ...] = source[..., i, ...]``."""
    def apply(t: Tensor, d: int, idx: Tensor, src: Tensor) -> Tensor:
        return scatter(t, d, _along(idx, d, src.shape), src)
    return _index_op("index_copy", x, dim, index, source, apply)


def index_fill(x: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """``out[..., index[i], ...] = value`` (a number, or a 0-d tensor: then
    differentiable in it)."""
    if isinstance(value, Tensor) and value.ndim != 0:
        raise ShapeError(f"index_fill only supports a 0-dimensional value tensor, but got "
                         f"tensor with {value.ndim} dimension(s)")

    def apply(t: Tensor, d: int, idx: Tensor, v: Any) -> Tensor:
        # the filled positions as a mask along d: a value tensor's gradient sums the
        # output's over them once each, however often the index repeats them
        hit = scatter(creation.zeros(t.shape[d], dtype=_dt.bool_, device=t.device), 0,
                      idx, True)
        view = [1] * t.ndim
        view[d] = t.shape[d]
        if isinstance(v, Tensor):
            v = v.reshape(()).to(t.dtype)
        out = where(hit.reshape(view), v, t)
        return out if out.dtype is t.dtype else out.to(t.dtype)
    return _index_op("index_fill", x, dim, index, value, apply)


def _integer_indices(indices: Sequence[Any]) -> tuple:
    """``indices`` with each bool mask replaced by the integer coordinates of its True
    elements (one index tensor per masked dimension), as indexing reads a mask."""
    out: list = []
    for i in indices:
        if isinstance(i, Tensor) and i.dtype is _dt.bool_:
            if i.ndim == 0:
                raise IndexError("index_put(accumulate=True): a 0-d bool mask is not "
                                 "supported; index x[None] instead")
            out.extend(i.nonzero(as_tuple=True))
        else:
            out.append(i)
    return tuple(out)


def index_put(x: Tensor, indices: Sequence[Tensor], values: Any,
              accumulate: bool = False) -> Tensor:
    """``out[indices] = values`` (``x[indices]`` semantics for a tuple of index tensors);
    with ``accumulate``, ``+=`` with duplicate indices summed (integer indices)."""
    indices = tuple(indices)
    if not accumulate:
        out = x.clone()
        out[indices] = values
        return out
    indices = _integer_indices(indices)
    if not indices or any(not isinstance(i, Tensor) or i.dtype.kind not in "iu"
                          for i in indices):
        raise IndexError("index_put(accumulate=True): indices must be a non-empty tuple of "
                         "integer tensors")
    k = len(indices)
    if k > x.ndim:
        raise IndexError(f"index_put: {k} index tensors for a {x.ndim}-D tensor")
    lead, rest = tuple(x.shape[:k]), tuple(x.shape[k:])
    idx = sh.broadcast_tensors(*indices) if k > 1 else indices
    lin = None
    for i, n in zip(idx, lead):  # row-major linear index into the leading dimensions
        i = i.to(_dt.int64) % n  # negative indices count from the end
        lin = i if lin is None else lin * n + i
    assert lin is not None  # indices is non-empty (checked above)
    flat = lin.reshape(-1)
    if not isinstance(values, Tensor):
        values = creation.full(tuple(lin.shape) + rest, values, dtype=x.dtype,
                               device=x.device)
    vals = values.to(x.dtype).broadcast_to(tuple(lin.shape) + rest).reshape(
        (flat.shape[0],) + rest)
    n_lead = 1
    for n in lead:
        n_lead *= n
    return index_add(x.reshape((n_lead,) + rest), 0, flat, vals).reshape(x.shape)


def unfold(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every window of ``size`` elements along ``dimension``, ``step`` apart, as a new
    last axis (``Tensor.unfold``; a gather here, not a strided view)."""
    d = normalize_axis(dimension, x.ndim) if x.ndim else 0
    n = x.shape[d] if x.ndim else 1
    if size > n or size < 0 or step <= 0:
        raise ValueError(f"unfold: size {size} and step {step} do not fit a dimension of "
                         f"{n}")
    if x.ndim == 0:  # torch: the one element, as a 1-D tensor of size ``size``
        return x.reshape(1)[:size]
    starts = creation.arange(0, n - size + 1, step, device=x.device)
    idx = (starts.reshape(-1, 1) + creation.arange(size, device=x.device)).reshape(-1)
    windows = x.reshape(1) if x.ndim == 0 else x.index_select(d, idx)
    shape = list(windows.shape)
    shape[d:d + 1] = [starts.shape[0], size]
    return sh.movedim(windows.reshape(shape), d + 1, -1)


# -------------------------------------------------------------------- shape, joins
def ravel(x: Tensor) -> Tensor:
    return x.reshape(-1)


def split_with_sizes(x: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple:
    return join.split(x, list(split_sizes), dim)


def hsplit(x: Tensor, sections: Any) -> tuple:
    return join.tensor_split(x, sections, 1 if x.ndim > 1 else 0)


def vsplit(x: Tensor, sections: Any) -> tuple:
    if x.ndim < 2:
        raise ValueError(f"vsplit needs a tensor of at least 2 dimensions, got {x.ndim}")
    return join.tensor_split(x, sections, 0)


def dsplit(x: Tensor, sections: Any) -> tuple:
    if x.ndim < 3:
        raise ValueError(f"dsplit needs a tensor of at least 3 dimensions, got {x.ndim}")
    return join.tensor_split(x, sections, 2)


def _atleast(n: int, tensors: tuple) -> Any:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = []
    for t in tensors:
        if t.ndim == 0:
            t = t.reshape((1,) * n)
        elif t.ndim == 1 and n >= 2:
            t = t.reshape((1, t.shape[0], 1) if n == 3 else (1, t.shape[0]))
        elif t.ndim == 2 and n == 3:
            t = t.unsqueeze(-1)
        out.append(t)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*tensors: Any) -> Any:
    return _atleast(1, tensors)


def atleast_2d(*tensors: Any) -> Any:
    return _atleast(2, tensors)


def atleast_3d(*tensors: Any) -> Any:
    return _atleast(3, tensors)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """1-D tensors become columns; the rest are joined along dim 1."""
    cols = [t.reshape(-1, 1) if t.ndim <= 1 else t for t in tensors]
    return join.cat(cols, 1)


def row_stack(tensors: Sequence[Tensor]) -> Tensor:
    return join.cat([atleast_2d(t) for t in tensors], 0)


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    return join.cat([atleast_3d(t) for t in tensors], 2)


def diagflat(x: Tensor, offset: int = 0) -> Tensor:
    return sh.diag(x.reshape(-1), offset)


def kron(a: Tensor, b: Tensor) -> Tensor:
    """Kronecker product: ``out[i*p + k, j*q + l] = a[i, j] * b[k, l]`` in any rank."""
    nd = max(a.ndim, b.ndim)
    a = a.reshape((1,) * (nd - a.ndim) + tuple(a.shape))
    b = b.reshape((1,) * (nd - b.ndim) + tuple(b.shape))
    # interleave: a's axes at even positions, b's at odd ones
    pa = a.reshape(tuple(v for n in a.shape for v in (n, 1)))
    pb = b.reshape(tuple(v for n in b.shape for v in (1, n)))
    return (pa * pb).reshape(tuple(m * n for m, n in zip(a.shape, b.shape)))


def rot90(x: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims`` (from the first axis
    towards the second)."""
    if len(dims) != 2:
        raise ValueError(f"rot90: expected 2 dims, got {len(dims)}")
    d0, d1 = (normalize_axis(d, x.ndim) for d in dims)
    if d0 == d1:
        raise ValueError(f"rot90: the two dims must differ, got {tuple(dims)}")
    k %= 4
    if k == 1:
        return x.flip(d1).transpose(d0, d1)
    if k == 2:
        return x.flip((d0, d1))
    if k == 3:
        return x.flip(d0).transpose(d0, d1)
    return x.clone()


def block_diag(*tensors: Tensor) -> Tensor:
    """Tensors (0-, 1- or 2-D) on the diagonal of one matrix, zeros elsewhere."""
    mats = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    if not mats:
        return creation.zeros((1, 0))
    dtype = mats[0].dtype
    for m in mats[1:]:
        dtype = _dt.promote_types(dtype, m.dtype)
    width = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        parts = [creation.zeros((r, left), dtype=dtype, device=m.device), m.to(dtype),
                 creation.zeros((r, width - left - c), dtype=dtype, device=m.device)]
        rows.append(join.cat(parts, 1))
        left += c
    return join.cat(rows, 0)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of the 1-D tensors' elements, one per row."""
    if len(tensors) == 1:
        return tensors[0]
    grids = creation.meshgrid(*tensors, indexing="ij")
    return join.stack([g.reshape(-1) for g in grids], 1)


def sum_to_size(x: Tensor, *size: Any) -> Tensor:
    """Sum ``x`` down to a shape it broadcasts from."""
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) \
        else tuple(size)
    if not shape:  # torch: the whole sum (an integer sum for bool tensors)
        return x.sum()
    if x.dtype is _dt.bool_ and tuple(x.shape) != shape:
        x = x.to(_dt.int64)  # summing bools counts them (torch)
    return sh.sum_to(x, shape)


# ------------------------------------------------------------------- statistics
_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """p-norm distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M).
    Every ``compute_mode`` computes the differences directly (torch's matrix-product
    shortcut for p=2 trades accuracy for speed; the values agree to rounding)."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"cdist: {compute_mode!r} is not a valid value for compute_mode; "
                         f"use one of {', '.join(_CDIST_MODES)}")
    if p < 0:
        raise ValueError(f"cdist only supports non-negative p values, got {p}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"cdist: x1 and x2 must have the same last dimension, got "
                         f"{x1.shape[-1]} and {x2.shape[-1]}")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return vector_norm(diff, ord=p, axis=-1)


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
              dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim`` (spacing ``x`` samples or ``dx``)."""
    d = normalize_axis(dim, y.ndim)
    n = y.shape[d]
    if n == 0:
        return y.sum(dim=d)
    lo, hi = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    if x is None:
        return (lo + hi).sum(dim=d) * ((1.0 if dx is None else dx) / 2)
    return ((lo + hi) * trapezoid_spacing("trapezoid", x, y, d, dim)).sum(dim=d) / 2


def trapezoid_spacing(op: str, x: Tensor, y: Tensor, d: int, dim: int) -> Tensor:
    """The widths between ``x``'s sample points along ``y``'s axis ``d`` (``x`` 1-D of
    ``y.shape[d]`` points, or shaped as ``y``): the trapezoid rules' one spacing rule."""
    n = y.shape[d]
    if x.ndim == 1:
        if x.shape[0] != n:
            raise ShapeError(f"{op}: x has {x.shape[0]} points, y has {n} along dim {dim}")
        shape = [1] * y.ndim
        shape[d] = n - 1
        return (x[1:] - x[:-1]).reshape(shape)
    xd = normalize_axis(dim, x.ndim)
    return x.narrow(xd, 1, n - 1) - x.narrow(xd, 0, n - 1)


def bincount(x: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """Counts (or summed ``weights``) of each non-negative integer in the 1-D ``x``."""
    if x.ndim != 1 or x.dtype.kind not in "iu":
        raise ValueError(f"bincount: expected a 1-D integer tensor, got a {x.ndim}-D "
                         f"{x.dtype.name} tensor")
    with no_grad_ctx():
        if x.shape[0] and bool((x < 0).any().item()):
            raise ValueError("bincount: the input must be non-negative")
        length = max(int(x.max().item()) + 1 if x.shape[0] else 0, minlength)
    if weights is None:
        ones = creation.ones(x.shape, dtype=_dt.int64, device=x.device)
        return scatter_add(creation.zeros(length, dtype=_dt.int64, device=x.device), 0,
                           x.to(_dt.int64), ones)
    w = weights if weights.dtype.kind in "fc" else weights.to(_dt.float64)
    return scatter_add(creation.zeros(length, dtype=w.dtype, device=x.device), 0,
                       x.to(_dt.int64), w)


def histc(x: Tensor, bins: int = 100, min: float = 0.0, max: float = 0.0  # noqa: A002
          ) -> Tensor:
    """Histogram of ``bins`` equal bins over [min, max] (the data's range when both are
    0); values outside are ignored, ``max`` falls in the last bin."""
    with no_grad_ctx():
        flat = x.reshape(-1).to(x.dtype if x.dtype.kind == "f" else _dt.float32)
        lo, hi = float(min), float(max)
        if lo == hi and flat.shape[0]:
            lo, hi = float(flat.min().item()), float(flat.max().item())
        if lo == hi:
            lo, hi = lo - 1.0, hi + 1.0
        inside = (flat >= lo) & (flat <= hi)
        idx = ((flat - lo) * (bins / (hi - lo))).floor().clamp(0, bins - 1).to(_dt.int64)
        counts = scatter_add(creation.zeros(bins, dtype=flat.dtype, device=x.device), 0,
                             idx, inside.to(flat.dtype))
    return counts


def logcumsumexp(x: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(x), dim))`` computed stably (shifted by the maximum)."""
    d = normalize_axis(dim, x.ndim) if x.ndim else 0
    with no_grad_ctx():
        m = x.amax(dim=d, keepdim=True) if x.ndim else x
        m = where(isinf(m), 0.0, m)
    return (x - m).exp().cumsum(d).log() + m


def norm(x: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:
    """torch.norm: 'fro' (= 2-norm of the flattened axes), 'nuc', or a p-norm."""
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        return linalg.matrix_norm(x, "nuc", dim=(-2, -1) if dim is None else dim, keepdim=keepdim)
    return vector_norm(x, p, dim, keepdim, dtype=dtype)


# ----------------------------------------------------------------- Tensor methods
def _linalg(name: str, attr: str | None = None) -> Any:
    target = getattr(linalg, attr or name)

    def fn(x: Tensor, *args: Any, **kwargs: Any) -> Any:
        return target(x, *args, **kwargs)
    fn.__name__ = name
    fn.__doc__ = f"``omnitensor.linalg.{attr or name}`` (torch's ``{name}``)."
    return fn


#: torch's top-level spellings of linalg functions (also Tensor methods)
LINALG_ALIASES = {name: _linalg(name, attr) for name, attr in (
    ("det", None), ("inverse", "inv"), ("slogdet", None), ("pinverse", "pinv"),
    ("matrix_power", None))}
# torch.svd/qr/cholesky have their own signatures (V not Vh, some=): core/ops/linalg_torch.py
det, inverse, slogdet, pinverse, matrix_power = (
    LINALG_ALIASES[n] for n in ("det", "inverse", "slogdet", "pinverse", "matrix_power"))


def logdet(x: Tensor) -> Tensor:
    """``log(det(x))``: NaN for a negative determinant, -inf for a singular matrix."""
    sign, logabs = linalg.slogdet(x)
    return where(sign < 0, float("nan"), logabs)


def _get_device(self: Tensor) -> int:
    return -1 if self.device.type == "cpu" else self.device.index


def _is_nonzero(self: Tensor) -> bool:
    if self.numel() != 1:
        raise RuntimeError(f"Boolean value of Tensor with {self.numel()} elements is "
                           f"ambiguous")
    return bool(self.item())


def bind(T: Any) -> None:
    """Install these functions as torch's Tensor methods (and in-place variants)."""
    for name in ("clamp_min", "clamp_max", "index_add", "index_copy", "index_fill",
                 "index_put", "nan_to_num", "exp2", "erfc", "sgn", "isposinf", "isneginf",
                 "isreal", "ravel", "hsplit", "vsplit", "dsplit", "split_with_sizes", "diagflat",
                 "kron", "rot90", "float_power", "cov", "corrcoef", "bincount", "histc",
                 "logcumsumexp", "unfold", "sum_to_size", "logaddexp2", "logdet", "norm"):
        setattr(T, name, globals()[name])
    for name in ("clamp_min", "clamp_max", "index_add", "index_copy", "index_fill",
                 "index_put", "nan_to_num", "exp2", "erfc", "sgn", "float_power"):
        setattr(T, name + "_", inplace_method(globals()[name], name))
    T.softmax, T.log_softmax = softmax, log_softmax
    for name, fn in LINALG_ALIASES.items():
        setattr(T, name, fn)
    T.get_device = _get_device
    T.is_cpu = property(lambda self: self.device.type == "cpu")
    T.is_signed = lambda self: self.dtype.kind in "ifc"
    T.is_nonzero = _is_nonzero
    T.is_same_size = lambda self, other: tuple(self.shape) == tuple(other.shape)
