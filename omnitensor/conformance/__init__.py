"""Cross-vendor conformance: the same op suite on every device, compared with NumPy.
Run ``omnitensor conformance --device opencl:0`` to certify a device."""
from .cases import Case
from .table import ALL_CASES, CASES_BY_NAME
from .runner import check_case, run

__all__ = ["ALL_CASES", "CASES_BY_NAME", "Case", "check_case", "run"]
