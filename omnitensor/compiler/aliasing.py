"""Which arrays share memory: the aliasing guard of compiled calls.

A captured graph knows two tensors alias only when they are the same backend array (one
input). Tensors that are *different* arrays over the same memory (``t[:4]`` and ``t[2:]``,
``t`` and ``t.T``, a parameter passed as an argument through a view, two ``from_numpy`` of
one NumPy array) are distinct inputs to it, and a fused plan may read one after writing
the other where eager read first. So:

* the guard key holds the aliasing pattern of everything a call reads (:func:`pattern`):
  a call whose inputs alias differently than the capture's is another key, captured again;
* a capture whose inputs overlap without being one array is planned unfused (the recorded
  primitives in their recorded order are eager's order);
* a segmented replay checks a segment's arrays before running its fused plan
  (:func:`any_overlap`), and runs the segment node by node when they overlap.

Spans come from :meth:`Backend.memory_span` and are cached per array (an array's memory
never changes; the cache entry goes with the array).
"""
from __future__ import annotations

import weakref
from typing import Any, Iterable, Sequence

__all__ = ["span", "pattern", "any_overlap"]

_SPANS: dict[int, tuple[tuple[int, int, int], Any]] = {}


def span(arr: Any, backend: Any) -> tuple[int, int, int]:
    """``backend.memory_span(arr)``, cached while ``arr`` lives."""
    k = id(arr)
    hit = _SPANS.get(k)
    if hit is not None:
        return hit[0]
    try:
        s = backend.memory_span(arr)
    except (AttributeError, TypeError):
        # an array of another device than ``backend``'s (a multi-device segment): it
        # cannot share memory with this device's arrays; its own allocation
        return (id(arr), 0, 1)
    def forget(_ref: Any, k: int = k) -> None:
        _SPANS.pop(k, None)
    try:
        ref = weakref.ref(arr, forget)
    except TypeError:   # not weakly referenceable: not cached
        return s
    _SPANS[k] = (s, ref)
    return s


def _pairs(arrays: Sequence[Any], backends: Sequence[Any]) -> Iterable[tuple[int, int, bool]]:
    """``(i, j, same)`` for each pair ``i < j`` whose memory intersects (``same``: one
    array object); a sort and a sweep, so a model's hundreds of tensors stay cheap."""
    spans = []
    for i, (a, be) in enumerate(zip(arrays, backends)):
        alloc, lo, hi = span(a, be)
        if hi > lo:
            spans.append((alloc, lo, hi, i))
    spans.sort()
    open_: list[tuple[int, int, int]] = []   # (hi, i, alloc) still reaching forward
    for alloc, lo, hi, i in spans:
        open_ = [o for o in open_ if o[2] == alloc and o[0] > lo]
        for _hi, j, _alloc in open_:
            a, b = (j, i) if j < i else (i, j)
            yield a, b, arrays[a] is arrays[b]
        open_.append((hi, i, alloc))


def pattern(tensors: Sequence[Any]) -> tuple:
    """The aliasing pattern of ``tensors`` (positions of overlapping pairs, and whether
    each pair is one array): ``()`` when none share memory, the common case."""
    arrays = [t._data for t in tensors]
    backends = [t._device.backend for t in tensors]
    return tuple(sorted(_pairs(arrays, backends)))


def any_overlap(arrays: Sequence[Any], backend: Any) -> bool:
    """Whether two *different* arrays of ``arrays`` share memory."""
    seen: dict[int, Any] = {}
    for a in arrays:
        seen.setdefault(id(a), a)
    distinct = list(seen.values())
    if len(distinct) < 2:
        return False
    return any(not same for _i, _j, same in _pairs(distinct, [backend] * len(distinct)))
