"""Core hands a primitive only dtypes its table row has a C template for: a core dtype rule
wider than the row (a real-only formula under ``u_float``, which admits complex) fails here,
on the table, instead of as a build error on the OpenCL devices."""
import pytest

from omnitensor.kernels.primitives import PRIMITIVES

from contract_helpers import ALL, core_calls

_ROWS = [p for p in PRIMITIVES if not p.hook]


@pytest.mark.parametrize("row", _ROWS, ids=lambda p: p.name)
def test_core_hands_only_the_kinds_the_row_renders(row):
    handed = {d.kind for d in ALL if core_calls(row.name, d)}
    assert handed <= set(row.kinds), (
        f"core's dtype rule for {row.name} hands it kinds {''.join(sorted(handed))}, its row "
        f"has C templates for {row.kinds}: narrow the rule or add the templates")
