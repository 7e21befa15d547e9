"""torch's "shell" dtypes: uint1..uint7, int1..int7, bits1x8/2x4/4x2/8/16, float4_e2m1fn_x2.

torch declares them so that libraries (torchao's packed low-bit formats) can name them and
tag raw bytes with them; torch itself has almost no kernels for them (no fill, no copy
between dtypes, no arithmetic, no printing of the integer ones). Here they are named
dtypes with torch's attributes: ``itemsize`` (one byte each, two for bits16),
``is_floating_point`` (only float4_e2m1fn_x2), ``is_signed`` (int1..int7 and float4;
torch raises "Bits types are undefined" for the bits ones), ``to_real`` (itself) and
``to_complex`` (refused, as torch refuses). A tensor of one is refused with
UnsupportedDTypeError, the float8 placeholders' mechanism (``core.device.check_dtype``):
the only things torch does with them are allocation and ``view(dtype)`` reinterpretation,
and omnitensor has no ``view(dtype)`` (a reinterpretation whose bytes differ across
backends). Not in ``all_dtypes``, so no promotion rule, as in torch.
"""
from __future__ import annotations

import numpy as np

from ..errors import DTypeError
from .dtypes import _BY_NAME, DType, name_placeholders

__all__ = ["ShellDType", "shell_dtypes"]


class ShellDType(DType):
    """A dtype torch names but computes nothing in (see the module docstring)."""

    __slots__ = ("_signed",)

    def __init__(self, name: str, np_dtype: type, kind: str, signed: bool | None) -> None:
        super().__init__(name, np_dtype, kind=kind)
        self._signed = signed  # None: torch's bits dtypes have no signedness

    @property
    def is_signed(self) -> bool:
        if self._signed is None:
            raise RuntimeError("Bits types are undefined")  # torch's message
        return self._signed

    def to_real(self) -> DType:
        return self

    def to_complex(self) -> DType:
        raise DTypeError(f"Unknown Complex ScalarType for {self.name}")


# kind "V" (NumPy's void: raw bytes): no op's dtype rule accepts it
uint1, uint2, uint3, uint4, uint5, uint6, uint7 = (
    ShellDType(f"uint{n}", np.uint8, "V", False) for n in range(1, 8))
int1, int2, int3, int4, int5, int6, int7 = (
    ShellDType(f"int{n}", np.uint8, "V", True) for n in range(1, 8))
bits1x8, bits2x4, bits4x2, bits8 = (
    ShellDType(name, np.uint8, "V", None) for name in ("bits1x8", "bits2x4", "bits4x2", "bits8"))
bits16 = ShellDType("bits16", np.uint16, "V", None)
# the one floating shell dtype (two e2m1 values a byte): is_floating_point, as in torch
float4_e2m1fn_x2 = ShellDType("float4_e2m1fn_x2", np.uint8, "f", True)

shell_dtypes: tuple[ShellDType, ...] = (
    uint1, uint2, uint3, uint4, uint5, uint6, uint7, int1, int2, int3, int4, int5, int6, int7,
    bits1x8, bits2x4, bits4x2, bits8, bits16, float4_e2m1fn_x2)
name_placeholders(shell_dtypes, lambda d: (
    f"{d.name} tensors are not supported by omnitensor: torch only allocates them and "
    f"reinterprets bytes as them with view(dtype), which omnitensor does not have; keep "
    f"packed data in uint8 (or int16) tensors"))
_BY_NAME["bit"] = uint1  # torch.bit is torch.uint1
