"""torch top-level functions written over omnitensor's public ops: aten's ``embedding_bag``
(the 4-tuple form under ``F.embedding_bag``), ``lobpcg`` (a few extreme eigenpairs of a
symmetric positive-definite, possibly generalized, problem), the sparse-dense products
``smm``, ``dsmm``, ``hspmm``/``hsmm``, ``sspaddmm``/``saddmm``, the sparse components'
``*_copy`` functions and aten's sparse ``native_norm``. All run on every device with the
device's own kernels; only bag bookkeeping (offsets, integer indices) is read on the host.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import omnitensor as _ot
from .core.sparse.matmul import smm, sspaddmm
from .core.sparse.resize import resize_as_sparse_
from .core.tensor import Tensor

__all__ = ["embedding_bag", "lobpcg", "dsmm", "smm", "hspmm", "hsmm", "sspaddmm", "saddmm",
           "resize_as_sparse_", "SPARSE_COPIES", "native_norm"]

_MODES = {0: "sum", 1: "mean", 2: "max"}


def _bag_layout(indices: Tensor, offsets: Tensor, include_last_offset: bool,
                pad: int | None) -> tuple[list[int], list[int], np.ndarray, np.ndarray]:
    """(bag starts, bag lengths, offset2bag, bag_size without padding entries)."""
    idx = np.asarray(indices.tolist(), np.int64)
    starts = [int(v) for v in offsets.tolist()]
    ends = starts[1:] + ([] if include_last_offset else [idx.size])
    if include_last_offset:
        starts = starts[:-1]
    lengths = [e - s for s, e in zip(starts, ends)]
    offset2bag = np.zeros(idx.size, np.int64)
    for b, s in enumerate(starts):
        if b:
            offset2bag[s:] = b  # a later bag overrides from its start on (torch's cumsum)
    keep = np.ones(idx.size, bool) if pad is None else idx != pad
    sizes = np.array([int(keep[s:s + n].sum()) for s, n in zip(starts, lengths)], np.int64)
    return starts, lengths, offset2bag, sizes


def _max_indices(weight: Tensor, indices: Tensor, starts: list[int], lengths: list[int],
                 pad: int | None) -> Tensor:
    """(bags, dim): the weight row giving each bag's maximum, per column (0 for a bag with
    no row), the first such row on ties, as torch's cpu kernel."""
    bags, dim = len(lengths), weight.shape[1]
    longest = max(lengths, default=0)
    if bags == 0 or longest == 0:
        return _ot.zeros((bags, dim), dtype=_ot.int64, device=weight.device)
    idx = np.asarray(indices.tolist(), np.int64)
    rows = np.zeros((bags, longest), np.int64)
    valid = np.zeros((bags, longest), bool)
    for b, (s, n) in enumerate(zip(starts, lengths)):
        rows[b, :n] = idx[s:s + n]
        valid[b, :n] = True if pad is None else idx[s:s + n] != pad
    dev = weight.device
    vals = weight.detach().index_select(0, _ot.tensor(rows.reshape(-1), device=dev))
    vals = vals.reshape(bags, longest, dim)
    mask = _ot.tensor(valid, device=dev).unsqueeze(-1)
    vals = _ot.where(mask, vals, _ot.full((), -float("inf"), dtype=vals.dtype, device=dev))
    pos = vals.argmax(1)                                                 # (bags, dim)
    row_of = _ot.tensor(rows, device=dev).unsqueeze(-1).expand(bags, longest, dim)
    out = row_of.gather(1, pos.unsqueeze(1)).squeeze(1)
    empty = _ot.tensor(~valid.any(1), device=dev).unsqueeze(-1)
    return _ot.where(empty, _ot.zeros((), dtype=out.dtype, device=dev), out)


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """aten's ``embedding_bag``: ``(output, offset2bag, bag_size, max_indices)`` for 1-D
    ``indices`` split by ``offsets``; ``mode`` 0/1/2 is sum/mean/max and ``padding_idx``
    (negative: from the end) rows are left out. The output is ``F.embedding_bag``'s; the
    bookkeeping tensors are torch's cpu kernel's (for ``sum``: zeros, and offset2bag only
    with a padding_idx)."""
    from .nn.functional.embedding_bag import embedding_bag as _bag
    if mode not in _MODES:
        raise ValueError(f"embedding_bag: mode has to be 0 (sum), 1 (mean) or 2 (max), "
                         f"got {mode!r}")
    if indices.ndim != 1:
        raise ValueError(f"embedding_bag: indices has to be a 1D Tensor, but got "
                         f"{indices.ndim}D")
    out = _bag(indices, weight, offsets, None, 2, scale_grad_by_freq, _MODES[mode], sparse,
               per_sample_weights, include_last_offset, padding_idx)
    pad = None if padding_idx is None else padding_idx % weight.shape[0]
    starts, lengths, offset2bag, sizes = _bag_layout(indices, offsets, include_last_offset, pad)
    dev = weight.device
    if mode == 0:  # torch's sum kernel fills offset2bag only when it skips padding rows
        zeros = _ot.zeros(offsets.shape[0], dtype=_ot.int64, device=dev)
        o2b = offset2bag if padding_idx is not None else offset2bag[:0]
        return out, _ot.tensor(o2b, device=dev), zeros, zeros.clone()
    bag_size = _ot.tensor(sizes, device=dev)
    maxi = bag_size.clone() if mode == 1 else _max_indices(weight, indices, starts, lengths,
                                                           pad)
    return out, _ot.tensor(offset2bag, device=dev), bag_size, maxi


