"""ATen's ``upsample_*`` kernels (nearest, nearest-exact, linear, bilinear, trilinear,
bicubic, and the antialiased ``_upsample_bilinear2d_aa``/``_upsample_bicubic2d_aa``): one
rule for the family, over :func:`omnitensor.nn.functional.interpolate`'s resampling.

Each has two overloads: the default ``(self, output_size[, align_corners], *scales)``, whose
scales (when given) set the source coordinates as interpolate's scale factors do, and
``vec`` ``(input, output_size[, align_corners], scale_factors)``, which derives the size
from the factors when ``output_size`` is None.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from ..core.tensor import Tensor
from ..nn.functional.interpolate import resample
from .kernels import kernel

__all__ = ["FAMILY"]

#: aten name -> (interpolate's mode, spatial rank, takes align_corners, antialias)
FAMILY: dict[str, tuple[str, int, bool, bool]] = {
    "upsample_nearest1d": ("nearest", 1, False, False),
    "upsample_nearest2d": ("nearest", 2, False, False),
    "upsample_nearest3d": ("nearest", 3, False, False),
    "_upsample_nearest_exact1d": ("nearest-exact", 1, False, False),
    "_upsample_nearest_exact2d": ("nearest-exact", 2, False, False),
    "_upsample_nearest_exact3d": ("nearest-exact", 3, False, False),
    "upsample_linear1d": ("linear", 1, True, False),
    "upsample_bilinear2d": ("bilinear", 2, True, False),
    "upsample_trilinear3d": ("trilinear", 3, True, False),
    "upsample_bicubic2d": ("bicubic", 2, True, False),
    "_upsample_bilinear2d_aa": ("bilinear", 2, True, True),
    "_upsample_bicubic2d_aa": ("bicubic", 2, True, True),
}


def _check(x: Tensor, nd: int, name: str) -> None:
    if x.ndim != nd + 2:
        raise RuntimeError(f"{name}: expected a {nd + 2}-D input (N, C, *spatial), got "
                           f"shape {tuple(x.shape)}")


def _family(name: str, mode: str, nd: int, aligns: bool, aa: bool) -> None:
    """Register ``name``'s default and vec overloads and the packet's call between them."""
    def default(self: Tensor, output_size: Sequence[int], *args: Any) -> Tensor:
        ac = bool(args[0]) if aligns else False
        scales = tuple(args[1:] if aligns else args) + (None,) * nd
        _check(self, nd, name)
        return resample(self, tuple(int(v) for v in output_size), scales[:nd], mode, ac, aa)

    def vec(input: Tensor, output_size: Sequence[int] | None, *args: Any) -> Tensor:  # noqa: A002
        ac = bool(args[0]) if aligns else False
        factors = args[1] if aligns else args[0]
        _check(input, nd, name)
        if output_size is not None:
            return resample(input, tuple(int(v) for v in output_size), (None,) * nd, mode,
                            ac, aa)
        sfs = tuple(float(s) for s in factors)
        out = tuple(int(math.floor(n * s)) for n, s in zip(input.shape[2:], sfs))
        return resample(input, out, sfs, mode, ac, aa)

    def either(input: Tensor, output_size: Any, *args: Any, **kwargs: Any) -> Tensor:  # noqa: A002
        if "scale_factors" in kwargs or output_size is None or \
                (args and isinstance(args[-1], (list, tuple))):
            return vec_kw(input, output_size, *args, **kwargs)
        return default_kw(input, output_size, *args, **kwargs)

    names = (["align_corners"] if aligns else [])
    scales = ["scales"] if nd == 1 else ["scales_d", "scales_h", "scales_w"][3 - nd:]
    default_kw = _by_name(default, names + scales)
    vec_kw = _by_name(vec, names + ["scale_factors"])
    for ov, fn in (("default", default_kw), ("vec", vec_kw), ("", either)):
        fn.__name__ = f"{name}.{ov}" if ov else name
        kernel(name, ov)(fn)


def _by_name(fn: Callable[..., Tensor], names: list[str]) -> Callable[..., Tensor]:
    """``fn(x, output_size, *args)`` also taking the schema's later arguments by name."""
    def call(x: Tensor, output_size: Any = None, *args: Any, **kwargs: Any) -> Tensor:
        rest = list(args) + [None] * (len(names) - len(args))
        for i, n in enumerate(names):
            if n in kwargs:
                rest[i] = kwargs.pop(n)
        if kwargs:
            raise TypeError(f"unexpected arguments {sorted(kwargs)}")
        return fn(x, output_size, *rest)
    return call


for _name, _spec in FAMILY.items():
    _family(_name, *_spec)
