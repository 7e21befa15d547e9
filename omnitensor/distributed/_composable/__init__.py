"""``torch.distributed._composable``: see :mod:`omnitensor.distributed.fsdp`."""
