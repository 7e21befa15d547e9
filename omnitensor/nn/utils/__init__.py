"""``omnitensor.nn.utils``: gradient clipping and parameter/vector conversion."""
from . import rnn  # torch.nn.utils.rnn
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,
                        get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .legacy_norms import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grads_with_norm_", "clip_grad_value_",
           "get_total_norm", "parameters_to_vector",
           "vector_to_parameters", "rnn", "weight_norm", "remove_weight_norm", "spectral_norm",
           "remove_spectral_norm"]


# torch's nn.utils submodules that are imported on first use (rnn packing,
# parametrizations, stateless.functional_call, pruning)
_LAZY_SUBMODULES = ("rnn", "parametrizations", "parametrize", "stateless", "prune")


def __getattr__(name: str) -> object:
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
