"""Convolution layers: ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d`` (torch's names,
parameter shapes, init and padding modes), over the N-d functionals of
``functional/conv.py``."""
from __future__ import annotations

from typing import Any

from ..core.ops.creation import empty
from ..core.tensor import Tensor
from . import functional as F
from . import init
from .functional._utils import ntuple
from .module import Module
from .parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    _n = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", output_padding: Any = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        n = self._n
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise ValueError(f"in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by groups ({groups})")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, got "
                             f"{padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = ntuple(kernel_size, n, "kernel_size")
        self.stride = ntuple(stride, n, "stride")
        self.padding = padding if isinstance(padding, str) else ntuple(padding, n, "padding")
        self.dilation = ntuple(dilation, n, "dilation")
        self.output_padding = ntuple(output_padding, n, "output_padding")
        self.padding_mode = padding_mode
        if self.transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.default_weight_bias_(self.weight, self.bias)

    def _pre_pad(self, x: Tensor) -> tuple[Tensor, Any]:
        """Non-zero padding modes pad explicitly, then convolve without padding."""
        if self.padding_mode == "zeros" or isinstance(self.padding, str):
            return x, self.padding
        widths: list[int] = []
        for p in reversed(self.padding):
            widths += [p, p]
        return F.pad(x, widths, mode=self.padding_mode), 0

    def extra_repr(self) -> str:
        n = self._n
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding!r}" if isinstance(self.padding, str) else \
                f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv2d(_ConvNd):
    """2-D convolution over ``(N, C_in, H, W)`` with stride, padding (ints, 'same',
    'valid'), dilation, groups and padding modes."""

    _n = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, 0, device, dtype)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        x, padding = self._pre_pad(input)
        return F.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class Conv1d(_ConvNd):
    """1-D convolution over ``(N, C_in, L)``."""

    _n = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, 0, device, dtype)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        x, padding = self._pre_pad(input)
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class Conv3d(_ConvNd):
    """3-D convolution over ``(N, C_in, D, H, W)``."""

    _n = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, 0, device, dtype)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        x, padding = self._pre_pad(input)
        return F.conv3d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class ConvTranspose2d(_ConvNd):
    """Transposed 2-D convolution ("deconvolution"); weight ``(C_in, C_out // groups,
    kh, kw)``. ``forward(x, output_size=None)`` picks ``output_padding`` from
    ``output_size`` when given."""

    _n = 2
    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding, device, dtype)

    def _output_padding(self, x: Tensor, output_size: Any) -> tuple[int, ...]:
        if output_size is None:
            return self.output_padding
        n = self._n
        size = tuple(output_size)[-n:]
        pad = self.padding
        if isinstance(pad, str):
            raise ValueError(f"{type(self).__name__}: output_size needs numeric padding, got "
                             f"padding={pad!r}")
        op = []
        for i in range(n):
            base = ((x.shape[-n + i] - 1) * self.stride[i] - 2 * pad[i] +
                    self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            extra = size[i] - base
            if not 0 <= extra < max(self.stride[i], self.dilation[i]):
                raise ValueError(f"requested an output size of {size}, but valid sizes range "
                                 f"from {base} to {base + self.stride[i] - 1} for dim {i}")
            op.append(extra)
        return tuple(op)

    _functional = staticmethod(F.conv_transpose2d)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:  # noqa: A002
        return self._functional(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class ConvTranspose1d(ConvTranspose2d):
    """Transposed 1-D convolution; weight ``(C_in, C_out // groups, k)``."""

    _n = 1
    _functional = staticmethod(F.conv_transpose1d)


class ConvTranspose3d(ConvTranspose2d):
    """Transposed 3-D convolution; weight ``(C_in, C_out // groups, kd, kh, kw)``."""

    _n = 3
    _functional = staticmethod(F.conv_transpose3d)
