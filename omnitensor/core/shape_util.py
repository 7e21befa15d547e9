"""Shape rules shared by every op: broadcasting, axis normalisation, strides."""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable, Sequence

import numpy as np

from ..errors import IndexOutOfRangeError, ShapeError


def _where(op: str | None, name: str) -> str:
    return f"{op}(): argument '{name}'" if op else f"argument '{name}'"


def _bool_tensor(value: Any) -> bool:
    """A bool tensor: an index to Python (``__index__`` gives 0/1, as torch's), never an int
    argument (torch's argument parser refuses it)."""
    return getattr(getattr(value, "_dtype", None), "kind", None) == "b"


def int_arg(value: Any, name: str = "dim", op: str | None = None) -> int:
    """torch's rule for an int argument (a dim, a size, a count), the one place it is
    written: anything with ``__index__`` (Python and NumPy ints, 0-d integer tensors),
    never a bool (``True`` is an int to Python, but torch refuses it where it wants an
    int, so ``sort(x, True)`` cannot silently sort along dim 1) and never None (callers
    that give None a meaning, such as "every dim", decide that before calling this)."""
    if value.__class__ is int:  # fast path
        return value
    if isinstance(value, (bool, np.bool_)) or _bool_tensor(value):
        raise TypeError(f"{_where(op, name)} must be int, not bool")
    try:
        return int(value.__index__())
    except (AttributeError, TypeError):
        raise TypeError(f"{_where(op, name)} must be int, not "
                        f"{type(value).__name__}") from None


def normalize_axis(axis: Any, ndim: int, name: str = "dim", op: str | None = None) -> int:
    """A non-negative axis; TypeError for a non-int (a bool included, as torch),
    IndexError naming the valid range otherwise."""
    a = int_arg(axis, name, op)
    n = max(ndim, 1)
    if not -n <= a < n:
        raise IndexOutOfRangeError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
            f"{a})")
    return a % n if ndim else 0


def no_none_dim(dim: Any, op: str, name: str = "dim") -> Any:
    """``dim`` unchanged, refusing an explicit None where torch does (``flip(x, None)``,
    ``x.squeeze(None)``, ``x.prod(None)``...): only some of torch's reductions read None
    as "every dim" (``sum``, ``mean``, ``amax``, ``std``...), and those do not call this."""
    if dim is None:
        raise TypeError(f"{_where(op, name)} must be int or tuple of ints, not NoneType")
    return dim


_ALL_AXES = [tuple(range(n)) for n in range(65)]


def normalize_axes(axes: Any, ndim: int, allow_empty: bool = True, name: str = "dim",
                   op: str | None = None) -> tuple[int, ...]:
    """Sorted unique non-negative axes from None (all), an int or a sequence."""
    if axes is None:
        return _ALL_AXES[ndim] if ndim < 65 else tuple(range(ndim))
    if isinstance(axes, (list, tuple)):
        out = tuple(sorted(normalize_axis(a, ndim, name, op) for a in axes))
        if len(set(out)) != len(out):
            raise ValueError(f"repeated axis in {tuple(axes)}")
        return out
    return (normalize_axis(axes, ndim, name, op),)


@lru_cache(maxsize=4096)
def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of shapes (NumPy/torch rules); ShapeError naming them otherwise."""
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        off = ndim - len(s)
        for i, n in enumerate(s):
            cur = out[off + i]
            if n == cur or n == 1:
                continue
            if cur == 1:
                out[off + i] = n
            else:
                raise ShapeError(
                    "shapes " + " and ".join(str(tuple(x)) for x in shapes)
                    + f" cannot be broadcast together (axis {off + i - ndim}: {cur} vs {n})")
    return tuple(out)


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """C-order strides in elements."""
    strides = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def prod(values: Iterable[int]) -> int:
    p = 1
    for v in values:
        p *= v
    return p


def as_shape(args: Sequence[Any], name: str = "size", op: str | None = None,
             sequence: bool = False) -> tuple[int, ...]:
    """Accept ``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` forms of a shape (a bare int,
    ``f(3)``, too unless ``sequence``: torch's ``full``/``randint``/``normal`` take only a
    sequence); every entry is an int by :func:`int_arg`'s rule (no bool, no None)."""
    if len(args) == 1 and args[0].__class__ is tuple:  # fast path: already a shape
        shape = args[0]
        for n in shape:
            if n.__class__ is not int or n < 0:
                break
        else:
            return shape
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    elif len(args) == 1 and hasattr(args[0], "shape") and hasattr(args[0], "tolist"):
        args = args[0].tolist()
        args = args if isinstance(args, list) else [args]  # a 0-d tensor: one size
    elif len(args) == 1 and (sequence or args[0] is None or isinstance(args[0], bool)
                             or not hasattr(args[0], "__index__")):
        raise TypeError(f"{_where(op, name)} must be tuple of ints, not "
                        f"{type(args[0]).__name__}")
    for pos, a in enumerate(args):
        if isinstance(a, (bool, np.bool_)) or _bool_tensor(a) or not hasattr(a, "__index__"):
            raise TypeError(f"{_where(op, name)} must be tuple of ints, but found element "
                            f"of type {type(a).__name__} at pos {pos}")
    shape = tuple(int(a.__index__()) for a in args)
    if any(s < 0 for s in shape):
        raise ShapeError(f"negative dimension in shape {shape}")
    return shape


def infer_reshape(shape: Sequence[int], size: int) -> tuple[int, ...]:
    """Resolve one -1 in a target shape; ShapeError when sizes disagree."""
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise ShapeError(f"only one dimension can be inferred (-1), got shape {shape}")
    if -1 in shape:
        known = prod(s for s in shape if s != -1)
        if known == 0 or size % known:
            raise ShapeError(f"shape {shape} is invalid for input of size {size}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if any(s < 0 for s in shape) or prod(shape) != size:
        raise ShapeError(f"shape {shape} is invalid for input of size {size}")
    return shape


class Size(tuple):
    """A tensor's shape: a tuple of ints with torch's ``numel()``."""

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key: Any) -> Any:
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other: Any) -> "Size":
        return Size(tuple(self) + tuple(other))

    def __repr__(self) -> str:
        return f"omnitensor.Size({list(self)})"
