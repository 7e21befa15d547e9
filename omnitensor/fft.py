"""``omnitensor.fft``: the Array API fft extension (torch.fft names; ``dim=`` works too).

The ops live in ``omnitensor/core/ops/fft.py``; this module is their public face.
"""
from .core.ops.fft import (fft, fftfreq, fftn, fftshift, hfft, host_fallbacks, ifft, ifftn,
                           ifftshift, ihfft, irfft, irfftn, rfft, rfftfreq, rfftn)

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift", "host_fallbacks"]
