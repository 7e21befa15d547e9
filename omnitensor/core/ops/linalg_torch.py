"""torch's top-level linear algebra, older than ``torch.linalg`` and still in real code:
``torch.svd`` (returns V, not Vh), ``torch.qr(some=)``, ``cholesky``, ``cholesky_solve``,
``cholesky_inverse``, ``lu``/``lu_solve``/``lu_unpack``, ``triangular_solve``, ``geqrf``,
``orgqr``, ``ormqr``, ``chain_matmul``, ``vander``, ``svd_lowrank``, ``pca_lowrank``; and
the functions torch 2 removed (``symeig``, ``eig``, ``lstsq``, ``matrix_rank``), which
raise torch's error naming the ``torch.linalg`` replacement.

Every one is written over ``linalg.py`` / ``linalg_factor.py``, so it has their devices and
gradients.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from ...errors import ShapeError
from .. import dtypes as _dt
from ..tensor import Tensor
from .creation import arange, eye, tril, triu
from .dtype_rules import floating
from .linalg import cholesky as _cholesky, qr as _qr, solve_triangular
from .linalg import svd as _svd
from .linalg_factor import (_perm_from_pivots, householder_product, lu_factor_ex,
                            lu_solve as _lu_solve)

__all__ = ["svd", "qr", "cholesky", "cholesky_solve", "cholesky_inverse", "lu", "lu_solve",
           "lu_unpack", "triangular_solve", "geqrf", "orgqr", "ormqr", "chain_matmul",
           "vander", "svd_lowrank", "pca_lowrank", "symeig", "eig", "lstsq", "matrix_rank"]


class SVD(NamedTuple):
    U: Tensor
    S: Tensor
    V: Tensor


class QR(NamedTuple):
    Q: Tensor
    R: Tensor


class TriangularSolve(NamedTuple):
    solution: Tensor
    cloned_coefficient: Tensor


class LUUnpack(NamedTuple):
    P: Tensor
    L: Tensor
    U: Tensor


class GEQRF(NamedTuple):
    a: Tensor
    tau: Tensor


def svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> SVD:  # noqa: A002
    """``(U, S, V)`` with ``input = U diag(S) V^H`` (``V``, not ``Vh``); without
    ``compute_uv``, U and V are zero-filled, as torch's."""
    r = _svd(input, full_matrices=not some)
    if not compute_uv:
        return SVD(r.U.detach() * 0, r.S, r.Vh.mT.detach() * 0)
    return SVD(r.U, r.S, r.Vh.mT.conj())


def qr(input: Tensor, some: bool = True) -> QR:  # noqa: A002
    return QR(*_qr(input, mode="reduced" if some else "complete"))


def cholesky(input: Tensor, upper: bool = False) -> Tensor:  # noqa: A002
    return _cholesky(input, upper=upper)


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """``X`` with ``A X = B`` for ``A = L L^H`` (``U^H U`` with ``upper``)."""
    low = L.mT.conj() if upper else L
    y = solve_triangular(low, B, upper=False)
    return solve_triangular(low.mT.conj(), y, upper=True)


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """``(L L^H)^{-1}`` from a Cholesky factor."""
    ident = eye(L.shape[-1], dtype=L.dtype, device=L.device).broadcast_to(L.shape)
    return cholesky_solve(ident, L, upper)


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple:
    """``(LU, pivots[, infos])``: torch's older spelling of ``linalg.lu_factor_ex``."""
    r = lu_factor_ex(A, pivot=pivot)
    return (r.LU, r.pivots, r.info) if get_infos else (r.LU, r.pivots)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    return _lu_solve(LU_data, LU_pivots, b)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> LUUnpack:
    """``(P, L, U)`` from ``lu_factor``'s packed output (``A = P L U``)."""
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    empty = LU_data.new_empty((0,))
    if unpack_data:
        low = tril(LU_data[..., :, :k], -1) + eye(m, k, dtype=LU_data.dtype,
                                                  device=LU_data.device)
        up = triu(LU_data[..., :k, :])
    else:
        low = up = empty
    if unpack_pivots:
        perm = _perm_from_pivots(LU_pivots, m)
        rows = arange(m, dtype=_dt.int64, device=LU_data.device)
        p = (perm.unsqueeze(-2) == rows.unsqueeze(-1)).to(LU_data.dtype)
    else:
        p = empty
    return LUUnpack(p, low, up)


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> TriangularSolve:
    """``(X, A.clone())`` with ``op(A) X = b``, ``op`` the transpose when asked."""
    t = triu(A) if upper else tril(A)
    if transpose:
        t, upper = t.mT, not upper
    x = solve_triangular(t, b, upper=upper, unitriangular=unitriangular)
    return TriangularSolve(x, A.clone())


