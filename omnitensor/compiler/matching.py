"""Matching a program's primitive call against the node a capture recorded.

A segmented replay (``deferral.py``) runs the Python program again and, before it defers a
primitive, asks whether the call is the capture's: the same op on the same values (by the
identity of the program's arrays, bound as they appear) with the same scalars.
:class:`Matcher` holds that binding (value id <-> the program's array) and answers it.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.dtypes import as_dtype
from . import capture
from .ir import DTypeName, Node, Value

if TYPE_CHECKING:
    from .segments import SegmentedCall

__all__ = ["Matcher"]


def _np_dtype(name: str) -> np.dtype:
    try:
        return np.dtype(name)
    except TypeError:
        return np.dtype(as_dtype(name).np)


def _layout(a: Any, backend: Any) -> tuple[int, ...]:
    """An input's layout as the graph device's backend reports it: its strides (a
    transposed argument gives results in its layout, ``contiguous()`` copies it, and a
    fused kernel was generated for the capture's strides)."""
    return tuple(backend.strides(a))



class Matcher:
    """The program's array of each value of one replay, and the match of a call."""

    def __init__(self, owner: "SegmentedCall") -> None:
        self.owner = owner
        self.py: dict[int, Any] = {}            # value id -> the program's array
        self.vid: dict[int, int] = {}           # id(array) -> its latest value id
        self.keep: list[Any] = []               # arrays kept alive (ids stay unique)
        self.binds: dict[int, int] = {}         # id(array) -> times bound (py, keep refs)
        self.viewed: dict[int, int] = {}        # id(array) -> views of it in keep
        self._loose = False                     # matching ignores scalars
        self.real: dict[str | None, Any] = {}   # device label -> real backend
        self.bound_inputs: list[Any] = []       # the program's arrays of graph inputs

    def _bind(self, v: Value, arr: Any) -> None:
        self.py[v.id] = arr
        i = id(arr)
        self.vid[i] = v.id
        self.keep.append(arr)
        n = self.binds.get(i, 0)
        self.binds[i] = n + 1
        if not n:   # a view (NumPy's) references its base: keep's reference, not the program's
            b = getattr(arr, "base", None)
            if b is not None and id(b) in self.binds:
                self.viewed[id(b)] = self.viewed.get(id(b), 0) + 1

    def _same(self, r: Any, a: Any) -> bool:
        if isinstance(r, Value):
            if not capture._is_array(a):
                return False
            j = self.vid.get(id(a))
            if j is not None:
                return j == r.id
            if r.id not in self.owner.input_ids or r.id in self.py:
                return False
            if tuple(int(s) for s in a.shape) != r.shape or str(a.dtype) != r.dtype:
                return False
            if _layout(a, self.real[None]) != self.owner.in_layout.get(r.id):
                return False
            self._bind(r, a)
            self.bound_inputs.append(a)
            return True
        if isinstance(r, DTypeName):
            try:
                return _np_dtype(str(r)) == np.dtype(a)
            except TypeError:
                return False
        if isinstance(r, (tuple, list)):
            # a tuple subclass (Size, a NamedTuple) was recorded as its tuple
            return (isinstance(a, tuple) == isinstance(r, tuple)
                    and isinstance(a, (tuple, list)) and len(a) == len(r)
                    and all(self._same(x, y) for x, y in zip(r, a)))
        if isinstance(r, dict):
            return (isinstance(a, dict) and a.keys() == r.keys()
                    and all(self._same(r[k], a[k]) for k in r))
        if isinstance(a, np.generic):
            a = a.item()
        if type(a) is not type(r):
            return False
        if self._loose and isinstance(r, (int, float, complex)) and not isinstance(r, bool):
            return True
        if isinstance(r, float) and math.isnan(r):
            return math.isnan(a)
        return bool(a == r)

    def _matches(self, n: Node, args: tuple, kwargs: dict) -> bool:
        rk = n.kwargs
        if n.op == "random_bits":   # (shape, key, counter, index): the key is fresh
            rk = {k: v for k, v in rk.items() if k != "generator"}
            return (len(args) == 4 and self._same(n.args[0], args[0])
                    and self._same(n.args[3], args[3]) and self._same(rk, kwargs))
        if self._loose:
            return self._same(n.args, args) and self._same(rk, kwargs)
        # the common case, flat: values by identity, plain scalars by equality
        spec = self.owner.arg_specs(n)
        if len(args) != len(spec) or len(kwargs) != len(rk):
            return False
        vid = self.vid
        for (kind, r), a in zip(spec, args):
            if kind == 0:
                j = vid.get(id(a))
                if j == r.id:
                    continue
                if j is not None or not self._same(r, a):
                    return False
            elif kind == 1:
                try:
                    if a.__class__ is r.__class__ and a == r:
                        continue
                except (TypeError, ValueError):
                    return False
                if not self._same(r, a):
                    return False
            elif not self._same(r, a):
                return False
        return not rk or self._same(rk, kwargs)
