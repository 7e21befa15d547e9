"""torch.linalg's factorizations and helpers beyond the Array API extension: LU (``lu``,
``lu_factor``, ``lu_solve``), the ``*_ex`` variants that report failures in ``info`` instead
of raising, ``cond``, ``matrix_exp``, ``multi_dot``, ``tensorinv``/``tensorsolve``,
``vander`` and ``householder_product``.

Each is a composite of core ops, so it runs on every device and its gradient comes from the
ops it is made of. LU uses partial pivoting computed on the device (the pivot row is an
``argmax``; rows are swapped with a gather), one step per column.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

from ...errors import ShapeError
from .. import dtypes as _dt
from ..graph import no_grad_ctx
from ..tensor import Tensor
from .creation import arange, eye, full, tril, triu, zeros
from .dtype_rules import floating
from .join import cat
from .linalg import (LinAlgError, _square, _vector_rhs, cholesky, inv, matrix_norm,
                     solve, solve_with_rule, svdvals)
from .ternary import where

__all__ = ["lu_factor", "lu_factor_ex", "lu", "lu_solve", "inv_ex", "cholesky_ex",
           "solve_ex", "cond", "matrix_exp", "multi_dot", "tensorinv", "tensorsolve",
           "vander", "householder_product"]


class LUFactorResult(NamedTuple):
    LU: Tensor
    pivots: Tensor


class LUFactorExResult(NamedTuple):
    LU: Tensor
    pivots: Tensor
    info: Tensor


class LUResult(NamedTuple):
    P: Tensor
    L: Tensor
    U: Tensor


class InvExResult(NamedTuple):
    inverse: Tensor
    info: Tensor


class CholeskyExResult(NamedTuple):
    L: Tensor
    info: Tensor


class SolveExResult(NamedTuple):
    result: Tensor
    info: Tensor


def _check_errors(name: str, info: Tensor) -> None:
    if bool((info != 0).any().item()):
        first = int(info.reshape(-1)[(info.reshape(-1) != 0).int().argmax()].item())
        raise LinAlgError(f"linalg.{name}: the factorization failed at step {first} (the "
                          f"matrix is singular or not positive definite); info holds the "
                          f"step per matrix")


# ------------------------------------------------------------------------------- LU
def _lu_steps(a: Tensor, pivot: bool) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(LU, perm, pivots, info) of ``a`` (..., m, n): ``a[perm] = L @ U`` with L unit
    lower; pivots are LAPACK's (1-based int32: at step j rows j and pivots[j]-1 swap)."""
    m, n = a.shape[-2], a.shape[-1]
    batch = a.shape[:-2]
    rows = arange(m, dtype=_dt.int64, device=a.device)
    perm = rows.broadcast_to(batch + (m,))
    info = zeros(batch, dtype=_dt.int32, device=a.device)
    lu_, steps = a.clone(), []
    for j in range(min(m, n)):
        if pivot:
            p = lu_[..., j:, j].abs().argmax(dim=-1) + j           # (...,) pivot row
            pj = p.unsqueeze(-1)
            swap = where(rows == j, pj, where(rows == pj, j, rows))  # (..., m)
            lu_ = lu_.take_along_dim(swap.unsqueeze(-1).expand(batch + (m, n)), dim=-2)
            perm = perm.take_along_dim(swap, dim=-1)
            steps.append(pj)
        else:
            steps.append(full(batch + (1,), j, dtype=_dt.int64, device=a.device))
        head = lu_[..., j, j]
        zero = head == 0
        info = where((info == 0) & zero, j + 1, info).to(_dt.int32)
        low = lu_[..., j + 1:, j] / where(zero, 1, head).unsqueeze(-1)
        trailing = lu_[..., j + 1:, j + 1:] - low.unsqueeze(-1) * lu_[..., j, j + 1:].unsqueeze(-2)
        lu_ = lu_.clone()
        lu_[..., j + 1:, j] = low
        lu_[..., j + 1:, j + 1:] = trailing
    pivots = (cat(steps, dim=-1) if steps else zeros(batch + (0,), dtype=_dt.int64,
                                                      device=a.device)) + 1
    return lu_, perm, pivots.to(_dt.int32), info


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False
                 ) -> LUFactorExResult:
    """``(LU, pivots, info)``: L (unit diagonal, below) and U packed in one matrix, LAPACK's
    1-based int32 pivots, and per matrix 0 or the 1-based step whose pivot is zero."""
    a = floating(A)
    if a.ndim < 2:
        raise ShapeError(f"linalg.lu_factor: expected a (..., m, n) matrix stack, got shape "
                         f"{tuple(a.shape)}")
    lu_, _perm, pivots, info = _lu_steps(a, pivot)
    if check_errors:
        _check_errors("lu_factor_ex", info)
    return LUFactorExResult(lu_, pivots, info)


