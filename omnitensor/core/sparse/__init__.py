"""Sparse tensors (COO, CSR, CSC) made of dense component tensors, with their ops written
once as composites of dense ops (see ``docs/sparse.md``). Importing this package registers
the sparse implementations in ``core/layout_dispatch.py``'s table."""
from . import arith as _arith  # registers the elementwise ops
from . import matmul as _matmul  # registers matmul
from .construct import (sparse_bsc_tensor, sparse_bsr_tensor, sparse_compressed_tensor,
                        sparse_coo_tensor, sparse_csc_tensor, sparse_csr_tensor, spdiags)
from .matmul import addmm, sparse_mm
from .methods import bind
from .reduce import log_softmax, softmax, sum_sparse
from .tensor import (SparseCompressedTensor, SparseCooTensor, SparseTensor, make_coo,
                     sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr)

__all__ = ["sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor",
           "sparse_compressed_tensor", "sparse_bsr_tensor", "sparse_bsc_tensor", "spdiags",
           "addmm", "sparse_mm", "softmax", "log_softmax", "sum_sparse", "bind",
           "SparseTensor", "SparseCooTensor", "SparseCompressedTensor", "make_coo",
           "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"]
