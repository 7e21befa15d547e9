"""``repr`` of a tensor is torch's text, dtype names aside: the format (fixed, integer
floats, scientific) chosen from the values shown, the summary mark " ...", torch's line
breaks and where the suffixes go."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
CASES = {
    "ints summarized": np.arange(3000),
    "integer floats, 1000x spread": np.arange(3000.0),
    "rows summarized": np.arange(2000).reshape(2, 1000),
    "normal, summarized": RNG.standard_normal((100, 100)).astype(np.float32),
    "integer floats": np.arange(24).reshape(2, 3, 4) * 1.5,
    "small": np.array([1.0, 2.0, 3.0]) * 1e-5,
    "big": np.array([1.0, 1e9]),
    "spread": np.array([1.0, 2000.0]),
    "specials": np.array([np.nan, 1.0, np.inf]),
    "wrapped rows": RNG.standard_normal((4, 30)).astype(np.float32),
    "bools summarized": np.arange(1001) % 3 == 0,
    "4-D": (RNG.standard_normal((7, 7, 7, 7)) * 100).astype(np.float32),
}


@pytest.mark.parametrize("name", list(CASES))
def test_repr_is_torchs(name):
    values = CASES[name]
    expected = repr(torch.tensor(values))
    assert repr(ot.tensor(values)).replace("omnitensor.", "torch.") == expected


def test_suffixes_break_the_line_as_torch():
    values = np.arange(7.0, dtype=np.float32)
    t = torch.tensor(values, requires_grad=True)
    o = ot.tensor(values, requires_grad=True)
    assert repr(o) == repr(t)
    long = np.arange(13.0, dtype=np.float32) * 1.5
    assert repr(ot.tensor(long, requires_grad=True)) == \
        repr(torch.tensor(long, requires_grad=True))
