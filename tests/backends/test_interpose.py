"""``backends/interpose.py``: the one interposer applies a policy by declared kind only.

Run on a real NumPy backend instance (its own, not the registry's shared one)."""
from __future__ import annotations

import numpy as np
import pytest

from omnitensor.backends import base
from omnitensor.backends.interpose import Interposer, Policy
from omnitensor.backends.cpu.backend import NumpyBackend


class Counting(Policy):
    def __init__(self, kinds):
        self.kinds = frozenset(kinds)
        self.calls: list[tuple[str, str]] = []

    def wrap(self, name, kind, fn):
        def call(*a, **k):
            self.calls.append((name, kind))
            return fn(*a, **k)
        return call


def test_a_stand_in_hands_the_policy_only_its_kinds():
    be = NumpyBackend()
    p = Counting((base.OP, base.HOST_READ, base.HOOK))
    ib = Interposer(be, p)
    x = ib.full((3,), 2.0, np.dtype(np.float32), 0)
    y = ib.add(x, x)
    assert ib.to_numpy(y).tolist() == [4.0, 4.0, 4.0]
    ib.synchronize(0)                                  # a sync: not this policy's
    assert ib.supports_dtype(np.dtype(np.float32), 0)  # a query: never the policy's
    assert ib.strides(y) == be.strides(y)
    assert ib.name == "cpu" and ib.native_broadcasting == be.native_broadcasting
    assert p.calls == [("full", base.OP), ("add", base.OP), ("to_numpy", base.HOST_READ)]
    einsum = ib.hook("einsum")                         # a hook found through the lookup
    assert einsum is not None and ib.hook("sigmoid") is None   # cpu has none
    assert float(einsum("i,i->", y, y)) == 48.0
    assert p.calls[-1] == ("einsum", base.HOOK)


def test_an_undeclared_callable_is_an_error_not_a_silent_pass():
    be = NumpyBackend()
    be.frobnicate = lambda x: x   # a primitive nobody declared in base.py
    with pytest.raises(TypeError, match="frobnicate.*ATTRIBUTE_KINDS"):
        Interposer(be, Counting((base.OP,))).frobnicate  # noqa: B018 - the access raises
    with pytest.raises(TypeError, match="frobnicate"):
        Interposer(be, Counting((base.OP,))).install()


def test_install_wraps_the_instance_and_restore_undoes_it():
    be = NumpyBackend()
    before = dict(be.__dict__)
    p = Counting((base.OP, base.SYNC))
    n, restore = Interposer(be, p).install()
    assert n > 100 and "add" in be.__dict__ and "synchronize" in be.__dict__
    assert "to_numpy" not in be.__dict__ and "hook" not in be.__dict__
    be.add(np.ones(2), np.ones(2))
    be.synchronize(0)
    assert p.calls == [("add", base.OP), ("synchronize", base.SYNC)]
    restore()
    assert be.__dict__.keys() == before.keys()
    assert all(be.__dict__[k] is v for k, v in before.items())
