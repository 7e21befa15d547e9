"""torch's Tensor methods bound onto omnitensor's Tensor from functions core already has:
the in-place forms of out-of-place ops (one rule: :func:`inplace_method`), and the small torch methods
written here (``fill_diagonal_``, ``new``, ``apply_``/``map_``/``map2_``, ``module_load``...).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .tensor import Tensor
from .ops import composite, creation, random as rnd, reduction as red, ternary, torch_extras
from .ops.inplace import inplace_method


def fix(self: Tensor) -> Tensor:
    """torch's ``fix``: ``trunc``."""
    return self.trunc()


def diff(self: Tensor, n: int = 1, dim: int = -1, prepend: Any = None,
         append: Any = None) -> Tensor:
    """torch's ``x.diff(n, dim, prepend, append)``."""
    return composite.diff(self, axis=dim, n=n, prepend=prepend, append=append)


def dist(self: Tensor, other: Any, p: Any = 2) -> Tensor:
    """torch's ``x.dist(other, p=2)``: the ``p``-norm of ``x - other`` over every element."""
    return torch_extras.norm(self - other, p)


def bernoulli(self: Tensor, p: Any = None, *, generator: Any = None) -> Tensor:
    """torch's ``x.bernoulli()``: 0/1 draws with the probabilities in ``x`` (or ``p``),
    in ``x``'s dtype."""
    probs = self if p is None else (p if isinstance(p, Tensor)
                                    else creation.full_like(self, p))
    return rnd.bernoulli(probs, generator=generator).to(self.dtype)


def multinomial(self: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Any = None) -> Tensor:
    """torch's ``x.multinomial(num_samples, replacement=False)``."""
    return rnd.multinomial(self, num_samples, replacement, generator=generator)


