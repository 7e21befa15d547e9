"""``torch.backends.cpu`` on omnitensor. This is torch's flag module, not the cpu device
adapter (that is ``omnitensor.backends.cpu``)."""
from __future__ import annotations


def get_cpu_capability() -> str:
    """omnitensor's cpu kernels are NumPy's: it reports NumPy's baseline SIMD level when
    NumPy says it, else "DEFAULT" (torch's answer for a build without vector kernels)."""
    try:
        import numpy as np
        found = np.__config__.CONFIG["SIMD Extensions"].get("found") or []
        for level in ("AVX512F", "AVX2"):
            if level in found:
                return level.replace("F", "")
    except Exception:  # noqa: BLE001 - older NumPy: no such record
        pass
    return "DEFAULT"
