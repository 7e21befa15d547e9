"""``omnitensor.fft``: the Array API fft extension and torch.fft (``dim=``/positional
``n, dim, norm`` work too).

The ops live in ``omnitensor/core/ops/fft.py``; this module is their public face.
"""
from .core.ops.fft import (fft, fft2, fftfreq, fftn, fftshift, hfft, hfft2, hfftn,
                           host_fallbacks, ifft, ifft2, ifftn, ifftshift, ihfft, ihfft2, ihfftn,
                           irfft, irfft2, irfftn, rfft, rfft2, rfftfreq, rfftn)
from .core.tensor import Tensor  # noqa: F401 - torch.fft.Tensor is torch.Tensor

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "hfftn", "ihfftn",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift", "host_fallbacks"]