def lu_factor(A: Tensor, *, pivot: bool = True) -> LUFactorResult:
    """``(LU, pivots)`` of :func:`lu_factor_ex` (an exactly singular matrix still factors)."""
    r = lu_factor_ex(A, pivot=pivot)
    return LUFactorResult(r.LU, r.pivots)


def _perm_from_pivots(pivots: Tensor, m: int) -> Tensor:
    """The row order ``perm`` (``A[perm] = L U``) that LAPACK's pivots describe."""
    with no_grad_ctx():
        piv = pivots.to(_dt.int64) - 1
        perm = arange(m, dtype=_dt.int64, device=pivots.device).broadcast_to(
            piv.shape[:-1] + (m,)).clone()
        for j in range(piv.shape[-1]):
            p = piv[..., j:j + 1]
            a, b = perm[..., j:j + 1], perm.take_along_dim(p, dim=-1)
            perm = perm.scatter(-1, p, a).scatter(-1, p.new_full(p.shape, j), b)
        return perm


def lu(A: Tensor, *, pivot: bool = True) -> LUResult:
    """``(P, L, U)`` with ``A = P @ L @ U``."""
    a = floating(A)
    lu_, perm, _pivots, _info = _lu_steps(a, pivot)
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    low = tril(lu_[..., :, :k], -1) + eye(m, k, dtype=a.dtype, device=a.device)
    up = triu(lu_[..., :k, :])
    cols = arange(m, dtype=_dt.int64, device=a.device)
    p = (perm.unsqueeze(-2) == cols.unsqueeze(-1)).to(a.dtype)   # P[perm[i], i] = 1
    return LUResult(p, low, up)


def _substitute(t: Tensor, b: Tensor, upper: bool, unit: bool) -> Tensor:
    """Triangular solve by substitution, row by row: where a pivot is zero the result is
    inf/nan, as LAPACK's, where ``solve`` refuses the singular matrix."""
    n = t.shape[-1]
    rows: list[Tensor | None] = [None] * n
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        acc = b[..., i, :]
        for j in (range(i + 1, n) if upper else range(i)):
            acc = acc - t[..., i, j].unsqueeze(-1) * rows[j]
        rows[i] = acc if unit else acc / t[..., i, i].unsqueeze(-1)
    from .join import stack
    return stack(rows, dim=-2)  # type: ignore[arg-type]


def _triangular(t: Tensor, b: Tensor, upper: bool, unit: bool = False) -> Tensor:
    from .linalg import solve_triangular
    try:
        return solve_triangular(t, b, upper=upper, unitriangular=unit)
    except LinAlgError:
        return _substitute(t, b, upper, unit)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
             adjoint: bool = False) -> Tensor:
    """Solve ``A X = B`` (``X A = B`` with ``left=False``; ``A^H`` with ``adjoint``) from
    :func:`lu_factor`'s output."""
    n = LU.shape[-1]
    _square("lu_solve", LU)
    perm = _perm_from_pivots(pivots, n)
    low = tril(LU, -1) + eye(n, dtype=LU.dtype, device=LU.device)
    up = triu(LU)
    onehot = (perm.unsqueeze(-2) == arange(n, dtype=_dt.int64, device=LU.device)
              .unsqueeze(-1)).to(LU.dtype)                 # P with A = P L U
    if not left:   # X A = B  <=>  A^H X^H = B^H
        return lu_solve(LU, pivots, B.mT.conj(), adjoint=not adjoint).mT.conj()
    if adjoint:    # A^H X = B: U^H L^H P^H X = B
        y = _triangular(up.mT.conj(), B, upper=False)
        z = _triangular(low.mT.conj(), y, upper=True, unit=True)
        return onehot @ z
    y = _triangular(low, onehot.mT @ B, upper=False, unit=True)
    return _triangular(up, y, upper=True)


# ---------------------------------------------------------------------- *_ex variants
def inv_ex(A: Tensor, *, check_errors: bool = False) -> InvExResult:
    """``(inverse, info)``: info is 0, or the 1-based LU step of a zero pivot (the inverse
    of such a matrix holds inf/nan, as torch's)."""
    a = floating(A)
    _square("inv_ex", a)
    with no_grad_ctx():
        info = _lu_steps(a.detach(), True)[3]
    if check_errors:
        _check_errors("inv_ex", info)
    if not bool((info != 0).any().item()):
        return InvExResult(inv(a), info)
    r = lu_factor(a)
    ident = eye(a.shape[-1], dtype=a.dtype, device=a.device).broadcast_to(a.shape)
    return InvExResult(lu_solve(r.LU, r.pivots, ident), info)


