"""Storage dtypes (``bfloat16``): held in 16 bits, computed in their ``DType.compute``.

torch computes bfloat16 ops in float32 and rounds each result once to bfloat16 (round to
nearest even); sums, means and matrix products accumulate in float32. Core does the same
in two places: elementwise ops map a rule's compute dtype in
``elementwise_dispatch._computing``, and every other op that computes (reductions, matmul,
sorting, softmax...) is wrapped by :func:`via_compute` here. Backends therefore only hold bfloat16 and cast to and from it.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from .. import dtypes as _dt
from ..tensor import Tensor

F = TypeVar("F", bound=Callable[..., Any])


def _storage_dtype(args: tuple, kwargs: dict) -> _dt.DType | None:
    """The storage dtype when every floating tensor argument has it, else None (mixed
    with float32 and wider, promotion already leaves the storage dtype)."""
    found: _dt.DType | None = None
    for a in (*args, *kwargs.values()):
        if isinstance(a, (list, tuple)):
            items: Any = a
        else:
            items = (a,)
        for t in items:
            if not isinstance(t, Tensor) or t._dtype.kind not in "fc":
                continue
            d = t._dtype
            if d.compute is d or (found is not None and d is not found):
                return None
            found = d
    return found


def _widen(a: Any, d: _dt.DType) -> Any:
    if isinstance(a, Tensor) and a._dtype is d:
        return a.to(d.compute)
    if isinstance(a, list):
        return [_widen(t, d) for t in a]
    if isinstance(a, tuple) and not hasattr(a, "_fields"):
        return tuple(_widen(t, d) for t in a)
    return a


def _narrow(r: Any, d: _dt.DType) -> Any:
    if isinstance(r, Tensor):
        return r.to(d) if r._dtype is d.compute else r
    if isinstance(r, tuple):
        items = [_narrow(t, d) for t in r]
        return type(r)(*items) if hasattr(r, "_fields") else tuple(items)
    return r


def via_compute(fn: F) -> F:
    """``fn`` computing storage-dtype operands in their compute dtype: tensor arguments
    of a storage dtype are widened (bfloat16 -> float32), and results of the compute dtype
    rounded back once. Both casts are ordinary differentiable ops, so gradients flow (and
    arrive in the storage dtype, as in torch). Other calls go straight to ``fn``."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        d = _storage_dtype(args, kwargs)
        if d is None:
            return fn(*args, **kwargs)
        if kwargs.get("dtype") is not None:  # an explicit result dtype: compute, then cast
            want = _dt.as_dtype(kwargs["dtype"])
            if want is not d:
                return fn(*[_widen(a, d) for a in args], **kwargs)
            kwargs = {**kwargs, "dtype": d.compute}
        r = fn(*[_widen(a, d) for a in args],
               **{k: _widen(v, d) for k, v in kwargs.items()})
        return _narrow(r, d)
    return call  # type: ignore[return-value]


def round_widened(x: Tensor) -> None:
    """Round ``x`` back onto its storage dtype's grid, in place, after an accumulating
    write (``index_put_(accumulate=True)``, ``scatter_add``...) on a backend that holds the
    dtype widened (bfloat16 as float32 on dpnp and CuPy: its adds ran in float32). Other
    tensors are left alone: their backend rounded each add itself."""
    d = x._dtype
    if d.compute is not d and x._data.dtype != d.np:
        be = x._device.backend
        be.assign(x._data, be.astype(x._data, d.np))