# ------------------------------------------------------------------------- lobpcg
def _rayleigh_ritz(S: Tensor, A: Tensor, B: Tensor | None, n: int, largest: bool
                   ) -> tuple[Tensor, Tensor]:
    """The ``n`` extreme Ritz pairs of (A, B) in span(S): S is B-orthonormalized through
    the eigendecomposition of its Gram matrix, dropping directions it cannot resolve (what
    keeps LOBPCG stable once X, W and P become nearly dependent)."""
    BS = S if B is None else B @ S
    gram = S.mT @ BS
    gram = (gram + gram.mT) / 2
    d, V = _ot.linalg.eigh(gram)
    eps = _ot.finfo(S.dtype).eps
    keep = (d > d.max() * eps * S.shape[0] * 10).nonzero().reshape(-1)
    T = V.index_select(1, keep) / d.index_select(0, keep).sqrt()
    H = T.mT @ (S.mT @ (A @ S)) @ T
    theta, Z = _ot.linalg.eigh((H + H.mT) / 2)
    order = _ot.arange(theta.shape[0] - 1, theta.shape[0] - 1 - n, -1, device=S.device) \
        if largest else _ot.arange(n, device=S.device)
    return theta.index_select(0, order), (T @ Z).index_select(1, order)


def _lobpcg_one(A: Tensor, B: Tensor | None, X: Tensor, iK: Tensor | None, k: int,
                niter: int, tol: float, largest: bool) -> tuple[Tensor, Tensor]:
    n = X.shape[1]
    E, C = _rayleigh_ritz(X, A, B, n, largest)
    X = X @ C
    P: Tensor | None = None
    a_norm = _ot.linalg.norm(A)
    b_norm = 1.0 if B is None else _ot.linalg.norm(B)
    for _ in range(niter):
        BX = X if B is None else B @ X
        R = A @ X - BX * E
        rerr = _ot.linalg.norm(R, dim=0) / (_ot.linalg.norm(X, dim=0)
                                            * (a_norm + E.abs() * b_norm))
        if bool((rerr[:k] < tol).all()):
            break
        W = R if iK is None else iK @ R
        S = _ot.cat([X, W] if P is None else [X, W, P], 1)
        E, C = _rayleigh_ritz(S, A, B, n, largest)
        X_new = S @ C
        P = S[:, n:] @ C[n:]  # the new directions that are not the old iterate
        X = X_new
    return E[:k], X[:, :k]


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None,
           n: int | None = None, iK: Tensor | None = None, niter: int | None = None,
           tol: float | None = None, largest: bool | None = None, method: str | None = None,
           tracker: Any = None, ortho_iparams: dict | None = None,
           ortho_fparams: dict | None = None, ortho_bparams: dict | None = None
           ) -> tuple[Tensor, Tensor]:
    """torch's ``lobpcg``: ``(E, X)``, the ``k`` largest (``largest=False``: smallest)
    eigenvalues of the symmetric positive-definite problem ``A X = B X diag(E)`` and their
    B-orthonormal eigenvectors, by Knyazev's locally optimal block preconditioned conjugate
    gradient method (``iK``: a preconditioner; ``X``: the initial ``(m, n)`` block, random
    when None). ``method`` 'basic' and 'ortho' both run the Gram-eigendecomposition
    Rayleigh-Ritz above; ``tracker`` is called with no state here (torch's is internal)."""
    if method not in (None, "basic", "ortho"):
        raise ValueError(f"lobpcg: method must be 'basic' or 'ortho', got {method!r}")
    if A.ndim > 2:  # a batch: each matrix on its own
        outs = [lobpcg(A[i], k, None if B is None else B[i], None if X is None else X[i],
                       n, iK, niter, tol, largest, method) for i in range(A.shape[0])]
        return _ot.stack([o[0] for o in outs]), _ot.stack([o[1] for o in outs])
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if X is None else X.shape[-1]) if n is None else n
    if m < 3 * n:
        raise ValueError(f"LPBPCG algorithm is not applicable when the number of A rows "
                         f"(={m}) is smaller than 3 x the number of requested eigenpairs "
                         f"(={n})")
    dtype = A.dtype if A.dtype.is_floating_point else _ot.get_default_dtype()
    if X is None:
        X = _ot.randn((m, n), dtype=dtype, device=A.device)
    tol = float(_ot.finfo(dtype).eps) ** 0.5 if tol is None else tol
    return _lobpcg_one(A, B, X.to(dtype), iK, k, 1000 if niter is None else niter, tol,
                       True if largest is None else largest)


