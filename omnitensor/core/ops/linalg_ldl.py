"""torch.linalg's LDL decomposition of symmetric matrices: ``ldl_factor``,
``ldl_factor_ex`` and ``ldl_solve``, in LAPACK's compact form (``sytrf``/``sytrs`` with
``uplo='L'``, as torch returns it).

``LD`` holds the unit lower factor below the diagonal and the block-diagonal ``D`` (1x1 and
2x2 blocks) on it; ``pivots`` (int32, 1-based) are Bunch-Kaufman's interchanges, negative
for a 2x2 block. The pivot choice branches on every column, and torch defines no gradient
for either routine, so both run the unblocked LAPACK algorithms (``sytf2``, ``sytrs``) on a
host copy in the input's dtype, as ``_cholesky_info`` does, and return device tensors.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...errors import DTypeError, ShapeError
from ..tensor import Tensor
from .creation import tensor
from .linalg import LinAlgError, _square

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

_ALPHA = (1 + np.sqrt(17.0)) / 8  # Bunch-Kaufman's growth bound
_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte", "bool": "Bool", "float32": "Float", "float64": "Double",
                "float16": "Half", "bfloat16": "BFloat16", "complex64": "ComplexFloat",
                "complex128": "ComplexDouble"}


class LDLFactorResult(NamedTuple):
    LD: Tensor
    pivots: Tensor


class LDLFactorExResult(NamedTuple):
    LD: Tensor
    pivots: Tensor
    info: Tensor


def _torch_name(x: Tensor) -> str:
    return _TORCH_NAMES.get(x.dtype.name, x.dtype.name)


def _cabs1(v: Any) -> Any:
    """LAPACK's magnitude for pivoting: ``|re| + |im|`` for complex, ``|x|`` for real."""
    return np.abs(v.real) + np.abs(v.imag) if np.iscomplexobj(v) else np.abs(v)


def _choose_pivot(a: np.ndarray, k: int) -> tuple[int, int, bool]:
    """(pivot row ``kp``, block size, singular) for column ``k`` (``sytf2``'s rule)."""
    n = a.shape[0]
    absakk = _cabs1(a[k, k])
    colmax, imax = 0.0, k
    if k < n - 1:
        col = _cabs1(a[k + 1:, k])
        imax = k + 1 + int(np.argmax(col))
        colmax = col[imax - k - 1]
    if max(absakk, colmax) == 0 or np.isnan(absakk):
        return k, 1, True
    if absakk >= _ALPHA * colmax:
        return k, 1, False
    rowmax = _cabs1(a[imax, k:imax]).max()
    if imax < n - 1:
        rowmax = max(rowmax, _cabs1(a[imax + 1:, imax]).max())
    if absakk >= _ALPHA * colmax * (colmax / rowmax):
        return k, 1, False
    if _cabs1(a[imax, imax]) >= _ALPHA * rowmax:
        return imax, 1, False
    return imax, 2, False


def _interchange(a: np.ndarray, k: int, kk: int, kp: int, kstep: int) -> None:
    """Swap rows and columns ``kk`` and ``kp`` of the trailing lower triangle."""
    col = a[kp + 1:, kk].copy()
    a[kp + 1:, kk] = a[kp + 1:, kp]
    a[kp + 1:, kp] = col
    seg = a[kk + 1:kp, kk].copy()
    a[kk + 1:kp, kk] = a[kp, kk + 1:kp]
    a[kp, kk + 1:kp] = seg
    a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
    if kstep == 2:
        a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]


def _sytf2(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """LAPACK's unblocked Bunch-Kaufman ``L D L^T`` of one matrix, lower triangle."""
    a = a.copy()
    n = a.shape[0]
    piv = np.zeros(n, np.int32)
    info, k = 0, 0
    one = a.dtype.type(1)
    while k < n:
        kp, kstep, singular = _choose_pivot(a, k)
        if singular:
            info = info or k + 1
        else:
            kk = k + kstep - 1
            if kp != kk:
                _interchange(a, k, kk, kp, kstep)
            if kstep == 1 and k < n - 1:
                d11 = one / a[k, k]
                x = a[k + 1:, k].copy()
                a[k + 1:, k + 1:] += np.tril(np.outer(x, -d11 * x))  # dsyr: a += x (alpha x)^T
                a[k + 1:, k] = x * d11
            elif kstep == 2 and k < n - 2:
                d21 = a[k + 1, k]
                d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
                d21 = (one / (d11 * d22 - one)) / d21
                wk = d21 * (d11 * a[k + 2:, k] - a[k + 2:, k + 1])
                wkp1 = d21 * (d22 * a[k + 2:, k + 1] - a[k + 2:, k])
                upd = np.outer(a[k + 2:, k], wk) + np.outer(a[k + 2:, k + 1], wkp1)
                a[k + 2:, k + 2:] -= np.tril(upd)
                a[k + 2:, k], a[k + 2:, k + 1] = wk, wkp1
        piv[k:k + kstep] = kp + 1 if kstep == 1 else -(kp + 1)
        k += kstep
    return np.tril(a), piv, info


def _check_factor(name: str, A: Tensor, hermitian: bool) -> None:
    _square(name, A, prefix="torch.linalg.")
    if A.dtype.kind not in "fc":
        raise DTypeError(f"torch.linalg.{name}: Expected a floating point or complex tensor "
                         f"as input. Got {_torch_name(A)}")
    if hermitian and A.dtype.kind == "c":
        raise NotImplementedError(f"torch.linalg.{name}: hermitian=True of complex matrices "
                                  f"is not supported (symmetric ones are)")


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False
                  ) -> LDLFactorExResult:
    """``(LD, pivots, info)`` of symmetric ``A`` (``(..., n, n)``; only its lower triangle
    is read): ``info`` is 0, or ``k`` where ``D[k-1, k-1]`` is exactly zero."""
    _check_factor("ldl_factor_ex", A, hermitian)
    host = A.detach().cpu().numpy()
    n = host.shape[-1]
    flat = host.reshape((int(np.prod(host.shape[:-2])), n, n))  # -1 fails for n == 0
    ld = np.zeros_like(flat)
    piv = np.zeros(flat.shape[:2], np.int32)
    info = np.zeros(len(flat), np.int32)
    for b, m in enumerate(flat):
        ld[b], piv[b], info[b] = _sytf2(m)
    batch = host.shape[:-2]
    res = LDLFactorExResult(tensor(ld.reshape(host.shape), device=A.device),
                            tensor(piv.reshape(batch + (n,)), device=A.device),
                            tensor(info.reshape(batch), device=A.device))
    if check_errors and info.any():
        _raise_singular("ldl_factor_ex", info)
    return res


