"""Re-export of :mod:`omnitensor.kernels.ctype` (the dtype -> C type facts moved there with
the kernel generators); kept so the runtime modules' imports stay short."""
from __future__ import annotations

from ...kernels.ctype import (BITS, BY_KEY, BY_NP, CType, bits_of, ctype, pack_bits,
                              pack_f64, pack_i32, pack_i64, pack_u32)

__all__ = ["BITS", "BY_KEY", "BY_NP", "CType", "bits_of", "ctype", "pack_bits", "pack_f64",
           "pack_i32", "pack_i64", "pack_u32"]