# ------------------------------------------------------- sparse-dense matrix products
def _need_sparse(name: str, t: Any) -> None:
    if not getattr(t, "is_sparse", False):
        raise RuntimeError(f"{name}: expected a sparse COO matrix, got a {type(t).__name__} "
                           f"with layout {getattr(t, 'layout', None)}")


def dsmm(input: Tensor, mat2: Tensor) -> Tensor:  # noqa: A002 - torch's name
    """torch's ``dsmm``: the dense product of a (sparse or dense) ``input`` with ``mat2``."""
    return input @ mat2


def hspmm(mat1: Any, mat2: Tensor, *, out: Any = None) -> Any:
    """torch's ``hspmm``: sparse COO ``mat1`` @ dense ``mat2`` as a hybrid COO tensor: one
    sparse dimension holding the rows where ``mat1`` has entries, dense rows as values."""
    _need_sparse("hspmm", mat1)
    if out is not None:
        raise TypeError("hspmm: out= is not supported (the result's nnz is data-dependent)")
    rows = mat1.coalesce().indices()[0].unique()
    vals = (mat1 @ mat2).index_select(0, rows)
    return _ot.sparse_coo_tensor(rows.reshape(1, -1), vals, (mat1.shape[0], mat2.shape[1]))


hsmm = hspmm


saddmm = sspaddmm


# ---------------------------------------------- sparse components, freshly allocated
def _component_copy(method: str) -> Any:
    def copy(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002 - torch's name
        from .core.ops.out_arg import write_out
        part = getattr(input, method, None)
        if part is None:
            raise RuntimeError(f"{method}_copy: expected a sparse tensor with {method}(), "
                               f"got a {type(input).__name__}")
        return write_out(f"{method}_copy", part().clone(), out)

    copy.__name__ = copy.__qualname__ = f"{method}_copy"
    copy.__doc__ = (f"torch's ``{method}_copy``: ``input.{method}()`` as a new tensor (not "
                    f"a view of the sparse tensor's storage).")
    return copy


#: torch's ``crow_indices_copy`` & co.: the compressed (CSR/CSC) and COO components
SPARSE_COPIES = {f"{m}_copy": _component_copy(m) for m in (
    "crow_indices", "col_indices", "ccol_indices", "row_indices", "values", "indices")}


def native_norm(input: Any, p: Any = 2, dim: Any = None, keepdim: bool = False,  # noqa: A002
                dtype: Any = None) -> Tensor:
    """aten's ``native_norm``: the ``p``-norm of a sparse COO tensor's (coalesced) values,
    a full reduction, as torch's (its only kernel is the sparse one: a dense ``input``,
    a partial ``dim``, ``keepdim`` or ``dtype`` is refused as torch refuses them)."""
    if not getattr(input, "is_sparse", False):
        raise RuntimeError("native_norm: expected a sparse COO tensor (aten's native_norm has "
                           "no dense kernel; use torch.linalg.vector_norm)")
    if dim is not None and sorted(d % input.ndim for d in dim) != list(range(input.ndim)) \
            and len(dim) != 0:
        raise RuntimeError("norm_sparse currently only supports full reductions, so 'dim' "
                           "must either be empty or contain all dimensions of the input")
    if keepdim:
        raise RuntimeError("norm_sparse currently does not support keepdim=True")
    if dtype is not None:
        raise RuntimeError("norm_sparse currently does not support 'dtype' argument")
    return _ot.linalg.vector_norm(input.coalesce().values(), p)
