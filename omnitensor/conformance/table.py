"""The whole conformance table: elementwise ops and reductions (``cases.py``), then matmul,
convolutions and ``nn.functional`` (``nn_cases.py``), in the order they are checked."""
from __future__ import annotations

from .cases import BINARY, REDUCTIONS, UNARY, Case
from .nn_cases import NN

ALL_CASES: list[Case] = UNARY + BINARY + REDUCTIONS + NN
CASES_BY_NAME = {c.name: c for c in ALL_CASES}
