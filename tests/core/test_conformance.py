"""Every elementwise op, reduction and sort on every device and dtype, against NumPy in
float64 (the table lives in omnitensor.conformance.cases, shared with the CLI)."""
import pytest

import omnitensor as ot
from omnitensor.conformance import ALL_CASES, check_case

PARAMS = [pytest.param(c, d, id=f"{c.name}-{d}") for c in ALL_CASES for d in c.dtypes]


@pytest.mark.parametrize("case,dtype", PARAMS)
def test_op_matches_numpy(case, dtype, device):
    if not ot.device(device).supports_dtype(dtype):
        pytest.skip(f"{device} has no {dtype}")
    failures = check_case(case, dtype, device)
    assert not failures, "\n".join(failures)
