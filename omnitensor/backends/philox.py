"""Philox-4x32-10 (Salmon et al., SC'11), written once against any array namespace.

The counter-based generator behind every backend's ``random_bits``: the same (key, counter)
gives the same bits on NumPy, CuPy, dpnp and the OpenCL kernel (which implements the same
rounds in C), so ``manual_seed`` reproduces numbers across devices.
"""
from __future__ import annotations

from typing import Any

PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
ROUNDS = 10
_MASK32 = 0xFFFFFFFF


def philox_bits(xp: Any, n: int, key: tuple[int, int], counter: int, **device_kw: Any) -> Any:
    """``n`` uint32 words: word ``i`` is word ``i % 4`` of the Philox block for counter
    ``counter + i // 4``. ``device_kw`` goes to the namespace's creation functions
    (``device=``/``sycl_queue=``)."""
    blocks = (n + 3) // 4
    u64 = xp.uint64
    ctr = xp.arange(blocks, dtype=u64, **device_kw) + xp.asarray(counter, dtype=u64, **device_kw)
    mask = xp.asarray(_MASK32, dtype=u64, **device_kw)
    c0 = ctr & mask
    c1 = ctr >> xp.asarray(32, dtype=u64, **device_kw)
    c2 = xp.zeros(blocks, dtype=u64, **device_kw)
    c3 = xp.zeros(blocks, dtype=u64, **device_kw)
    k0, k1 = key[0] & _MASK32, key[1] & _MASK32
    m0 = xp.asarray(PHILOX_M0, dtype=u64, **device_kw)
    m1 = xp.asarray(PHILOX_M1, dtype=u64, **device_kw)
    shift = xp.asarray(32, dtype=u64, **device_kw)
    for r in range(ROUNDS):
        p0 = m0 * c0           # 64-bit products of 32-bit words: exact in uint64
        p1 = m1 * c2
        hi0, lo0 = p0 >> shift, p0 & mask
        hi1, lo1 = p1 >> shift, p1 & mask
        kk0 = xp.asarray(k0, dtype=u64, **device_kw)
        kk1 = xp.asarray(k1, dtype=u64, **device_kw)
        c0, c1, c2, c3 = hi1 ^ c1 ^ kk0, lo1, hi0 ^ c3 ^ kk1, lo0
        if r != ROUNDS - 1:
            k0 = (k0 + PHILOX_W0) & _MASK32
            k1 = (k1 + PHILOX_W1) & _MASK32
    words = xp.stack([c0, c1, c2, c3], axis=1)
    words = xp.reshape(words, (blocks * 4,))[:n]
    return xp.astype(words, xp.uint32) if hasattr(xp, "astype") else words.astype(xp.uint32)
