"""``nn.DataParallel`` / ``nn.parallel.data_parallel`` on one device.

torch's DataParallel splits a batch across the GPUs of one process. omnitensor runs one
device per process (the way to use several is ``DistributedDataParallel`` under
``omnitensor-run``), so DataParallel here is the single-device case of torch's: a transparent
wrapper that calls the module, keeps it as ``.module`` and prefixes its state-dict keys with
``module.`` exactly as torch's does, so checkpoints and code that unwrap ``.module`` port
unchanged. Asking for more than one device says so instead of silently using one.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..module import Module


def _check_devices(device_ids: Sequence[Any] | None, who: str) -> None:
    if device_ids is not None and len(list(device_ids)) > 1:
        raise NotImplementedError(
            f"{who} over {len(list(device_ids))} devices is not supported: omnitensor drives "
            f"one device per process. Use DistributedDataParallel with omnitensor-run -n N "
            f"(one rank per device), or pass a single device")


class DataParallel(Module):
    """Wraps ``module``; ``forward`` calls it on the inputs' device (one device)."""

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None,
                 output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        _check_devices(device_ids, "DataParallel")
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(module: Module, inputs: Any, device_ids: Sequence[Any] | None = None,
                  output_device: Any = None, dim: int = 0,
                  module_kwargs: dict | None = None) -> Any:
    """``module(*inputs, **module_kwargs)`` (torch's functional DataParallel, one device):
    with a single device there is no scatter and no gather, so ``output_device`` and
    ``dim`` have nothing to do and are ignored."""
    _check_devices(device_ids, "data_parallel")
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))
