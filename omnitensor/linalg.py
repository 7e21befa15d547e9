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
from .core.ops.linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve

__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv",
           "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm", "norm", "LinAlgError", "host_fallbacks", "eigvals", "eig",
           "solve_triangular", "lstsq", "cholesky_ex", "cond", "householder_product", "inv_ex",
           "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matrix_exp", "multi_dot", "solve_ex",
           "tensorinv", "tensorsolve", "vander", "ldl_factor", "ldl_factor_ex", "ldl_solve"]


def _with_out(fn):
    """``fn`` also taking torch's ``out=`` (core's one rule: core/ops/out_arg.py)."""
    import functools

    from .core.ops.out_arg import write_out

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        return write_out(f"linalg.{fn.__name__}", fn(*args, **kwargs), out)
    return with_out


#: torch.linalg's functions that take out= (cross takes it itself)
_TAKE_OUT = ("cholesky", "cholesky_ex", "cond", "det", "eig", "eigh", "eigvals", "eigvalsh",
             "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex",
             "ldl_solve", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm",
             "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd",
             "svdvals", "tensorinv", "tensorsolve", "vecdot", "vector_norm")
for _name in _TAKE_OUT:
    globals()[_name] = _with_out(globals()[_name])
del _name