def _cholesky_info(a: Tensor) -> Tensor:
    """Per matrix, 0 or the order of the first leading minor that is not positive
    definite (LAPACK's potrf info), by an unblocked Cholesky on the host."""
    import numpy as np
    host = a.detach().cpu().numpy()
    flat = host.reshape((-1,) + tuple(host.shape[-2:]))
    out = np.zeros(len(flat), np.int32)
    for b, m in enumerate(flat):
        low = np.zeros_like(m)
        for j in range(m.shape[0]):
            d = m[j, j] - np.vdot(low[j, :j], low[j, :j])
            if not np.isfinite(d.real) or d.real <= 0:
                out[b] = j + 1
                break
            low[j, j] = np.sqrt(d.real)
            low[j + 1:, j] = (m[j + 1:, j] - low[j + 1:, :j] @ low[j, :j].conj()) / low[j, j]
    from .creation import tensor
    return tensor(out.reshape(host.shape[:-2]), device=a.device)


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False
                ) -> CholeskyExResult:
    """``(L, info)``: info is 0, or the order of the first leading minor that is not
    positive definite (then L holds nan for that matrix)."""
    a = floating(A)
    _square("cholesky_ex", a)
    try:
        return CholeskyExResult(cholesky(a, upper=upper),
                                zeros(a.shape[:-2], dtype=_dt.int32, device=a.device))
    except LinAlgError:
        info = _cholesky_info(a)
    if check_errors:
        _check_errors("cholesky_ex", info)
    bad = (info != 0).unsqueeze(-1).unsqueeze(-1)
    safe = where(bad, eye(a.shape[-1], dtype=a.dtype, device=a.device), a)
    return CholeskyExResult(where(bad, math.nan, cholesky(safe, upper=upper)), info)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False
             ) -> SolveExResult:
    """``(result, info)`` of :func:`solve` (``left=False`` solves ``X A = B``)."""
    a = floating(A)
    _square("solve_ex", a)
    with no_grad_ctx():
        info = _lu_steps(a.detach(), True)[3]
    if check_errors:
        _check_errors("solve_ex", info)
    if not left:
        return SolveExResult(solve_with_rule(a.mT, B.mT, torch_rule=True).mT, info)
    if bool((info != 0).any().item()):  # a singular matrix: inf/nan, as LAPACK gives
        r = lu_factor(a)
        vec = _vector_rhs(a, B, torch_rule=True)
        x = lu_solve(r.LU, r.pivots, B.unsqueeze(-1) if vec else B)
        return SolveExResult(x[..., 0] if vec else x, info)
    return SolveExResult(solve_with_rule(a, B, torch_rule=True), info)  # torch-only: its rule


# ------------------------------------------------------------------------ the others
def cond(A: Tensor, p: Any = None) -> Tensor:
    """The condition number in norm ``p`` (None or 2: ratio of extreme singular values)."""
    a = floating(A)
    if p in (None, 2, -2):
        s = svdvals(a)
        big, small = s.amax(dim=-1), s.amin(dim=-1)
        return big / small if p != -2 else small / big
    _square("cond", a)
    return matrix_norm(a, p) * matrix_norm(inv(a), p)


#: the 1-norm up to which the degree-18 series of exp is exact to the dtype's rounding
#: (torch's bounds; float16/bfloat16 compute in float32)
_EXP_THETA_18 = {"float64": 1.090863719290036, "float32": 3.010066362817634}


def matrix_exp(A: Tensor) -> Tensor:
    """``exp(A)`` by scaling and squaring with an 18-term Taylor series (every term is a
    matmul, so it runs on every device and differentiates through). Each matrix of a stack
    is scaled only down to the norm where the series' truncation error is below the
    dtype's rounding (torch's degree-18 bounds): each squaring doubles the relative error,
    so scaling further costs precision. The trace is shifted out first
    (``exp(A) = e^mu exp(A - mu I)``, mu = tr(A) / n: mu I commutes with A), which lowers
    the norm and so the squarings."""
    a = floating(A)
    _square("matrix_exp", a)
    n = a.shape[-1]
    if not a.numel():
        return a.clone()
    ident = eye(n, dtype=a.dtype, device=a.device)
    mu = (a.diagonal(0, -2, -1).sum(dim=-1) / n).unsqueeze(-1).unsqueeze(-1)
    a = a - mu * ident
    squarings = _exp_squarings(a)
    top = int(squarings.amax().item())
    scaled = a / (2.0 ** squarings.to(a.dtype.to_real())).unsqueeze(-1).unsqueeze(-1)
    out = ident + scaled / 18
    for k in range(17, 0, -1):                 # Horner: I + A/1 (I + A/2 (I + ...))
        out = ident + (scaled @ out) / k
    for step in range(top):                    # each matrix squared its own number of times
        more = (squarings > step).unsqueeze(-1).unsqueeze(-1)
        out = where(more, out @ out, out)
    return out * mu.exp()


