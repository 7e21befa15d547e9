"""``torch.distributed.checkpoint._consolidate_hf_safetensors``: not supported."""
from ._unsupported import refused as consolidate_safetensors_files

__all__ = ["consolidate_safetensors_files"]
