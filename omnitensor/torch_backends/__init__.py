"""torch's ``torch.backends``: one flag module per vendor library torch may call (``cudnn``,
``cuda``, ``mps``, ``mkldnn``, ``mkl``, ``openmp``, ``opt_einsum``, ``cpu``, ``mha``; see
``_flags`` for what their switches mean here). A face, not device code: omnitensor's device
adapters are ``omnitensor.backends``. Under ``omnitensor.as_torch``, ``torch.backends`` is
this package. Each module is made on first use, so ``import omnitensor`` stays light."""

_TORCH_FLAG_MODULES = ("cudnn", "cuda", "mps", "mkldnn", "mkl", "openmp", "opt_einsum", "cpu",
                       "mha")


def __getattr__(name: str) -> object:
    if name in _TORCH_FLAG_MODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
