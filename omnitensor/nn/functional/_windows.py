"""N-d kernel windows (im2col), their adjoint (col2im), and the argument rules of every
window op (convolutions, transposed convolutions, pools) in one place.

The rules run before any backend sees the call, so cpu, opencl, sycl and cuda answer bad
arguments (negative padding, zero stride or dilation, a kernel larger than the padded
input, groups not dividing the channels, wrong ranks, an output_padding too large) with the
same ``ValueError``/``ShapeError``, messages worded as torch's.

The window helpers are data-only (no graph: ``conv.py`` wraps them in graph nodes) and are
written with the trusted layout ops of ``core/trusted.py`` (each op's own row, no
re-validation: the window keys are built here in normal form): ``K`` strided slice views
of a padded copy and one ``cat`` for the general case, one reshape/permute copy when the
windows tile the input (pooling with stride == kernel), and in-place adds through slice
views for the adjoint.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Sequence

from ...core.graph import no_grad_ctx
from ...core.ops.creation import zeros
from ...core.tensor import Tensor, _make
from ...core.trusted import ops as _trusted_ops
from ...errors import ShapeError

Ints = tuple[int, ...]


# ------------------------------------------------------------------ argument rules
def expand(value: Any, n: int, name: str, op: str) -> Ints:
    """``3 -> (3,) * n``; a sequence must hold 1 or ``n`` ints (torch's rule)."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            value = tuple(value) * n
        if len(value) != n:
            raise ValueError(f"{op}: expected {name} to be a single integer value or a list "
                             f"of {n} values to match the {n}-d window dimensions, but got "
                             f"{name}={list(value)}")
        out = tuple(value)
    else:
        out = (value,) * n
    for v in out:
        if isinstance(v, bool) or not isinstance(v, int) and not hasattr(v, "__index__"):
            raise TypeError(f"{op}: {name} must be ints, got {value!r}")
    return tuple(int(v) for v in out)


def check_rank(x: Tensor, nd: int, op: str) -> bool:
    """Accept ``nd + 1`` (unbatched) or ``nd + 2`` dims; return whether unbatched."""
    if x.ndim not in (nd + 1, nd + 2):
        raise ShapeError(f"{op}: expected {nd + 1}-D (unbatched) or {nd + 2}-D (batched) "
                         f"input, but got input of size {list(x.shape)}")
    return x.ndim == nd + 1


def _positive(values: Ints, name: str, op: str) -> None:
    if any(v <= 0 for v in values):
        raise ValueError(f"{op}: {name} must be greater than zero, but got {list(values)}")


def _non_negative(values: Ints, name: str, op: str) -> None:
    if any(v < 0 for v in values):
        raise ValueError(f"{op}: negative {name} is not supported, got {list(values)}")


def out_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool = False) -> int:
    """Output length of a window op along one axis (torch's formula, with ceil_mode's
    rule that the last window must start inside the input or its left padding); -1 when
    the kernel does not fit the padded input."""
    span = n + 2 * p - (d * (k - 1) + 1)
    if span < 0:
        return -1
    o = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def _conv_geometry(op: str, nd: int, x: Tensor, weight: Tensor, bias: Tensor | None,
                  stride: Any, padding: Any, dilation: Any, groups: Any
                  ) -> tuple[bool, Ints, Ints, Ints, Ints]:
    """Check a convolution's arguments; return (unbatched, stride, left padding, dilation,
    output size). ``padding`` may be ints, ``'valid'`` or ``'same'`` (odd totals put the
    extra element on the right, as torch)."""
    unbatched = check_rank(x, nd, op)
    if weight.ndim != nd + 2:
        raise ShapeError(f"{op}: expected a {nd + 2}-D weight, got size {list(weight.shape)}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise ValueError(f"{op}: non-positive groups is not supported (groups={groups!r})")
    s = expand(stride, nd, "stride", op)
    d = expand(dilation, nd, "dilation", op)
    k = tuple(weight.shape[2:])
    _positive(s, "stride", op)
    _positive(d, "dilation", op)
    o, cg = weight.shape[:2]
    c = x.shape[0 if unbatched else 1]
    if o % groups:
        raise ShapeError(f"{op}: given groups={groups}, expected weight to be divisible by "
                         f"{groups} at dimension 0, but got weight of size "
                         f"{list(weight.shape)}")
    if c != cg * groups:
        raise ShapeError(f"{op}: given groups={groups}, weight of size {list(weight.shape)}, "
                         f"expected input {list(x.shape)} to have {cg * groups} channels, "
                         f"but got {c} channels instead")
    if bias is not None and tuple(bias.shape) != (o,):
        raise ShapeError(f"{op}: given weight of size {list(weight.shape)}, expected bias to "
                         f"be 1-dimensional with {o} elements, but got bias of size "
                         f"{list(bias.shape)}")
    size = tuple(x.shape[-nd:])
    if isinstance(padding, str):
        if padding == "valid":
            p = (0,) * nd
        elif padding == "same":
            if any(v != 1 for v in s):
                raise ValueError(f"{op}: padding='same' is not supported for strided "
                                 f"convolutions")
            # out == in; the left pad is half the total, windows() pads the rest right
            p = tuple(dd * (kk - 1) // 2 for dd, kk in zip(d, k))
            return unbatched, s, p, d, size
        else:
            raise ValueError(f"{op}: invalid padding string {padding!r} (use 'valid', "
                             f"'same' or ints)")
    else:
        p = expand(padding, nd, "padding", op)
        _non_negative(p, "padding", op)
    out = tuple(out_size(n, kk, ss, pp, dd) for n, kk, ss, pp, dd in zip(size, k, s, p, d))
    if any(v < 0 for v in out):
        raise ShapeError(f"{op}: calculated padded input size per channel: "
                         f"{tuple(n + 2 * pp for n, pp in zip(size, p))}; kernel size "
                         f"(dilated): {tuple(dd * (kk - 1) + 1 for dd, kk in zip(d, k))}. "
                         f"Kernel size can't be greater than actual input size")
    return unbatched, s, p, d, out


def _conv_transpose_geometry(op: str, nd: int, x: Tensor, weight: Tensor,
                            bias: Tensor | None, stride: Any, padding: Any,
                            output_padding: Any, groups: Any, dilation: Any
                            ) -> tuple[bool, Ints, Ints, Ints, Ints]:
    """Check a transposed convolution's arguments; return (unbatched, stride, padding,
    dilation, output size)."""
    unbatched = check_rank(x, nd, op)
    if weight.ndim != nd + 2:
        raise ShapeError(f"{op}: expected a {nd + 2}-D weight, got size {list(weight.shape)}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise ValueError(f"{op}: non-positive groups is not supported (groups={groups!r})")
    if isinstance(padding, str):
        raise ValueError(f"{op}: padding must be ints for transposed convolutions, got "
                         f"{padding!r}")
    s = expand(stride, nd, "stride", op)
    p = expand(padding, nd, "padding", op)
    op_ = expand(output_padding, nd, "output_padding", op)
    d = expand(dilation, nd, "dilation", op)
    _positive(s, "stride", op)
    _positive(d, "dilation", op)
    _non_negative(p, "padding", op)
    _non_negative(op_, "output_padding", op)
    if any(a >= ss and a >= dd for a, ss, dd in zip(op_, s, d)):
        raise ValueError(f"{op}: output padding must be smaller than either stride or "
                         f"dilation, but got output_padding={list(op_)}, stride={list(s)}, "
                         f"dilation={list(d)}")
    cin, cog = weight.shape[:2]
    c = x.shape[0 if unbatched else 1]
    if cin % groups:
        raise ShapeError(f"{op}: given groups={groups}, expected weight to be divisible by "
                         f"{groups} at dimension 0, but got weight of size "
                         f"{list(weight.shape)}")
    if c != cin:
        raise ShapeError(f"{op}: given transposed=1, weight of size {list(weight.shape)}, "
                         f"expected input {list(x.shape)} to have {cin} channels, but got "
                         f"{c} channels instead")
    if bias is not None and tuple(bias.shape) != (cog * groups,):
        raise ShapeError(f"{op}: expected bias of size ({cog * groups},), got "
                         f"{list(bias.shape)}")
    k = tuple(weight.shape[2:])
    size = tuple(x.shape[-nd:])
    out = tuple((n - 1) * ss - 2 * pp + dd * (kk - 1) + a + 1
                for n, ss, pp, dd, kk, a in zip(size, s, p, d, k, op_))
    if any(v <= 0 for v in out):
        raise ShapeError(f"{op}: given input size per channel {size}, calculated output "
                         f"size per channel {out}: output size is too small")
    return unbatched, s, p, d, out


def _pool_geometry(op: str, nd: int, x: Tensor, kernel_size: Any, stride: Any, padding: Any,
                  dilation: Any, ceil_mode: bool) -> tuple[bool, Ints, Ints, Ints, Ints, Ints]:
    """Check a pool's arguments; return (unbatched, kernel, stride, padding, dilation,
    output size). ``stride`` None (or empty) means ``kernel_size``."""
    unbatched = check_rank(x, nd, op)
    k = expand(kernel_size, nd, "kernel_size", op)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) \
        else expand(stride, nd, "stride", op)
    p = expand(padding, nd, "padding", op)
    d = expand(dilation, nd, "dilation", op)
    _positive(k, "kernel_size", op)
    _positive(s, "stride", op)
    _positive(d, "dilation", op)
    _non_negative(p, "padding", op)
    if any(pp * 2 > kk for pp, kk in zip(p, k)):
        raise ValueError(f"{op}: pad should be at most half of kernel size, but got "
                         f"pad={list(p)}, kernel_size={list(k)}")
    size = tuple(x.shape[-nd:])
    if any(n == 0 for n in x.shape[0 if unbatched else 1:]):  # only a batch may be empty
        raise ShapeError(f"{op}: expected non-empty non-batch dimensions (channels and "
                         f"spatial), got input of size {list(x.shape)}")
    out = tuple(out_size(n, kk, ss, pp, dd, ceil_mode)
                for n, kk, ss, pp, dd in zip(size, k, s, p, d))
    if any(v <= 0 for v in out):
        raise ShapeError(f"{op}: given input size {size}, calculated output size "
                         f"{tuple(max(v, 0) for v in out)}: output size is too small")
    return unbatched, k, s, p, d, out


# ------------------------------------------------------- the rules, memoised
# A layer calls its rule with the same shapes and ints every step; the rule is a pure
# function of them, so its answer is cached (a failing rule raises every time).
class _Shaped(tuple):
    """A tensor's shape standing in for the tensor in a memoised rule (hashable)."""

    @property
    def shape(self) -> Ints:
        return tuple(self)

    @property
    def ndim(self) -> int:
        return len(self)


def _plain(a: Any) -> bool:
    t = type(a)
    return t is int or t is bool or t is str or a is None or \
        (t is tuple and all(type(v) is int for v in a))


@functools.lru_cache(maxsize=1024, typed=True)  # typed: groups=True is refused, 1 not
def _memo(rule: Any, *args: Any) -> Any:
    return rule(*args)


def _ruled(rule: Any, op: str, nd: int, tensors: tuple, args: tuple) -> Any:
    if all(_plain(a) for a in args):
        return _memo(rule, op, nd, *(None if t is None else _Shaped(t.shape)
                                     for t in tensors), *args)
    return rule(op, nd, *tensors, *args)


def conv_geometry(op: str, nd: int, x: Tensor, weight: Tensor, bias: Tensor | None,
                  stride: Any, padding: Any, dilation: Any, groups: Any
                  ) -> tuple[bool, Ints, Ints, Ints, Ints]:
    """Check a convolution's arguments; return (unbatched, stride, left padding, dilation,
    output size). ``padding`` may be ints, ``'valid'`` or ``'same'`` (odd totals put the
    extra element on the right, as torch)."""
    return _ruled(_conv_geometry, op, nd, (x, weight, bias),
                  (stride, padding, dilation, groups))


def conv_transpose_geometry(op: str, nd: int, x: Tensor, weight: Tensor,
                            bias: Tensor | None, stride: Any, padding: Any,
                            output_padding: Any, groups: Any, dilation: Any
                            ) -> tuple[bool, Ints, Ints, Ints, Ints]:
    """Check a transposed convolution's arguments; return (unbatched, stride, padding,
    dilation, output size)."""
    return _ruled(_conv_transpose_geometry, op, nd, (x, weight, bias),
                  (stride, padding, output_padding, groups, dilation))


def pool_geometry(op: str, nd: int, x: Tensor, kernel_size: Any, stride: Any, padding: Any,
                  dilation: Any, ceil_mode: bool) -> tuple[bool, Ints, Ints, Ints, Ints, Ints]:
    """Check a pool's arguments; return (unbatched, kernel, stride, padding, dilation,
    output size). ``stride`` None (or empty) means ``kernel_size``."""
    return _ruled(_pool_geometry, op, nd, (x,),
                  (kernel_size, stride, padding, dilation, ceil_mode))


def output_size_arg(output_size: Any, size: Ints, op: str) -> Ints:
    """Adaptive pools' ``output_size``: an int, or a sequence (None keeps that size)."""
    nd = len(size)
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != nd:
            raise ValueError(f"{op}: output_size must be an int or {nd} values, got "
                             f"{output_size!r}")
        out = tuple(size[i] if v is None else int(v) for i, v in enumerate(output_size))
    else:
        out = (int(output_size),) * nd
    if any(v < 0 for v in out):
        raise ValueError(f"{op}: output_size must be non-negative, got {out}")
    if any(n == 0 for n in size):
        raise ShapeError(f"{op}: expected non-empty spatial dimensions, got size {size}")
    return out


# -------------------------------------------------------------------- windows
def need_size(kernel: Ints, stride: Ints, dilation: Ints, out: Ints) -> Ints:
    """The padded extent every window needs along each axis."""
    return tuple((o - 1) * s + d * (k - 1) + 1 for o, s, d, k in
                 zip(out, stride, dilation, kernel))


def _tiles(kernel: Ints, stride: Ints, dilation: Ints) -> bool:
    return all(s == k and d == 1 for s, k, d in zip(stride, kernel, dilation))


def _all(n: int) -> slice:
    return slice(0, n, 1)


def _place(ops: Any, x: Tensor, left: Ints, need: Ints, value: float) -> Tensor:
    """A ``value`` buffer of spatial size ``need`` holding ``x`` at offset ``left``
    (cropped where the buffer ends first; a negative offset crops x's head). A fill and
    one slice assignment: cheaper than a general pad on every backend."""
    shape = tuple(x.shape)
    lead = (_all(shape[0]), _all(shape[1]))
    buf = ops.full(shape[:2] + tuple(need), value, dtype=x.dtype, device=x.device)
    dst, src = [], []
    for lo, n, nn in zip(left, shape[2:], need):
        a, b = max(-lo, 0), min(n, nn - lo)   # the part [a, b) of x inside the buffer
        if b <= a:
            return buf                        # x lies wholly in the padding
        src.append(slice(a, b, 1))
        dst.append(slice(a + lo, b + lo, 1))
    whole = all(sl.start == 0 and sl.stop == n for sl, n in zip(src, shape[2:]))
    ops.copy_(ops.index(buf, lead + tuple(dst)),
              x if whole else ops.index(x, lead + tuple(src)))
    return buf


def padded(ops: Any, x: Tensor, left: Ints, need: Ints, pad_value: float) -> Tensor:
    """``x`` placed at offset ``left`` in a ``pad_value`` buffer of spatial size ``need``
    (x's tail is cut where ``need`` ends before it)."""
    size = tuple(x.shape[2:])
    if not any(left) and need == size:
        return x
    return _place(ops, x, left, need, pad_value)


@functools.lru_cache(maxsize=256)
def _slot_keys(kernel: Ints, stride: Ints, dilation: Ints, out: Ints) -> tuple[tuple, ...]:
    """The spatial part of one strided slice key per kernel slot (row-major over the
    kernel axes), in the backend contract's normal form."""
    keys: list[tuple] = [()]
    for k, s, d, o in zip(kernel, stride, dilation, out):
        span = s * (o - 1) + 1
        keys = [key + (slice(i * d, i * d + span, s),) for key in keys for i in range(k)]
    return tuple(keys)


def window_ops(x: Tensor) -> Any:
    """The op namespace of the window helpers: they only move elements of ``x`` (and of
    buffers made with its device and dtype), so one device and one dtype are established
    by construction and the trusted ops apply to any dtype (their arithmetic, the
    adjoint's ``add_``, takes the checked path for non-floating dtypes by itself)."""
    return _trusted_ops


def windows(x: Tensor, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
            out: Ints, pad_value: float = 0.0) -> Tensor:
    """``(N, C, *S) -> (N, C, K, *out)`` with ``K = prod(kernel)``: every kernel window
    (a new tensor, no graph)."""
    n, c = x.shape[:2]
    kk = math.prod(kernel)
    with no_grad_ctx():
        ops = window_ops(x)
        if x.numel() == 0 or math.prod(out) == 0:
            return zeros((n, c, kk) + tuple(out), dtype=x.dtype, device=x.device)
        need = need_size(kernel, stride, dilation, out)
        buf = padded(ops, x, padding, need, pad_value)
        nd = len(kernel)
        if _tiles(kernel, stride, dilation):
            # non-overlapping windows: one reshape/permute copy
            split: list[int] = [n, c]
            for o, k in zip(out, kernel):
                split += [o, k]
            perm = (0, 1) + tuple(3 + 2 * i for i in range(nd)) + \
                tuple(2 + 2 * i for i in range(nd))
            return _copy_as(ops, ops.permute(ops.reshape(buf, tuple(split)), perm),
                            (n, c, kk) + tuple(out))
        lead = (_all(n), _all(c), None)
        keys = _slot_keys(kernel, stride, dilation, out)
        if kk == 1:
            return ops.clone(ops.index(buf, lead + keys[0]))
        return ops.cat([ops.index(buf, lead + key) for key in keys], 2)


def slot_views(x: Tensor, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
               out: Ints, pad_value: float = 0.0) -> list[Tensor]:
    """The ``K`` strided views ``(N, C, *out)`` of the padded input, one per kernel slot
    (max pooling takes their elementwise maximum: no window copy)."""
    with no_grad_ctx():
        ops = window_ops(x)
        buf = padded(ops, x, padding, need_size(kernel, stride, dilation, out), pad_value)
        lead = (_all(x.shape[0]), _all(x.shape[1]))
        return [ops.index(buf, lead + key)
                for key in _slot_keys(kernel, stride, dilation, out)]


def windows_adjoint(cols: Tensor, size: Ints, kernel: Ints, stride: Ints, padding: Ints,
                    dilation: Ints) -> Tensor:
    """The adjoint of :func:`windows`: ``(N, C, K, *out) -> (N, C, *size)``, summing where
    windows overlap (no graph)."""
    n, c = cols.shape[:2]
    out = tuple(cols.shape[3:])
    nd = len(kernel)
    with no_grad_ctx():
        ops = window_ops(cols)
        if cols.numel() == 0:
            return zeros((n, c) + tuple(size), dtype=cols.dtype, device=cols.device)
        need = need_size(kernel, stride, dilation, out)
        if _tiles(kernel, stride, dilation):
            split: list[int] = [n, c]
            split += list(kernel) + list(out)
            perm = [0, 1]
            for i in range(nd):
                perm += [2 + nd + i, 2 + i]
            buf = _copy_as(ops, ops.permute(ops.reshape(cols, tuple(split)), tuple(perm)),
                           (n, c) + tuple(need))
        else:
            buf = ops.full((n, c) + tuple(need), 0, dtype=cols.dtype, device=cols.device)
            lead = (_all(n), _all(c))
            rest = tuple(_all(o) for o in out)
            for i, key in enumerate(_slot_keys(kernel, stride, dilation, out)):
                ops.add_(ops.index(buf, lead + key), ops.index(cols, lead + (i,) + rest))
        if not any(padding) and need == tuple(size):
            return buf
        # crop the padding; positions no window reached stay zero
        return _place(ops, buf, tuple(-lo for lo in padding), tuple(size), 0)


def _copy_as(ops: Any, src: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A new tensor of ``shape`` holding ``src`` (a permuted view) in row-major order: one
    copy, and the result owns its storage (a reshape of the view would copy too, but
    return a view-marked tensor)."""
    return _make(ops.reshape(ops.clone(src), shape)._data, src._device, src._dtype)


def fresh(t: Tensor) -> Tensor:
    """``t`` itself, or a copy when ``t`` is a view (``t._base``, torch's attribute). A
    graph node's output must own its storage: an in-place op on a view is recorded
    against the view's base (CopySlices), which would bypass the node."""
    return t if t._base is None else t.clone()


def spatial(shape: Sequence[int], nd: int) -> Ints:
    """The last ``nd`` sizes."""
    return tuple(shape[len(shape) - nd:])
