"""``torch.distributed.algorithms``: DDP communication hooks (``ddp_comm_hooks``) and the
uneven-inputs context manager (``join``)."""
