"""``torch.distributed.checkpoint.hf_storage``: not supported (see ``_unsupported``)."""
from ._unsupported import Refused

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]


class HuggingFaceStorageReader(Refused):
    pass


class HuggingFaceStorageWriter(Refused):
    pass
