"""Reflected operators called unbound, ``Tensor.__radd__(2, t)``: those torch binds as C
descriptors (or as a method of ``self``, the division) refuse a non-tensor ``self``, the
others compute (or answer NotImplemented) as torch does; ``2 + t`` and its kin are unaffected."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot

torch = pytest.importorskip("torch")

NAMES = ["radd", "rsub", "rmul", "rtruediv", "rdiv", "rfloordiv", "rmod", "rpow", "rand",
         "ror", "rxor", "rlshift", "rrshift"]


@pytest.mark.parametrize("name", NAMES)
def test_unbound_reflected_operator_with_a_scalar_self_is_torchs(name, device):
    dunder = f"__{name}__"
    t_err = o_err = None
    try:
        expected = getattr(torch.Tensor, dunder)(2, torch.tensor([1, 2, 3]))
    except (TypeError, AttributeError) as e:
        t_err = e
    try:
        actual = getattr(ot.Tensor, dunder)(2, ot.tensor([1, 2, 3], device=device))
    except TypeError as e:
        o_err = e
    assert (t_err is None) == (o_err is None), (t_err, o_err)
    if o_err is not None:
        assert dunder.replace("rdiv", "rtruediv") in str(o_err) and "'int'" in str(o_err)
    elif expected is NotImplemented:  # torch's wrapper turns its kernel's refusal into this
        assert actual is NotImplemented
    else:
        np.testing.assert_array_equal(actual.cpu().numpy(), expected.numpy())


@pytest.mark.parametrize("name", NAMES)
def test_reflected_operator_through_python_still_computes(name, device):
    op = {"radd": "+", "rsub": "-", "rmul": "*", "rtruediv": "/", "rdiv": "/",
          "rfloordiv": "//", "rmod": "%", "rpow": "**", "rand": "&", "ror": "|", "rxor": "^",
          "rlshift": "<<", "rrshift": ">>"}[name]
    expected = eval(f"6 {op} t", {"t": torch.tensor([1, 2, 3])})
    actual = eval(f"6 {op} t", {"t": ot.tensor([1, 2, 3], device=device)})
    np.testing.assert_allclose(actual.cpu().numpy(), expected.numpy())
