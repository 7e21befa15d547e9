"""Shared helpers of the sparse tests: the same sparse tensor built in omnitensor and in
torch (the oracle), and value-by-value comparisons of sparse and dense results."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import omnitensor as ot

#: for each module's ``pytestmark``: torch warns that its sparse invariant checks are off
#: and that CSR support is beta
QUIET_TORCH = [pytest.mark.filterwarnings("ignore:Sparse invariant checks"),
               pytest.mark.filterwarnings("ignore:Sparse CSR tensor support")]

#: an uncoalesced 3x4 COO matrix: (0, 2) is stored twice
INDICES = [[0, 1, 1, 2, 0, 2], [2, 0, 3, 1, 2, 3]]
VALUES = [0.3, -0.4, 0.5, 0.6, 0.7, -0.8]
SHAPE = (3, 4)


def fdtype(device: str) -> Any:
    """float64 where the device has it, else float32 (and torch's matching dtype)."""
    return ot.float64 if ot.device(device).supports_dtype(ot.float64) else ot.float32


def tdtype(d: Any) -> Any:
    return {ot.float64: torch.float64, ot.float32: torch.float32}[d]


def tol(device: str) -> float:
    return 1e-12 if fdtype(device) is ot.float64 else 1e-5


def pair(device: str, indices: Any = INDICES, values: Any = VALUES, shape: Any = SHAPE,
         requires_grad: bool = False) -> tuple[Any, Any]:
    """The same COO tensor in omnitensor (on ``device``) and in torch."""
    d = fdtype(device)
    s = ot.sparse_coo_tensor(ot.tensor(indices, device=device),
                             ot.tensor(values, dtype=d, device=device), shape,
                             requires_grad=requires_grad)
    t = torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values, dtype=tdtype(d)),
                                shape, requires_grad=requires_grad)
    return s, t


def dense_pair(device: str, a: Any, requires_grad: bool = False) -> tuple[Any, Any]:
    d = fdtype(device)
    a = np.asarray(a)
    return (ot.tensor(a, dtype=d, device=device, requires_grad=requires_grad),
            torch.tensor(a, dtype=tdtype(d), requires_grad=requires_grad))


def N(x: Any) -> np.ndarray:
    """Host values of an omnitensor or torch tensor (dense)."""
    if isinstance(x, torch.Tensor):
        return x.detach().numpy().copy()
    return x.detach().cpu().numpy().copy()


def same_dense(ours: Any, theirs: Any, tolerance: float) -> None:
    """Equal as dense arrays (either side may be sparse)."""
    a = ours.to_dense() if ours.layout is not ot.strided else ours
    b = theirs.to_dense() if theirs.layout is not torch.strided else theirs
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(N(a), N(b), rtol=tolerance, atol=tolerance)


def same_sparse(ours: Any, theirs: Any, tolerance: float) -> None:
    """The same layout, shape and, coalesced, the same indices and values one by one."""
    assert repr(ours.layout).split(".")[1] == str(theirs.layout).split(".")[1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    if theirs.layout is torch.sparse_coo:
        a, b = ours.coalesce(), theirs.coalesce()
        assert a._indices().tolist() == b._indices().tolist()
        np.testing.assert_allclose(N(a._values()), N(b._values()), rtol=tolerance,
                                   atol=tolerance)
    elif theirs.layout is torch.sparse_csr:
        assert ours.crow_indices().tolist() == theirs.crow_indices().tolist()
        assert ours.col_indices().tolist() == theirs.col_indices().tolist()
        np.testing.assert_allclose(N(ours.values()), N(theirs.values()), rtol=tolerance,
                                   atol=tolerance)
    else:
        assert ours.ccol_indices().tolist() == theirs.ccol_indices().tolist()
        assert ours.row_indices().tolist() == theirs.row_indices().tolist()
        np.testing.assert_allclose(N(ours.values()), N(theirs.values()), rtol=tolerance,
                                   atol=tolerance)
    same_dense(ours, theirs, tolerance)
