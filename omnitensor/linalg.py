"""``omnitensor.linalg``: the Array API linalg extension and torch.linalg names.

The ops live in ``omnitensor/core/ops/linalg.py`` (Tensor methods and the top-level torch
spellings use them too); this module is their public face.
"""
from .core.ops.linalg import (LinAlgError, cholesky, cross, det, diagonal, eig, eigh, eigvals,
                              eigvalsh, host_fallbacks, inv, lstsq, matmul, matrix_norm,
                              matrix_power, matrix_rank, matrix_transpose, norm, outer, pinv,
                              qr, slogdet, solve, solve_triangular, svd, svdvals, tensordot,
                              trace, vecdot, vector_norm)
from .core.ops.linalg_factor import (cholesky_ex, cond, householder_product, inv_ex, lu,
                                     lu_factor, lu_factor_ex, lu_solve, matrix_exp, multi_dot,
                                     solve_ex, tensorinv, tensorsolve, vander)

__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv",
           "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm", "norm", "LinAlgError", "host_fallbacks", "eigvals", "eig",
           "solve_triangular", "lstsq", "cholesky_ex", "cond", "householder_product", "inv_ex",
           "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matrix_exp", "multi_dot", "solve_ex",
           "tensorinv", "tensorsolve", "vander"]
