"""``grouped_mm`` (the Mixture-of-Experts grouped matrix product), ``conv_tbc`` (a
1-D convolution over (time, batch, channel) input) and the ``assert_int_or_pair``
argument helper, with torch's semantics and messages; composites of matmul and conv1d,
so every backend and autograd get them."""
from __future__ import annotations

from typing import Any

from ...core.tensor import Tensor

__all__ = ["grouped_mm", "conv_tbc", "assert_int_or_pair"]


def assert_int_or_pair(arg: Any, arg_name: str, message: str) -> None:
    """AssertionError ``message.format(arg_name)`` unless ``arg`` is an int or has two
    items."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


def _bounds(offs: Tensor, what: str) -> list[tuple[int, int]]:
    if offs.ndim != 1 or str(offs.dtype) not in ("omnitensor.int32", "int32"):
        raise RuntimeError(f"offs must be a 1-D int32 tensor, got {offs.dtype} of shape "
                           f"{tuple(offs.shape)}")
    ends = [int(e) for e in offs.tolist()]
    starts = [0] + ends[:-1]
    if any(e < s for s, e in zip(starts, ends)):
        raise RuntimeError(f"offs must be non-decreasing ({what}), got {ends}")
    return list(zip(starts, ends))


def grouped_mm(mat_a: Tensor, mat_b: Tensor, *, offs: Tensor | None = None,
               bias: Tensor | None = None, out_dtype: Any = None) -> Tensor:
    """Matrix products of groups: 3-D x 3-D is a batched matmul; with 2-D operands
    ``offs`` (int32, cumulative group ends) cuts the jagged dimension: 2-D ``mat_a`` x
    3-D ``mat_b`` groups ``mat_a``'s rows (``out[s:e] = mat_a[s:e] @ mat_b[g]``), 3-D x
    2-D groups ``mat_b``'s columns, 2-D x 2-D groups the shared dimension into a 3-D
    result (``out[g] = mat_a[:, s:e] @ mat_b[s:e]``). Rows or columns past ``offs[-1]``
    are zero."""
    from ...core.ops.creation import zeros
    from ...core.ops.join import stack
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if mat_a.ndim not in (2, 3) or mat_b.ndim not in (2, 3):
        raise RuntimeError(f"grouped_mm: operands must be 2-D or 3-D, got {mat_a.ndim}-D "
                           f"and {mat_b.ndim}-D")
    both_3d = mat_a.ndim == 3 and mat_b.ndim == 3
    if both_3d == (offs is not None):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset "
                           "if both matrices are 3d")
    if both_3d:
        return mat_a @ mat_b
    assert offs is not None
    if mat_a.ndim == 2 and mat_b.ndim == 3:
        out = zeros((mat_a.shape[0], mat_b.shape[-1]), dtype=mat_a.dtype,
                    device=mat_a.device)
        for g, (s, e) in enumerate(_bounds(offs, "rows of mat_a")):
            out[s:e] = mat_a[s:e] @ mat_b[g]
        return out
    if mat_a.ndim == 3:
        out = zeros((mat_a.shape[1], mat_b.shape[-1]), dtype=mat_a.dtype,
                    device=mat_a.device)
        for g, (s, e) in enumerate(_bounds(offs, "columns of mat_b")):
            out[:, s:e] = mat_a[g] @ mat_b[:, s:e]
        return out
    return stack([mat_a[:, s:e] @ mat_b[s:e] for s, e in _bounds(offs, "shared dim")])


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor,  # noqa: A002 - torch's name
             pad: int = 0) -> Tensor:
    """A 1-D convolution of ``input`` (time, batch, in_channels) with ``weight``
    (kernel width, in_channels, out_channels) and ``bias`` (out_channels), padding
    ``pad`` steps at both ends; the result is (time', batch, out_channels)."""
    from .conv import conv1d
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight "
                           "tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output "
                           "channels).")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