def _raise_singular(name: str, info: np.ndarray) -> None:
    k = int(info.reshape(-1)[np.flatnonzero(info)[0]])
    raise LinAlgError(f"torch.linalg.{name}: The factorization could not be completed "
                      f"because the input is singular: D[{k - 1}, {k - 1}] is zero.")


def ldl_factor(A: Tensor, *, hermitian: bool = False) -> LDLFactorResult:
    """``(LD, pivots)`` of symmetric ``A``; a singular ``D`` raises (``ldl_factor_ex``
    reports it in ``info``)."""
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    host = info.cpu().numpy()
    if host.any():
        _raise_singular("ldl_factor", host)
    return LDLFactorResult(LD, pivots)


def _sytrs(a: np.ndarray, piv: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LAPACK's ``sytrs`` (lower): ``X`` with ``A X = B`` from ``sytrf``'s factors."""
    b = b.copy()
    n = a.shape[0]
    k = 0
    while k < n:  # L D Y = P B
        if piv[k] > 0:
            kp = piv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.outer(a[k + 1:, k], b[k])
            b[k] /= a[k, k]
            k += 1
        else:
            kp = -piv[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            b[k + 2:] -= np.outer(a[k + 2:, k], b[k]) + np.outer(a[k + 2:, k + 1], b[k + 1])
            akm1k = a[k + 1, k]
            akm1, ak = a[k, k] / akm1k, a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1, bk = b[k] / akm1k, b[k + 1] / akm1k
            b[k], b[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T P^T X = Y
        if piv[k] > 0:
            b[k] -= a[k + 1:, k] @ b[k + 1:]
            kp = piv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k] -= a[k + 1:, k] @ b[k + 1:]
            b[k - 1] -= a[k + 1:, k - 1] @ b[k + 1:]
            kp = -piv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def _check_solve(LD: Tensor, pivots: Tensor, B: Tensor, hermitian: bool) -> None:
    name = "torch.linalg.ldl_solve"
    _square("ldl_solve", LD, arg="LD", prefix="torch.linalg.")
    if LD.dtype.kind not in "fc":
        raise DTypeError(f"{name}: Expected a floating point or complex tensor as input. "
                         f"Got {_torch_name(LD)}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise ShapeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                         f"but got pivots with shape {list(pivots.shape)} instead")
    if pivots.dtype.kind not in "iu":
        raise DTypeError(f"{name}: Expected pivots to be integers. Got {_torch_name(pivots)}")
    if B.dtype is not LD.dtype:
        raise DTypeError(f"Expected b and A to have the same dtype, but found b of type "
                         f"{_torch_name(B)} and A of type {_torch_name(LD)} instead.")
    if B.ndim < 2:
        raise ShapeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    if B.shape[-2] != LD.shape[-1]:
        raise ShapeError(f"Incompatible matrix sizes for {name}: each A matrix is "
                         f"{LD.shape[-2]} by {LD.shape[-1]} but each b matrix is "
                         f"{B.shape[-2]} by {B.shape[-1]}")
    if hermitian and LD.dtype.kind == "c":
        raise NotImplementedError(f"{name}: hermitian=True of complex matrices is not "
                                  f"supported (symmetric ones are)")


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """``X`` with ``A X = B`` for ``A``'s factors from :func:`ldl_factor` (the batch
    dimensions of ``B`` broadcast with ``LD``'s)."""
    _check_solve(LD, pivots, B, hermitian)
    a, p, b = (t.detach().cpu().numpy() for t in (LD, pivots, B))
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    n, k, m = a.shape[-1], b.shape[-1], int(np.prod(batch))  # (-1 fails for n == 0)
    a = np.broadcast_to(a, batch + (n, n)).reshape((m, n, n))
    p = np.broadcast_to(p, batch + (n,)).reshape((m, n))
    b = np.broadcast_to(b, batch + (n, k)).reshape((m, n, k))
    out = np.stack([_sytrs(a[i], p[i], b[i]) for i in range(len(b))]) if len(b) else \
        np.zeros(b.shape, b.dtype)
    return tensor(out.reshape(batch + (n, k)), device=B.device)
