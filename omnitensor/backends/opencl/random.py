"""``random_bits``: the Philox-4x32-10 stream of ``backends/philox.py``, bit for bit (the
kernel comes from :mod:`omnitensor.kernels.random`).

Word ``i`` of the output is word ``i % 4`` of the Philox block for the 64-bit counter
``counter + i // 4`` (low word first, upper two counter words 0) under the 2-word key; the
rounds are the same multiply-hi/xor rounds with the same key schedule, so every backend
returns identical bits for the same (key, counter).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...kernels.random import philox_source
from ..philox import PHILOX_M0, PHILOX_M1, PHILOX_W0, PHILOX_W1, ROUNDS
from . import program_cache
from .array import CLArray, new
from .cltypes import pack_i64, pack_u32
from .launch import run, set_bytes, set_mem

_SRC = philox_source(PHILOX_M0, PHILOX_M1, PHILOX_W0, PHILOX_W1, ROUNDS)


def random_bits(st: Any, shape: tuple[int, ...], key: tuple[int, int], counter: int
                ) -> CLArray:
    out = new(st, shape, np.dtype(np.uint32))
    n = out.size
    if n == 0:
        return out
    k = program_cache.kernel(st, ("philox",), "philox", lambda: _SRC, st.build_options)
    blocks = (n + 3) // 4
    groups = max(1, min(16 * st.compute_units, blocks // 1024)) if st.is_cpu else blocks
    chunk = -(-blocks // groups)
    groups = -(-blocks // chunk)
    set_mem(k, (0, out.data))
    set_bytes(k, (1, pack_i64(n), 2, pack_i64(chunk), 3, pack_u32(key[0] & 0xFFFFFFFF),
                  4, pack_u32(key[1] & 0xFFFFFFFF),
                  5, (counter & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little")))
    if st.is_cpu:
        run(st.queue, k, (groups,), (1,))
    else:
        run(st.queue, k, (-(-groups // 64) * 64,), (64,))
    return out
