"""Run a script written for PyTorch on omnitensor: ``import torch`` resolves to omnitensor.

::

    omnitensor-run --as-torch train.py --epochs 3        # the launcher's flag
    python -m omnitensor.as_torch train.py --epochs 3    # the same, without the launcher
    python -m omnitensor.as_torch -m mypackage.train     # a module, as ``python -m``
    OMNITENSOR_DEVICE=opencl:0 python -m omnitensor.as_torch train.py

or, from Python, ``omnitensor.as_torch.install()`` before the first ``import torch``.

How: a meta-path finder placed first on ``sys.meta_path`` answers every import of
``torch.<anything>`` by importing ``omnitensor.<anything>`` and putting *that same module
object* in ``sys.modules`` under the torch name, so ``torch.nn is omnitensor.nn`` and module
state (seeds, default device, grad mode) is shared however a module was reached. ``torch``
itself is :mod:`omnitensor.torch_face`: omnitensor's namespace with torch's meaning where the
Array API standard's differs (``torch.sort`` returns values and indices, ``torch.std``
corrects by 1...), ``torch.__version__`` the torch API level omnitensor follows, and
``torch.Tensor is omnitensor.Tensor``. ``torch.backends`` is :mod:`omnitensor.torch_backends`
(torch's library flags; ``omnitensor.backends`` holds the device adapters). ``functorch`` is
aliased the same way. ``cuda`` names
the accelerator when no real CUDA device exists (:mod:`omnitensor.core.accelerators`).
``torchvision``, ``torchaudio``, ``torchtext`` stay what they are.

Limits, honestly:

* a ``torch.*`` path omnitensor does not have is not found (``ModuleNotFoundError: No
  module named 'torch._inductor'``, and ``importlib.util.find_spec`` answers None, so
  scripts that probe for optional torch parts take their fallback); ``torch._C`` and
  ``torch._dynamo`` hold only the entry points libraries call;
* the modules keep their own names (``torch.nn.__name__ == "omnitensor.nn"``), except
  the root face, which is named ``torch`` (libraries check ``torch.__name__``, as pyro's
  patching does);
* a real torch already imported in the process (``"torch" in sys.modules`` before
  :func:`install`) is left alone: install the finder first;
* the alias lives in this process and in its children: ``fork`` children inherit it, and
  ``spawn``/``forkserver`` children (``torch.multiprocessing`` or the standard library's
  ``multiprocessing``) get it too: :func:`install` sets ``OMNITENSOR_AS_TORCH=1`` and makes
  every process start carry the alias.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import runpy
import sys
from types import ModuleType
from typing import Any, Sequence

__all__ = ["install", "uninstall", "is_installed", "main", "TorchAliasFinder"]

# alias roots: ``torch.x`` -> ``omnitensor.x``; the bare names have faces of their own
_ROOTS = {"torch": "omnitensor", "functorch": "omnitensor.functorch"}
_EXACT = {"torch": "omnitensor.torch_face"}
# torch paths whose omnitensor home has another name: ``torch.backends`` holds torch's
# library flags, a face package apart from omnitensor's device adapters (``backends``);
# ``torch.linalg`` is omnitensor.linalg with torch's meaning where the standard differs;
# ``torch.autograd.profiler`` lives with the profiler (autograd is the lower layer)
_RENAMED = {"torch.backends": "omnitensor.torch_backends",
            "torch.linalg": "omnitensor.torch_linalg",
            "torch.autograd.profiler": "omnitensor.profiler.autograd_profiler"}
_TARGET = "omnitensor"


def _root(fullname: str) -> str | None:
    """The alias root ``fullname`` falls under (``torch``, ``functorch``), or None."""
    head = fullname.partition(".")[0]
    return head if head in _ROOTS else None


def _target_name(fullname: str) -> str:
    if fullname in _EXACT:
        return _EXACT[fullname]
    for prefix, target in _RENAMED.items():
        if fullname == prefix or fullname.startswith(prefix + "."):
            return target + fullname[len(prefix):]
    root = fullname.partition(".")[0]
    return _ROOTS[root] + fullname[len(root):]


class _AliasLoader(importlib.abc.Loader):
    """Loads ``torch.x`` by importing ``omnitensor.x`` and replacing the placeholder module
    importlib made with the real one (importlib re-reads ``sys.modules`` after
    ``exec_module``, so the import statement gets omnitensor's module object and that
    module's own ``__spec__``/``__name__`` stay untouched)."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # a throwaway placeholder; exec_module swaps it out

    def exec_module(self, module: ModuleType) -> None:
        alias = module.__name__
        try:
            real = importlib.import_module(self.target)
        except ModuleNotFoundError as e:
            if e.name is not None and not (e.name == self.target
                                           or self.target.startswith(e.name + ".")):
                raise  # something inside omnitensor is missing: show that, not a rename
            parent_name, _, child = self.target.rpartition(".")
            parent = sys.modules.get(parent_name)
            if parent is not None and _lazy_has(parent, self.target):
                sys.modules[alias] = getattr(parent, child)  # a module made by __getattr__
                return
            raise ModuleNotFoundError(
                f"No module named {alias!r}: running with `import torch` aliased to omnitensor "
                f"(--as-torch), and omnitensor has no {self.target!r}. This torch module is "
                f"not supported; see `python -m omnitensor.as_torch --help` for the limits",
                name=alias) from None
        if alias in _EXACT and self.target == _EXACT[alias]:
            real.__name__ = alias  # the face exists only to be `torch`: it answers to it
        sys.modules[alias] = real


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """``torch`` / ``torch.*`` -> ``omnitensor`` / ``omnitensor.*`` (see the module doc)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if _root(fullname) is None:
            return None
        name = _target_name(fullname)
        real = sys.modules.get(name)
        if real is None and fullname not in _EXACT:
            # check the path exists before committing to it, so `try: import torch.x`
            # / `except ImportError` in scripts behaves as with a torch lacking x
            parent = sys.modules.get(name.rpartition(".")[0])
            if parent is None:
                parent = importlib.import_module(name.rpartition(".")[0])
            if hasattr(parent, "__path__"):
                if importlib.util.find_spec(name) is None and not _lazy_has(parent, name):
                    return None  # importlib then raises ModuleNotFoundError('torch.x')
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(name),
                                              is_package=True)


def _lazy_has(parent: ModuleType, name: str) -> bool:
    """Whether a package exposes ``name``'s last part as a lazily made submodule."""
    try:
        attr = getattr(parent, name.rpartition(".")[2])
    except Exception:  # noqa: BLE001 - an absent attribute is an answer
        return False
    return isinstance(attr, ModuleType)


_FINDER = TorchAliasFinder()


def install() -> None:
    """Make ``import torch`` (and every ``torch.*``) resolve to omnitensor in this process.
    Idempotent. A torch imported before this call stays the real torch."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    os.environ["OMNITENSOR_AS_TORCH"] = "1"
    from .core.accelerators import enable_cuda_alias
    enable_cuda_alias(True)  # `cuda` names the accelerator when there is no real CUDA
    from .multiprocessing.context import carry_alias_in_stdlib_processes
    carry_alias_in_stdlib_processes()  # spawned children import torch as omnitensor too


def uninstall() -> None:
    """Remove the finder and the ``torch*`` aliases it put in ``sys.modules``."""
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name, mod in list(sys.modules.items()):
        if _root(name) is not None and (getattr(mod, "__name__", "").startswith(_TARGET)
                                        or mod is sys.modules.get(_EXACT.get(name, ""))):
            del sys.modules[name]
    os.environ.pop("OMNITENSOR_AS_TORCH", None)
    from .core.accelerators import enable_cuda_alias
    enable_cuda_alias(False)


def is_installed() -> bool:
    return _FINDER in sys.meta_path


_USAGE = """usage: python -m omnitensor.as_torch (script.py | -m module) [args...]

Runs a PyTorch script with `import torch` resolving to omnitensor (also:
omnitensor-run --as-torch script.py). Pick the device with OMNITENSOR_DEVICE=opencl:0 (or
sycl:0, cuda:0); `torch.accelerator` and `torch.cuda` answer for what this machine has.
`cuda` names your accelerator when no CUDA GPU exists: OMNITENSOR_ACCELERATOR=opencl (or
sycl, sycl:1), else a non-cpu OMNITENSOR_DEVICE, else a GPU found through SYCL/OpenCL.
Limits: torch internals (torch._inductor, most of torch._C) do not exist."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m omnitensor.as_torch``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_USAGE)
        return 0 if args else 2
    install()
    if args[0] == "-m":
        if len(args) < 2:
            print(_USAGE, file=sys.stderr)
            return 2
        sys.argv = [args[1]] + args[2:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        return 0
    script = args[0]
    if not os.path.exists(script):
        print(f"omnitensor.as_torch: no such script: {script}", file=sys.stderr)
        return 2
    sys.argv = args
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