def geqrf(input: Tensor) -> GEQRF:  # noqa: A002
    """LAPACK's Householder QR: R on and above the diagonal, the reflectors' vectors below
    it, and their scalars ``tau`` (``orgqr``/``householder_product`` rebuild Q)."""
    a = floating(input).clone()
    m, n = a.shape[-2], a.shape[-1]
    taus = []
    for j in range(min(m, n)):
        x = a[..., j:, j]
        alpha = x[..., 0]
        rest = x[..., 1:]
        below = (rest * rest.conj()).real.sum(dim=-1)
        norm = (below + (alpha * alpha.conj()).real).sqrt()
        sign = (alpha.real >= 0).to(norm.dtype) * 2 - 1
        beta = -sign * norm                                  # real, as LAPACK's
        # LAPACK's larfg reflects nothing (tau = 0, alpha kept, sign included) when the
        # column is already zero below the diagonal and alpha is real
        reflect = below != 0
        if a.dtype.kind == "c":
            reflect = reflect.logical_or(alpha.imag != 0)
        safe = (alpha - beta).where(reflect, 1)
        tau = ((beta - alpha) / beta.where(reflect, 1)).where(reflect, 0)
        v = x / safe.unsqueeze(-1)
        v = v.clone()
        v[..., 0] = 1
        block = a[..., j:, j:]
        block = block - tau.conj()[..., None, None] * v.unsqueeze(-1) * \
            (v.conj().unsqueeze(-2) @ block)
        a = a.clone()
        a[..., j:, j:] = block
        a[..., j, j] = beta.to(a.dtype).where(reflect, alpha)
        a[..., j + 1:, j] = v[..., 1:].where(reflect.unsqueeze(-1), rest)
        taus.append(tau.to(a.dtype))
    from .join import stack
    tau_all = stack(taus, dim=-1) if taus else a.new_empty(a.shape[:-2] + (0,))
    return GEQRF(a, tau_all)


def orgqr(input: Tensor, tau: Tensor) -> Tensor:  # noqa: A002
    return householder_product(input, tau)


def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True,  # noqa: A002
          transpose: bool = False) -> Tensor:
    """``op(Q) @ other`` (``other @ op(Q)`` when not ``left``) with Q = H_1 ... H_k
    from ``geqrf``'s reflectors; ``op`` is the conjugate transpose when asked."""
    m = input.shape[-2]
    k = tau.shape[-1]
    ident = eye(m, dtype=input.dtype, device=input.device)
    c = other
    # op(Q) C = H_1 ... H_k C (apply H_k first) or Q^H C = H_k ... H_1 C (H_1 first)
    order = range(k) if transpose == left else range(k - 1, -1, -1)
    for i in order:
        v = tril(input, -1)[..., :, i] + ident[:, i]
        t = tau[..., i].conj() if transpose else tau[..., i]
        if left:
            c = c - t[..., None, None] * v.unsqueeze(-1) * (v.conj().unsqueeze(-2) @ c)
        else:
            c = c - t[..., None, None] * (c @ v.unsqueeze(-1)) * v.conj().unsqueeze(-2)
    return c


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of 2-D matrices, left to right (torch's older ``linalg.multi_dot``)."""
    if not matrices:
        raise ValueError("chain_matmul: expected at least one matrix")
    if any(m.ndim != 2 for m in matrices):
        raise ShapeError("chain_matmul: every argument must be a 2-D matrix")
    out = matrices[0]
    for m in matrices[1:]:
        out = out @ m
    return out


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """NumPy's Vandermonde matrix of a 1-D ``x`` (decreasing powers unless
    ``increasing``)."""
    if x.ndim != 1:
        raise ShapeError(f"vander: x must be 1-D, got {x.ndim}-D")
    n = x.shape[0] if N is None else N
    kind_dtype = x.dtype if x.dtype.kind in "fc" else _dt.int64
    powers = arange(n, dtype=kind_dtype, device=x.device)
    if not increasing:
        powers = powers.flip(0)
    return x.to(kind_dtype).unsqueeze(-1) ** powers


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int = 2, M: Tensor | None = None
                ) -> SVD:
    """A rank-``q`` SVD of ``A - M``: the leading ``q`` singular triplets, computed exactly
    (torch's randomized range finder approximates the same triplets)."""
    a = A if M is None else A - M
    k = min(q if q is not None else 6, a.shape[-2], a.shape[-1])
    r = _svd(a, full_matrices=False)
    return SVD(r.U[..., :k], r.S[..., :k], r.Vh[..., :k, :].mT.conj())


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2
                ) -> SVD:
    """PCA of the rows of ``A``: :func:`svd_lowrank` of ``A`` less its column means."""
    k = min(6, A.shape[-2], A.shape[-1]) if q is None else q
    a = A - A.mean(dim=-2, keepdim=True) if center else A
    return svd_lowrank(a, k)


def _removed(name: str, use: str) -> Any:
    def fn(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now "
                           f"removed. torch.{name} is removed: use {use} instead (as torch "
                           f"2 says).")
    fn.__name__ = name
    fn.__doc__ = f"Removed from torch 2: raises, naming ``{use}``."
    return fn


symeig = _removed("symeig", "torch.linalg.eigh")
eig = _removed("eig", "torch.linalg.eig")
lstsq = _removed("lstsq", "torch.linalg.lstsq")
matrix_rank = _removed("matrix_rank", "torch.linalg.matrix_rank")
