"""Device adapters, one per vendor stack, found through a lazy registry
(``registry.BACKENDS``): nothing here imports CuPy, PyOpenCL or dpnp until a device of that
type is used. The contract every adapter implements is ``base.Backend``."""

# torch's ``torch.backends.<library>`` flag modules (see ``_flags``), made on first use
_TORCH_FLAG_MODULES = ("cudnn", "cuda", "mps", "mkldnn", "mkl", "openmp", "opt_einsum", "cpu",
                       "mha")


def __getattr__(name: str) -> object:
    if name in _TORCH_FLAG_MODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