def nonzero_static(self: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """torch's ``x.nonzero_static(size=, fill_value=-1)``."""
    from .ops.counting import nonzero_static as _nz
    return _nz(self, size=size, fill_value=fill_value)


def narrow_copy(self: Tensor, dimension: int, start: int, length: int) -> Tensor:
    """torch's ``x.narrow_copy(dim, start, length)``: ``narrow``, copied."""
    return self.narrow(dimension, start, length).clone()


def hardshrink(self: Tensor, lambd: float = 0.5) -> Tensor:
    """torch's ``x.hardshrink(lambd)``: ``x`` where ``|x| > lambd``, else 0."""
    return ternary.where(self.abs() > lambd, self, creation.zeros_like(self))


def prelu(self: Tensor, weight: Tensor) -> Tensor:
    """torch's ``x.prelu(weight)``: ``x`` where ``x >= 0``, else ``weight * x``, ``weight``
    one value or one per channel (axis 1)."""
    n = weight.numel()
    if n != 1:
        if self.ndim < 2 or self.shape[1] != n:
            raise ValueError(f"prelu: weight has {n} elements, expected 1 or the input's "
                             f"number of channels (axis 1)")
        weight = weight.reshape((n,) + (1,) * (self.ndim - 2))
    return ternary.where(self >= 0, self, weight * self)


def adjoint(self: Tensor) -> Tensor:
    """torch's ``adjoint``: the conjugate transpose of the last two axes."""
    if self.ndim < 2:
        raise ValueError("adjoint() is only supported for tensors of 2 or more dimensions")
    t = self.transpose(-2, -1)
    return t.conj() if self.dtype.kind == "c" else t


def _false(name: str, why: str) -> Callable[[Tensor], bool]:
    def query(self: Tensor) -> bool:
        return False
    query.__name__ = query.__qualname__ = name
    query.__doc__ = f"torch's ``{name}()``: always False here ({why})."
    return query


def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """torch's ``fill_diagonal_``: the main diagonal (``x[i, i, ...]``) set to
    ``fill_value`` in place; a tall matrix restarts it every ``cols + 1`` rows with
    ``wrap``. Tensors of more than 2 dimensions must have every size equal."""
    shape = tuple(self.shape)
    if len(shape) < 2:
        raise ValueError("fill_diagonal_: dimensions must be larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise ValueError("fill_diagonal_: all dimensions of input must be of equal length")
    numel = int(np.prod(shape))
    if len(shape) == 2:  # numpy's fill_diagonal rule, as torch's
        step, end = shape[1] + 1, numel if wrap else min(numel, shape[1] * shape[1])
    else:
        step, end = 1 + int(np.sum(np.cumprod(shape[:-1]))), numel
    flat = np.arange(0, end, step)
    index = tuple(creation.asarray(i, device=self.device)
                  for i in np.unravel_index(flat, shape))
    self[index] = fill_value
    return self


def new(self: Tensor, *args: Any, device: Any = None) -> Tensor:
    """torch's legacy ``x.new(...)``: ``x.new()`` an empty tensor, ``x.new(2, 3)`` /
    ``x.new(size)`` an uninitialized one, ``x.new(data)`` a tensor of ``data``; in ``x``'s
    dtype and on its device."""
    dev = self.device if device is None else device
    if not args:
        return creation.empty((0,), dtype=self.dtype, device=dev)
    if len(args) == 1 and not isinstance(args[0], int):
        data = args[0]
        if isinstance(data, (tuple, list)) and all(isinstance(v, int) for v in data) and \
                type(data).__name__ == "Size":
            return creation.empty(tuple(data), dtype=self.dtype, device=dev)
        return creation.tensor(data, dtype=self.dtype, device=dev)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in args):
        raise TypeError(f"new(): expected sizes as ints, got {args!r}")
    return creation.empty(args, dtype=self.dtype, device=dev)


def _host_map(self: Tensor, name: str, fn: Callable, *others: Tensor) -> Tensor:
    if self.device.type != "cpu" or any(o.device.type != "cpu" for o in others):
        raise TypeError(f"{name} is only implemented on CPU tensors (torch's rule)")
    if self.requires_grad:
        raise RuntimeError(f"{name}: a tensor that requires grad cannot be changed by a "
                           f"Python callable")
    cols = [self.tolist()] + [o.broadcast_to(self.shape).tolist() for o in others]
    flat = [np.asarray(c, dtype=object).reshape(-1) for c in cols]
    out = np.array([fn(*vals) for vals in zip(*flat)], dtype=object).reshape(self.shape)
    self.copy_(creation.tensor(out.astype(self.dtype.np), dtype=self.dtype))
    return self


def apply_(self: Tensor, callable: Callable) -> Tensor:  # noqa: A002 - torch's name
    """torch's ``apply_``: each element replaced by ``callable(element)`` (cpu only)."""
    return _host_map(self, "apply_", callable)


def map_(self: Tensor, tensor: Tensor, callable: Callable) -> Tensor:  # noqa: A002
    """torch's ``map_``: ``self[i] = callable(self[i], tensor[i])`` (cpu only)."""
    return _host_map(self, "map_", callable, tensor)


def map2_(self: Tensor, x: Tensor, y: Tensor, callable: Callable) -> Tensor:  # noqa: A002
    """torch's ``map2_``: ``self[i] = callable(self[i], x[i], y[i])`` (cpu only)."""
    return _host_map(self, "map2_", callable, x, y)


def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """torch's ``module_load`` (how ``load_state_dict`` remaps ``other`` into ``self``):
    ``other.detach()`` with ``assign``, else ``self.copy_(other).detach()``."""
    if assign:
        return other.detach()
    from .graph import no_grad_ctx
    with no_grad_ctx():
        self.copy_(other)
    return self.detach()


def const_data_ptr(self: Tensor) -> int:
    """torch's ``const_data_ptr``: ``data_ptr()``."""
    return self.data_ptr()


def unsafe_split_with_sizes(self: Tensor, split_sizes: Any, dim: int = 0) -> tuple:
    """torch's ``unsafe_split_with_sizes``: ``split_with_sizes``."""
    return torch_extras.split_with_sizes(self, split_sizes, dim)


INPLACE: dict[str, Callable[..., Any]] = {  # torch's in-place methods, each from the out-of-place method of its name
    "cumprod_": red.cumprod, "deg2rad_": composite.deg2rad, "rad2deg_": composite.rad2deg,
    "frac_": composite.frac, "heaviside_": composite.heaviside, "logit_": composite.logit,
    "sinc_": composite.sinc, "xlogy_": composite.xlogy, "fix_": fix,
}


def bind(T: Any) -> None:
    """Bind this module's methods onto ``T`` (the Tensor class)."""
    methods: tuple[Callable[..., Any], ...] = (
        fix, diff, dist, bernoulli, multinomial, nonzero_static, narrow_copy,
        hardshrink, prelu, adjoint, fill_diagonal_, new, apply_, map_, map2_, module_load,
        const_data_ptr, unsafe_split_with_sizes)
    for fn in methods:
        setattr(T, fn.__name__, fn)
    T.is_conj = _false("is_conj", "conj() materializes: no tensor carries a conjugate bit")
    T.is_neg = _false("is_neg", "negation materializes: no tensor carries a negative bit")
    T.is_distributed = _false("is_distributed", "as in torch, which always answers False")
    for name, out_of_place in INPLACE.items():
        setattr(T, name, inplace_method(out_of_place, name[:-1]))
    from . import methods_torch_more  # in-place views, removed methods, layout queries
    methods_torch_more.bind(T)
