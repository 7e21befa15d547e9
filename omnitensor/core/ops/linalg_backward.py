"""Backward formulas of the linalg decompositions whose gradients are not a composite of
other ops: SVD, QR and the general eigendecomposition (torch's formulas, written with
Tensor ops so higher orders come for free).

Imported by ``linalg.py``; reads its ops at call time (``L.solve``...), so the two modules
can import each other.
"""
from __future__ import annotations

from typing import Any

from . import linalg as L
from .creation import eye, tril, zeros


def _skew(a: Any) -> Any:
    return a - a.mT.conj()


def _zero_diag_one(e: Any) -> Any:
    n = e.shape[-1]
    return e + eye(n, dtype=e.dtype, device=e.device) * (1 - e)


def svd_backward(node: Any, gu: Any, gs: Any, gvh: Any) -> tuple:
    """d A from d U, d S, d Vh (torch's linalg_svd_backward)."""
    u, s, vh = node.saved_tensors
    k = s.shape[-1]
    if gu is None and gvh is None:
        return ((u[..., :k] * gs.unsqueeze(-2).to(u.dtype)) @ vh[..., :k, :],)
    if node.full:  # torch's rule: the columns past k (a basis of a null space) are a gauge
        u, vh = u[..., :k], vh[..., :k, :]  # the loss may not depend on: read the first k
        gu = None if gu is None else gu[..., :k]
        gvh = None if gvh is None else gvh[..., :k, :]
    m, n = u.shape[-2], vh.shape[-1]
    v = vh.mT.conj()
    gv = None if gvh is None else gvh.mT.conj()
    s2 = s * s
    e = _zero_diag_one(s2.unsqueeze(-2) - s2.unsqueeze(-1))
    sc = s.to(u.dtype)
    uhgu = None if gu is None else u.mT.conj() @ gu
    if u.dtype.kind == "c":
        _check_phase_invariant(uhgu, None if gv is None else vh @ gv, s)
    if uhgu is not None and gv is not None:
        ret = (_skew(uhgu) * sc.unsqueeze(-2) + sc.unsqueeze(-1) * _skew(vh @ gv)) / e
    elif uhgu is not None:
        ret = _skew(uhgu) / e * sc.unsqueeze(-2)
    else:
        ret = sc.unsqueeze(-1) * _skew(vh @ gv) / e
    if gs is not None:
        ret = ret + gs.to(u.dtype).diag_embed()
    if uhgu is not None and u.dtype.kind == "c":
        ret = ret + (1j * uhgu.diagonal(0, -2, -1).imag / s).diag_embed()
    if m > n and gu is not None:
        gusinv = gu / sc.unsqueeze(-2)
        ga = u @ ret + gusinv - u @ (u.mT.conj() @ gusinv)
        return (ga @ vh,)
    if m < n and gv is not None:
        gvsinv = gv / sc.unsqueeze(-2)
        ga = ret @ vh + gvsinv.mT.conj() - (gvsinv.mT.conj() @ v) @ vh
        return (u @ ga,)
    return (u @ ret @ vh,)


def _check_phase_invariant(uhgu: Any, vhgv: Any, s: Any) -> None:
    """torch's gauge rule for complex SVD: each pair of singular vectors is defined up to a
    common phase e^{i phi}, so a loss must not depend on it: Im diag(U^H gU) must match
    -Im diag(V^H gV) (torch's lax tolerance, 1e-2), else the gradient is ill-defined."""
    zero = zeros(s.shape, dtype=s.dtype, device=s.device)
    a = zero if uhgu is None else uhgu.diagonal(0, -2, -1).imag
    b = zero if vhgv is None else -vhgv.diagonal(0, -2, -1).imag
    if not bool(((a - b).abs() <= 1e-2 + 1e-2 * b.abs()).all().item()):
        raise RuntimeError("svd_backward: The singular vectors in the complex case are "
                           "specified up to multiplication by e^{i phi}. The specified loss "
                           "function depends on this phase term, making it ill-defined.")


def _copyltu(m: Any) -> Any:
    """The lower triangle mirrored to the upper (the diagonal's real part once)."""
    low = tril(m, -1)
    return low + low.mT.conj() + m.diagonal(0, -2, -1).real.to(m.dtype).diag_embed()


def _qr_tall(q: Any, r: Any, gq: Any, gr: Any) -> Any:
    """d A for A = QR with m >= n (reduced): (gQ + Q copyltu(M)) R^{-H},
    M = R gR^H - gQ^H Q."""
    mm = zeros(r.shape[:-2] + (r.shape[-1], r.shape[-1]), dtype=r.dtype, device=r.device)
    if gr is not None:
        mm = mm + r @ gr.mT.conj()
    if gq is not None:
        mm = mm - gq.mT.conj() @ q
    b = q @ _copyltu(mm) if gq is None else gq + q @ _copyltu(mm)
    # X R^H = B  <=>  R X^H = B^H
    return L.solve_triangular(r, b.mT.conj(), upper=True).mT.conj()


def qr_backward(node: Any, gq: Any, gr: Any) -> tuple:
    q, r = node.saved_tensors
    m, n = q.shape[-2], r.shape[-1]
    if m >= n:
        if node.mode == "complete" and m > n:
            raise RuntimeError("linalg.qr: the gradient with mode='complete' is defined only "
                               "for m <= n (as in torch): use mode='reduced'")
        return (_qr_tall(q, r, gq, gr),)
    # wide: A = [X | Y], R = [U | V] with X = Q U square: dY = Q dV, dX by the tall rule
    # with dQ + Y dV^H (Y's dependence on Q through V = Q^H Y)
    x_r, v_r = r[..., :, :m], r[..., :, m:]
    gv = None if gr is None else gr[..., :, m:]
    gu = None if gr is None else gr[..., :, :m]
    y = q @ v_r
    gq_eff = gq
    if gv is not None:
        extra = y @ gv.mT.conj()
        gq_eff = extra if gq is None else gq + extra
    gx = _qr_tall(q, x_r, gq_eff, gu)
    gy = zeros(y.shape, dtype=q.dtype, device=q.device) if gv is None else q @ gv
    from .join import cat
    return (cat([gx, gy], dim=-1),)


def eig_backward(node: Any, gw: Any, gv: Any) -> tuple:
    """torch's linalg_eig_backward (eigenvectors normalised to unit norm)."""
    w, v = node.saved_tensors
    vh = v.mT.conj()
    n = w.shape[-1]
    if gv is not None:
        vhgv = vh @ gv
        diag_re = vhgv.diagonal(0, -2, -1).real.to(v.dtype)
        ret = vhgv - vh @ (v * diag_re.unsqueeze(-2))
        wc = w.conj()
        econj = _zero_diag_one(wc.unsqueeze(-2) - wc.unsqueeze(-1))
        ret = ret / econj
        ret = ret * (1 - eye(n, dtype=v.dtype, device=v.device))
    else:
        ret = zeros(v.shape, dtype=v.dtype, device=v.device)
    if gw is not None:
        ret = ret + gw.to(v.dtype).diag_embed()
    ga = L.solve(vh, ret @ vh)
    return (ga.real if node.real else ga,)
