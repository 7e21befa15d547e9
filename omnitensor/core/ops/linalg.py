"""The linear-algebra ops (the Array API linalg extension and torch.linalg names); the
public face is ``omnitensor.linalg``.

Decompositions run on the device when the backend has a native routine
(``backend.linalg_<name>``: NumPy, CuPy and dpnp's oneMKL); a backend without one (OpenCL)
computes them on the host, which ``host_fallbacks()`` lists and ``omnitensor info``
reports. Products and norms are composites of device ops. Backward formulas are given for
inv, det, slogdet, solve, cholesky, eigh and the norms.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ...errors import OmnitensorError, ShapeError
from .. import dtypes as _dt, host_fallback
from ..device import same_device
from ..graph import needs_grad, no_grad_ctx, record
from ..shape_util import broadcast_shapes, normalize_axis
from ..tensor import Tensor, _make
from .composite import cross as _cross
from .creation import eye, tril, triu, zeros
from .dtype_rules import floating
from .elementwise import maximum
from .ternary import where
from .linalg_ops import matmul, outer, tensordot, vecdot
from .reduction import vector_norm
from .shape import diagonal as _torch_diagonal, matrix_transpose
from . import linalg_backward as _lb

__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv",
           "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm", "norm", "LinAlgError", "host_fallbacks", "eigvals", "eig",
           "solve_triangular", "lstsq"]


class LinAlgError(OmnitensorError, RuntimeError):
    """A matrix is singular, not positive definite, or a decomposition did not converge."""


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


def host_fallbacks() -> list[str]:
    """linalg routines that ran on the host this session because the backend has none."""
    return host_fallback.host_fallbacks("linalg")


def _square(name: str, x: Tensor, arg: str = "A", prefix: str = "linalg.") -> None:
    """ShapeError with torch's messages unless ``x`` (argument ``arg``) is a stack of
    square matrices."""
    if x.ndim < 2:
        raise ShapeError(f"{prefix}{name}: The input tensor {arg} must have at least 2 "
                         f"dimensions.")
    if x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"{prefix}{name}: {arg} must be batches of square matrices, but "
                         f"they are {x.shape[-2]} by {x.shape[-1]} matrices")


def _native(name: str, *xs: Tensor, **kw: Any) -> Any:
    """Run ``linalg_<name>`` on the device, or NumPy on the host for backends without it.
    Returns backend arrays (a tuple for multi-output routines)."""
    try:
        return host_fallback.run("linalg", name, xs[0].device, [x._data for x in xs], **kw)
    except np.linalg.LinAlgError as e:
        raise LinAlgError(f"linalg.{name}: {e}") from None
    except Exception as e:
        if "LinAlgError" in type(e).__name__ or "singular" in str(e).lower():
            raise LinAlgError(f"linalg.{name}: {e}") from None
        raise


def _wrap(data: Any, like: Tensor, dtype: _dt.DType | None = None) -> Tensor:
    return _make(data, like.device, dtype or _dt.as_dtype(data.dtype))


# ---------------------------------------------------------------------- inverse etc.
def inv(x: Tensor, /) -> Tensor:
    """Matrix inverse (LinAlgError when singular)."""
    x = floating(x)
    _square("inv", x)
    out = _wrap(_native("inv", x), x, x.dtype)
    if needs_grad(x):
        record("LinalgInvExBackward0", _inv_backward, out, (x,), (out,))
    return out


def _inv_backward(node: Any, g: Tensor) -> tuple:
    (ainv,) = node.saved_tensors
    h = ainv.mT.conj()
    return (-(h @ g @ h),)


def det(x: Tensor, /) -> Tensor:
    """Determinant of each matrix of the stack."""
    x = floating(x)
    _square("det", x)
    out = _wrap(_native("det", x), x, x.dtype)
    if needs_grad(x):
        record("LinalgDetBackward0", _det_backward, out, (x,), (x, out))
    return out


def _det_backward(node: Any, g: Tensor) -> tuple:
    x, d = node.saved_tensors
    return ((g * d.conj()).unsqueeze(-1).unsqueeze(-1) * inv(x).mT.conj(),)


def slogdet(x: Tensor, /) -> SlogdetResult:
    """(sign, log|det|) of each matrix."""
    x = floating(x)
    _square("slogdet", x)
    sign, logdet = _native("slogdet", x)
    s = _wrap(sign, x, x.dtype)
    ld = _wrap(logdet, x, x.dtype.to_real())
    if needs_grad(x):  # both outputs carry a gradient, as torch's
        record("LinalgSlogdetBackward0", _slogdet_backward, (s, ld), (x,), (x, s))
    return SlogdetResult(s, ld)


def _slogdet_backward(node: Any, gsign: Any, gld: Any) -> tuple:
    """torch's slogdet_backward: ``(g_abs - i Im(conj(g_sign) sign)) A^{-H}``; the sign of
    a real matrix is locally constant, so its gradient adds nothing there."""
    x, sign = node.saved_tensors
    complex_ = x.dtype.kind == "c"
    g = None if gld is None else (gld.to(x.dtype) if complex_ else gld)
    if complex_ and gsign is not None:
        term = (gsign.conj() * sign).imag.to(x.dtype) * (-1j)
        g = term if g is None else g + term
    if g is None:
        return (None,)
    return (g.unsqueeze(-1).unsqueeze(-1) * inv(x).mT.conj(),)


def _vector_rhs(a: Tensor, b: Tensor, torch_rule: bool = False) -> bool:
    """Whether ``b`` is a (stack of) vector right-hand side(s) of ``a x = b``.

    torch's rule (``torch_rule``): ``(M,)`` or exactly ``a.shape[:-1]``. The standard's:
    ``(M,)``; a ``b`` of ``a.shape[:-1]`` is also read as torch's batched vectors where the
    standard's reading as matrices ``(..., M, K)`` does not fit (its M is not ``a``'s n):
    never a result the standard defines, only its shape errors. The two differ only where
    both readings fit (``a`` (n, n, n), ``b`` (n, n); a 0-batch of 0x0 matrices): the
    namespace the caller came through decides (docs/torch_and_array_api.md)."""
    if b.ndim == 1:
        return True
    batched = b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1])
    return batched and (torch_rule or b.shape[-2] != a.shape[-1])


def solve(x1: Tensor, x2: Tensor, /) -> Tensor:
    """Solve ``x1 @ out = x2`` (x2 a vector, or torch's stack of vectors ``x1.shape[:-1]``
    where the standard's matrix reading does not fit)."""
    return solve_with_rule(x1, x2, torch_rule=False)


def solve_with_rule(x1: Tensor, x2: Tensor, torch_rule: bool) -> Tensor:
    """:func:`solve` with the vector rule of the namespace it was called through
    (:func:`_vector_rhs`): the standard's (``omnitensor.linalg``) or torch's (the torch
    face's ``linalg``, ``solve_ex``)."""
    same_device("linalg.solve", x1, x2)
    a, b = floating(x1), floating(x2)
    d = _dt.promote_types(a.dtype, b.dtype)
    a, b = a.to(d), b.to(d)
    _square("solve", a)
    vec = _vector_rhs(a, b, torch_rule)
    # (M,) means (..., M, 1) for every matrix of x1; torch's (..., M) one column each
    bb = (b.reshape(-1, 1) if b.ndim == 1 else b.unsqueeze(-1)) if vec else b
    if bb.shape[-2] != a.shape[-1]:
        raise ShapeError(f"linalg.solve: shapes {tuple(a.shape)} and {tuple(b.shape)} do not "
                         f"match")
    batch = broadcast_shapes(a.shape[:-2], bb.shape[:-2])
    ab = a.broadcast_to(batch + a.shape[-2:]).contiguous()
    bbb = bb.broadcast_to(batch + bb.shape[-2:]).contiguous()
    out = _wrap(_native("solve", ab, bbb), a, d)
    if needs_grad(ab, bbb):
        record("LinalgSolveExBackward0", _solve_backward, out, (ab, bbb), (ab, out))
    return out[..., 0] if vec else out


def _solve_backward(node: Any, g: Tensor) -> tuple:
    a, x = node.saved_tensors
    gb = solve(a.mT.conj(), g)
    ga = -(gb @ x.mT.conj()) if node.needs_input_grad[0] else None
    return ga, gb


def cholesky(x: Tensor, /, *, upper: bool = False) -> Tensor:
    """Lower Cholesky factor (upper with ``upper=True``) of Hermitian positive-definite
    matrices."""
    x = floating(x)
    _square("cholesky", x)
    low = _wrap(_native("cholesky", x), x, x.dtype)
    if needs_grad(x):
        record("LinalgCholeskyExBackward0", _cholesky_backward, low, (x,), (low,))
    return low.mT.conj() if upper else low


def _cholesky_backward(node: Any, g: Tensor) -> tuple:
    # Murray (2016): phi(L^H G) with phi = lower triangle, halved diagonal
    (low,) = node.saved_tensors
    p = low.mT.conj() @ g
    p = tril(p) - 0.5 * eye(p.shape[-1], dtype=p.dtype, device=p.device) * p
    linv = inv(low)
    s = linv.mT.conj() @ p @ linv
    return (0.5 * (s + s.mT.conj()),)


def _hermitian_from(x: Tensor, uplo: str) -> Tensor:
    """The Hermitian matrix whose ``uplo`` triangle ('L' or 'U') is ``x``'s (torch and
    LAPACK read only that triangle)."""
    if uplo not in ("L", "U"):
        raise ValueError(f"linalg.eigh: UPLO must be 'L' or 'U', got {uplo!r}")
    part = tril(x, -1) if uplo == "L" else triu(x, 1)
    d = _torch_diagonal(x, 0, -2, -1)
    return part + part.mT.conj() + (d.real.to(x.dtype) if x.dtype.kind == "c" else d).diag_embed()


def eigh(x: Tensor, /, UPLO: str = "L") -> EighResult:  # torch's name
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices, read from the
    ``UPLO`` triangle."""
    x = floating(x)
    _square("eigh", x)
    # torch's gradient is the Hermitian one, reaching both triangles of x (as if x were
    # Hermitian), not a derivative through the triangle read: so no graph through this
    with no_grad_ctx():
        h = _hermitian_from(x, UPLO)
    w, v = _native("eigh", h)
    wt, vt = _wrap(w, x, x.dtype.to_real()), _wrap(v, x, x.dtype)
    if needs_grad(x):
        record("LinalgEighBackward0", _eigh_backward, (wt, vt), (x,), (wt, vt))
    return EighResult(wt, vt)


def _eigh_backward(node: Any, gw: Tensor, gv: Tensor) -> tuple:
    w, v = node.saved_tensors
    vh = v.mT.conj()
    inner = (gw.to(v.dtype)).diag_embed() if gw is not None else 0
    if gv is not None:
        diff = w.unsqueeze(-2) - w.unsqueeze(-1)
        f = where(diff == 0, math.inf, diff).reciprocal()
        inner = inner + f.to(v.dtype) * (vh @ gv)
    ga = v @ inner @ vh
    return (0.5 * (ga + ga.mT.conj()),)


def eigvalsh(x: Tensor, /, UPLO: str = "L") -> Tensor:  # torch's name
    return eigh(x, UPLO).eigenvalues


def eig(x: Tensor, /) -> tuple[Tensor, Tensor]:
    """General eigendecomposition (complex results; computed on the host where the
    backend lacks it), differentiable as torch's (eigenvectors of unit norm)."""
    x = floating(x)
    _square("eig", x)
    w, v = _native("eig", x)
    # complex always, as torch: NumPy answers an empty (or all-real) stack in real dtypes
    cd = x.dtype.to_complex()
    wt, vt = _wrap(w, x), _wrap(v, x)
    wt, vt = (t if t.dtype is cd else t.to(cd) for t in (wt, vt))
    if needs_grad(x):
        record("LinalgEigBackward0", _lb.eig_backward, (wt, vt), (x,), (wt, vt), real=x.dtype.kind != "c")
    return wt, vt


def eigvals(x: Tensor, /) -> Tensor:
    return eig(x)[0]


def qr(x: Tensor, /, *, mode: str = "reduced") -> QRResult:
    """QR decomposition (``mode`` 'reduced', 'complete' or 'r'), differentiable as torch's
    (reduced mode, or complete with m <= n)."""
    x = floating(x)
    if x.ndim < 2:
        raise ShapeError("linalg.qr: expected a matrix (or a stack)")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    q, r = _native("qr", x, mode="reduced" if mode == "r" else mode)
    qt, rt = _wrap(q, x, x.dtype), _wrap(r, x, x.dtype)
    if mode == "r":
        qt = zeros((0,), dtype=x.dtype, device=x.device)
    elif needs_grad(x):
        record("LinalgQrBackward0", _lb.qr_backward, (qt, rt), (x,), (qt, rt), mode=mode)
    return QRResult(qt, rt)


def svd(x: Tensor, /, full_matrices: bool = True, *, driver: Any = None) -> SVDResult:
    """Singular value decomposition ``x = U diag(S) Vh``, differentiable as torch's
    (``driver`` is a cuSOLVER choice: accepted, and the library's own is used)."""
    x = floating(x)
    if x.ndim < 2:
        raise ShapeError("linalg.svd: expected a matrix (or a stack)")
    u, s, vh = _native("svd", x, full_matrices=full_matrices)
    ut, st, vht = _wrap(u, x, x.dtype), _wrap(s, x, x.dtype.to_real()), _wrap(vh, x, x.dtype)
    if needs_grad(x):
        record("LinalgSvdBackward0", _lb.svd_backward, (ut, st, vht), (x,), (ut, st, vht),
               full=full_matrices and x.shape[-1] != x.shape[-2])
    return SVDResult(ut, st, vht)


def svdvals(x: Tensor, /) -> Tensor:
    """Singular values (descending), differentiable: d s = diag(U^H dX V)."""
    x = floating(x)
    if needs_grad(x):
        with no_grad_ctx():
            u, s, vh = svd(x.detach(), full_matrices=False)
        out = s.clone()
        record("LinalgSvdvalsBackward0", _svdvals_backward, out, (x,), (u, vh))
        return out
    return svd(x, full_matrices=False).S


def _svdvals_backward(node: Any, g: Tensor) -> tuple:
    u, vh = node.saved_tensors
    return ((u * g.unsqueeze(-2).to(u.dtype)) @ vh,)


def _cutoff(s: Tensor, shape: tuple, atol: Any, rtol: Any) -> Any:
    """torch's tolerance: ``max(atol, rtol * max(S))``; rtol defaults to eps * max(m, n)
    when atol is not given, else to 0."""
    if rtol is None:
        rtol = max(shape[-2:]) * _dt.finfo(s.dtype).eps if atol is None else 0.0
    if isinstance(rtol, Tensor):  # one tolerance per matrix of the stack
        rtol = rtol.unsqueeze(-1)
    cut = s.amax(dim=-1, keepdim=True) * rtol if s.shape[-1] else s.sum(dim=-1, keepdim=True)
    if atol is not None:
        a = atol.unsqueeze(-1) if isinstance(atol, Tensor) else atol
        cut = maximum(cut, a) if isinstance(a, Tensor) else cut.clamp(min=a)
    return cut


def pinv(x: Tensor, /, *, atol: Any = None, rtol: Any = None, hermitian: bool = False,
         rcond: Any = None) -> Tensor:
    """Moore-Penrose pseudo-inverse (values below ``max(atol, rtol * max|S|)`` count as
    zero); ``hermitian=True`` reads the lower triangle and goes through ``eigh``."""
    x = floating(x)
    if rcond is not None and rtol is None:  # torch.pinverse's old name
        rtol = rcond
    if x.numel() == 0:
        return zeros(x.shape[:-2] + (x.shape[-1], x.shape[-2]), dtype=x.dtype, device=x.device)
    if hermitian:
        _square("pinv", x)
    with no_grad_ctx():  # the gradient is torch's closed form below, not through eigh/svd
        if hermitian:
            w, v = eigh(x)
            cut = _cutoff(w.abs(), x.shape, atol, rtol)
            winv = where(w.abs() > cut, 1 / where(w.abs() > cut, w, 1), 0)
            out = (v * winv.unsqueeze(-2).to(x.dtype)) @ v.mT.conj()
        else:
            u, s, vh = svd(x, full_matrices=False)
            cut = _cutoff(s, x.shape, atol, rtol)
            sinv = where(s > cut, 1 / where(s > cut, s, 1), 0)
            out = (vh.mT.conj() * sinv.unsqueeze(-2).to(x.dtype)) @ u.mT.conj()
    if needs_grad(x):
        record("LinalgPinvBackward0", _pinv_backward, out, (x,), (out, x))
    return out


def _pinv_backward(node: Any, g: Tensor) -> tuple:
    """torch's ``pinv_backward``: the derivative of the pseudo-inverse as a general matrix
    (also for ``hermitian=True``), finite at rank-deficient inputs; the products are
    ordered to keep the intermediates min(m, n) wide."""
    p, a = node.saved_tensors
    ph, gh = p.mT.conj(), g.mT.conj()
    if a.shape[-2] <= a.shape[-1]:
        k = gh @ p
        k_ph = k @ ph
        return (-(p @ k).mT.conj() + k_ph - (a @ p) @ k_ph + (ph @ p) @ (gh - k @ a),)
    k = p @ gh
    ph_k = ph @ k
    return (-(k @ p).mT.conj() + (gh - a @ k) @ p @ ph + ph_k - ph_k @ p @ a,)


def matrix_rank(x: Tensor, /, *, atol: Any = None, rtol: Any = None, hermitian: bool = False,
                tol: Any = None) -> Tensor:
    """The number of singular values (``|eigenvalues|`` with ``hermitian``) above
    ``max(atol, rtol * max)`` (``tol`` is torch's older absolute tolerance)."""
    x = floating(x)
    if tol is not None and atol is None:
        atol, rtol = tol, 0.0 if rtol is None else rtol
    s = eigvalsh(x).abs() if hermitian else svdvals(x)
    return (s > _cutoff(s, x.shape, atol, rtol)).sum(dim=-1)


def matrix_power(x: Tensor, n: int, /) -> Tensor:
    """``x`` to the integer power ``n`` (negative powers invert first)."""
    _square("matrix_power", x)
    if n == 0:
        return eye(x.shape[-1], dtype=x.dtype, device=x.device).broadcast_to(x.shape).clone()
    if n < 0:
        x, n = inv(x), -n
    result = None
    base = x
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    assert result is not None  # n >= 1 here
    return result


def _matrix_dims(dim: Any, ndim: int) -> tuple[int, int]:
    """``dim`` of a matrix norm as two distinct non-negative axes (torch's checks)."""
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        shown = ", ".join(str(d) for d in dim) if isinstance(dim, (tuple, list)) else dim
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {shown}")
    d0, d1 = (normalize_axis(d, ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    return d0, d1


def matrix_norm(x: Tensor, /, ord: Any = "fro", dim: Any = (-2, -1),  # noqa: A002
                keepdim: bool = False, *, keepdims: bool = False, dtype: Any = None) -> Tensor:
    """Frobenius, nuclear, 1/-1/inf/-inf or 2/-2 norms of the matrices over ``dim`` (the
    last two axes by default); ``dtype``: the input is cast to it first (torch)."""
    keep = keepdims or keepdim
    x = floating(x) if dtype is None else x.to(dtype)
    d0, d1 = _matrix_dims(dim, x.ndim)
    if ord == "fro":
        return vector_norm(x, 2, axis=(d0, d1), keepdims=keep)
    m = x.movedim((d0, d1), (-2, -1))  # the matrices last: rows -2, columns -1
    if ord == "nuc":
        r = svdvals(m).sum(dim=-1)
    elif ord in (2, -2):
        s = svdvals(m)
        r = s.amax(dim=-1) if ord == 2 else s.amin(dim=-1)
    elif ord in (1, -1):
        c = m.abs().sum(dim=-2)
        r = c.amax(dim=-1) if ord == 1 else c.amin(dim=-1)
    elif ord in (math.inf, -math.inf):
        c = m.abs().sum(dim=-1)
        r = c.amax(dim=-1) if ord == math.inf else c.amin(dim=-1)
    else:
        raise ValueError(f"matrix_norm: unsupported ord {ord!r}")
    if keep:
        for d in sorted((d0, d1)):
            r = r.unsqueeze(d)
    return r


def norm(x: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """torch.linalg.norm: vector norm, or matrix norm for 2 axes with ord given."""
    if ord is not None and (isinstance(ord, str) or (dim is not None and len(dim) == 2)
                            if isinstance(dim, (tuple, list)) else isinstance(ord, str)):
        return matrix_norm(x, ord, dim=dim if dim is not None else (-2, -1), keepdim=keepdim)
    return vector_norm(x, 2 if ord is None else ord, dim, keepdim)


def diagonal(x: Tensor, /, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Diagonals of the last two axes (Array API), or of ``dim1``/``dim2`` (torch's
    ``linalg.diagonal``)."""
    return _torch_diagonal(x, offset, dim1, dim2)


def trace(x: Tensor, /, *, offset: int = 0, dtype: Any = None) -> Tensor:
    """Sum of the diagonals of the last two axes (Array API)."""
    d = diagonal(x, offset=offset)
    return d.sum(dim=-1, dtype=dtype)


def cross(x1: Tensor, x2: Tensor, /, *, axis: int = -1, dim: int | None = None,
          out: Tensor | None = None) -> Tensor:
    """Cross product of 3-vectors along ``axis`` (torch.linalg's ``dim``), with
    broadcasting."""
    if dim is not None:
        axis = dim
    if out is not None:
        from .out_arg import write_out
        return write_out("linalg.cross", cross(x1, x2, axis=axis), out)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ShapeError(f"linalg.cross: axis {axis} must have size 3")
    shape = broadcast_shapes(x1.shape, x2.shape)
    return _cross(x1.broadcast_to(shape), x2.broadcast_to(shape), axis)


def solve_triangular(a: Tensor, b: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """Solve a triangular system (through ``solve``; torch's signature)."""
    t = triu(a) if upper else tril(a)
    if unitriangular:
        t = t - _torch_diagonal(t, 0, -2, -1).diag_embed() + eye(a.shape[-1], dtype=a.dtype,
                                                                   device=a.device)
    if left:
        return solve(t, b)
    return solve(t.mT, b.mT).mT


class LstsqResult(NamedTuple):
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


def lstsq(a: Tensor, b: Tensor, rcond: Any = None, *, driver: str | None = None
          ) -> LstsqResult:
    """Least squares ``min ||a x - b||`` through the pseudo-inverse (singular values below
    ``rcond * max(S)`` count as zero), with torch's outputs per ``driver``: ``rank`` for
    every driver but 'gels', ``singular_values`` for 'gelsd'/'gelss', ``residuals`` (the
    squared residual norms) when m > n and every matrix has full rank."""
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise ValueError(f"linalg.lstsq: driver must be one of gels, gelsy, gelsd, gelss, "
                         f"got {driver!r}")
    driver = driver or "gelsy"  # torch's default on the CPU
    a, b = floating(a), floating(b)
    vec = b.ndim == a.ndim - 1
    bb = b.unsqueeze(-1) if vec else b
    x = pinv(a, rtol=rcond) @ bb
    empty = zeros((0,), dtype=a.dtype.to_real(), device=a.device)
    with no_grad_ctx():  # rank and singular_values are not differentiable (torch's)
        s = svdvals(a)
    rank = (s > _cutoff(s, a.shape, None, rcond)).sum(dim=-1)
    # torch's residuals are differentiable even when empty: an empty slice of the solution
    flat = x.reshape(-1)[:0]
    residuals = flat.real if flat.dtype.kind == "c" else flat
    m, n = a.shape[-2], a.shape[-1]
    if m > n and driver != "gelsy" and bool((rank == n).all().item()):
        r = a @ x - bb
        residuals = (r * r.conj()).real.sum(dim=-2)
    sv = s if driver in ("gelsd", "gelss") else empty
    return LstsqResult(x[..., 0] if vec else x, residuals,
                       rank if driver != "gels" else zeros((0,), dtype=_dt.int64,
                                                           device=a.device), sv)