def _exp_squarings(a: Tensor) -> Tensor:
    """Per matrix: the squarings that bring its 1-norm under the degree-18 bound."""
    theta = _EXP_THETA_18.get(a.dtype.to_real().name, _EXP_THETA_18["float32"])
    with no_grad_ctx():
        norm1 = a.detach().abs().sum(dim=-2).amax(dim=-1)
        s = (norm1 / theta).log2().ceil().clamp(min=0)
        return where(norm1 > theta, s, 0).to(_dt.int64)


def multi_dot(tensors: Any) -> Tensor:
    """The product of a chain of matrices (the first may be a row vector, the last a
    column vector)."""
    ts = list(tensors)
    if len(ts) < 2:
        raise ValueError(f"linalg.multi_dot: expected at least 2 tensors, got {len(ts)}")
    first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
    if any(t.ndim != 2 for t in ts[1:-1]) or ts[0].ndim not in (1, 2) or ts[-1].ndim not in (1, 2):
        raise ShapeError("linalg.multi_dot: the first and last tensors must be 1-D or 2-D "
                         "and the others 2-D")
    mats = [ts[0].unsqueeze(0) if first_vec else ts[0], *ts[1:-1],
            ts[-1].unsqueeze(-1) if last_vec else ts[-1]]
    out = _chain_product(mats)
    if last_vec:
        out = out[..., 0]
    return out[0] if first_vec else out


def _chain_product(mats: list) -> Tensor:
    """The product in torch's order (so it rounds as torch's does): the cheapest
    parenthesization by flop count, the left product on a tie of three, else the first
    cheapest split of the matrix-chain recurrence."""
    if len(mats) == 2:
        return mats[0] @ mats[1]
    dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    if len(mats) == 3:
        a, b, c, d = dims
        if a * c * (b + d) > b * d * (a + c):
            return mats[0] @ (mats[1] @ mats[2])
        return (mats[0] @ mats[1]) @ mats[2]
    n = len(mats)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            cost[i][j] = -1
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] < 0 or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k

    def product(i: int, j: int) -> Tensor:
        if i == j:
            return mats[i]
        k = split[i][j]
        return product(i, k) @ product(k + 1, j)
    return product(0, n - 1)


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``A`` seen as a map from its last dims to its first ``ind`` dims."""
    if ind <= 0:
        raise ValueError(f"linalg.tensorinv: ind must be positive, got {ind}")
    out_shape, in_shape = A.shape[:ind], A.shape[ind:]
    rows = math.prod(out_shape)
    if rows != math.prod(in_shape):
        raise ShapeError(f"linalg.tensorinv: the product of the first {ind} dims ({rows}) "
                         f"must equal that of the others ({math.prod(in_shape)})")
    return inv(A.reshape(rows, -1)).reshape(tuple(in_shape) + tuple(out_shape))


def tensorsolve(A: Tensor, B: Tensor, dims: Any = None) -> Tensor:
    """``X`` with ``tensordot(A, X, X.ndim) = B``."""
    if dims is not None:
        rest = [d % A.ndim for d in dims]
        order = [i for i in range(A.ndim) if i not in rest] + rest
        A = A.permute(*order)
    x_shape = A.shape[B.ndim:]
    n = math.prod(x_shape)
    return solve(A.reshape(-1, n), B.reshape(-1)).reshape(tuple(x_shape))


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """Columns ``x**0, x**1, ..., x**(N-1)`` (increasing powers, as torch.linalg); a 0-d
    ``x`` counts as one element (a (1, N) result)."""
    if x.ndim == 0:
        x = x.reshape(1)
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError(f"linalg.vander: N must be greater than 1, got {n}")
    powers = arange(n, dtype=x.dtype if x.dtype.kind in "fc" else _dt.int64, device=x.device)
    return x.unsqueeze(-1) ** powers


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first n columns of ``H_1 ... H_k`` with ``H_i = I - tau_i v_i v_i^H`` and
    ``v_i`` column ``i`` of ``A`` below the diagonal with a 1 on it (LAPACK's orgqr)."""
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    if k > n or n > m:
        raise ShapeError(f"linalg.householder_product: need tau's length ({k}) <= n ({n}) "
                         f"<= m ({m})")
    q = eye(m, n, dtype=A.dtype, device=A.device).broadcast_to(A.shape[:-2] + (m, n))
    unit = eye(m, dtype=A.dtype, device=A.device)
    for i in range(k - 1, -1, -1):
        v = tril(A, -1)[..., :, i] + unit[:, i]
        q = q - tau[..., i, None, None] * v.unsqueeze(-1) * (v.conj().unsqueeze(-2) @ q)
    return q
