"""FLOP counts and Python stacks of profiled ops (one place for each rule).

FLOPs are counted where the work is: every matrix product omnitensor runs ends in the
backends' ``matmul`` primitive (``linear``, the convolutions through their unfolded
windows, attention, the backward of each), so counting ``2 * M * N * K`` per batch there
counts each of them once, forward and backward, whatever the composite around it.
That is torch's count for ``mm``/``addmm``/``bmm`` and for convolutions (``2 * out_numel *
in_channels/groups * kernel_numel``); elementwise work is not counted (as
``FlopCounterMode``; torch's profiler counts ``aten::add``/``aten::mul`` too).
"""
from __future__ import annotations

import os
import sys
from typing import Sequence

__all__ = ["matmul_flops", "python_stack"]

_PROFILER_DIR = os.path.dirname(os.path.abspath(__file__))
_STACK_LIMIT = 128


def matmul_flops(a: Sequence[int], b: Sequence[int]) -> int:
    """FLOPs of ``matmul`` on operands of shapes ``a`` and ``b`` (NumPy's rules: 1-D
    operands are vectors, leading axes broadcast as batches)."""
    a, b = tuple(a), tuple(b)
    if not a or not b:
        return 0
    m = a[-2] if len(a) > 1 else 1
    k = a[-1]
    n = b[-1] if len(b) > 1 else 1
    batch_a, batch_b = a[:-2], b[:-2]
    width = max(len(batch_a), len(batch_b))
    batch = 1
    for i in range(width):
        da = batch_a[i - width + len(batch_a)] if i >= width - len(batch_a) else 1
        db = batch_b[i - width + len(batch_b)] if i >= width - len(batch_b) else 1
        batch *= max(da, db)
    return 2 * batch * m * n * k


def python_stack(skip_dir: str = _PROFILER_DIR) -> list[str]:
    """The calling Python stack as torch's profiler writes it, innermost frame first:
    ``"path/to/file.py(12): function"``; the profiler's own frames are left out."""
    out: list[str] = []
    f = sys._getframe(1)
    while f is not None and len(out) < _STACK_LIMIT:
        path = f.f_code.co_filename
        if not os.path.abspath(path).startswith(skip_dir + os.sep):
            out.append(f"{path}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back  # type: ignore[assignment]
    return out

