"""Objects in checkpoints: the allowlist (torch's ``safe_globals``) and how an object other than
tensors and plain data is taken apart and rebuilt, for every format of the package.

An object (a whole ``nn.Module``, an optimizer, an instance of the user's class) is stored as
its class's import path (``"__main__.Net"``) and its state (``__getstate__()`` or
``__dict__``): in torch's zip format as a pickle's ``GLOBAL`` + ``NEWOBJ`` + ``BUILD``, in
omnitensor's safetensors format as JSON. Rebuilding it means finding the class,
``cls.__new__(cls)``, then ``__setstate__(state)`` or a ``__dict__`` update (``__init__``
does not run), which is where a class's own code can run. Hence, as in torch >= 2.6:

* ``load(..., weights_only=True)`` (the default) rebuilds only classes and functions the
  caller allowlisted (:func:`add_safe_globals`, :func:`safe_globals`), taking them from the
  allowlist itself: it never imports anything named in the file;
* ``load(..., weights_only=False)``, for a file you trust, imports the named module and takes
  the class from it (importing runs that module's code; a torch pickle can run any code).
"""
from __future__ import annotations

import contextlib
import importlib
import pickle
import threading
from typing import Any, Iterable, Iterator

__all__ = ["add_safe_globals", "safe_globals", "get_safe_globals", "clear_safe_globals",
           "global_path", "resolve_global", "object_state", "rebuild_object",
           "WeightsOnlyError", "weights_only_error", "user_allowed", "refusal"]

_lock = threading.Lock()
_SAFE: dict[str, Any] = {}  # import path -> the allowlisted class or function


class WeightsOnlyError(RuntimeError, pickle.UnpicklingError):
    """``load(weights_only=True)`` met something it does not build: a class or function
    that is not allowlisted, or a pickle instruction that would run code. It is a
    ``pickle.UnpicklingError``, as torch's refusal is."""


def global_path(obj: Any) -> str:
    """``module.QualName`` of a class or function, as recorded in a checkpoint; TypeError for
    objects that cannot be found again by name (lambdas, local classes)."""
    module = getattr(obj, "__module__", None)
    qual = getattr(obj, "__qualname__", None)
    if not module or not qual or "<locals>" in qual or "<lambda>" in qual:
        raise TypeError(f"cannot save a reference to {obj!r}: only module-level classes and "
                        f"functions can be found again when loading (not lambdas or classes "
                        f"defined inside functions)")
    return f"{module}.{qual}"


def _entries(items: Iterable[Any]) -> list[tuple[str, Any]]:
    out = []
    for item in items:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str):
            out.append((item[1], item[0]))  # torch's (obj, "module.Name") form
        elif isinstance(item, type) or callable(item):
            out.append((global_path(item), item))
        else:
            raise TypeError(f"add_safe_globals expects classes, functions or (obj, 'path') "
                            f"pairs, got {item!r}")
    return out


def add_safe_globals(safe_globals: Iterable[Any]) -> None:
    """Allow ``load(weights_only=True)`` to rebuild these classes/functions (torch's
    ``torch.serialization.add_safe_globals``). Only for classes you trust: rebuilding one runs
    its ``__setstate__``."""
    with _lock:
        _SAFE.update(_entries(safe_globals))


def get_safe_globals() -> list[Any]:
    """The allowlisted classes and functions."""
    with _lock:
        return list(_SAFE.values())


def clear_safe_globals() -> None:
    with _lock:
        _SAFE.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: Iterable[Any]) -> Iterator[None]:
    """Allowlist these for the ``with`` block only (torch's ``safe_globals`` context)."""
    added = _entries(safe_globals)
    with _lock:
        before = dict(_SAFE)
        _SAFE.update(added)
    try:
        yield
    finally:
        with _lock:
            _SAFE.clear()
            _SAFE.update(before)


_PREAMBLE = (
    "Weights only load failed. This file can still be loaded, to do so you have two "
    "options, do those steps only if you trust the source of the checkpoint.\n"
    "    (1) omnitensor.load, like torch.load since PyTorch 2.6, defaults to "
    "weights_only=True. Re-running load with weights_only=False will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file "
    "from a trusted source.\n")


def weights_only_error(detail: str) -> WeightsOnlyError:
    """A refusal that is not about one global (a code-running pickle instruction)."""
    return WeightsOnlyError(f"{_PREAMBLE}    (2) Nothing can be allowlisted for this: "
                            f"{detail}")


def refusal(path: str, what: str) -> WeightsOnlyError:
    name = path.rpartition(".")[2]
    return WeightsOnlyError(
        f"{_PREAMBLE}"
        f"    (2) Alternatively, to load with weights_only=True, allowlist the {what}: "
        f"Unsupported global: {path} was not an allowed global by default. Please use "
        f"`omnitensor.serialization.add_safe_globals([{name}])` or the "
        f"`omnitensor.serialization.safe_globals([{name}])` context manager to allowlist "
        f"this global if you trust this class/function.")


def user_allowed(path: str) -> Any:
    """The allowlisted object for the import path a checkpoint names, or None. A torch
    path (``torch.nn.modules.linear.Linear``, as real torch writes it) also matches an
    allowlisted omnitensor object of the same name (``add_safe_globals([nn.Linear])``),
    since ``torch`` is omnitensor for scripts run through ``omnitensor.as_torch``."""
    with _lock:
        found = _SAFE.get(path)
        if found is not None or not path.startswith("torch."):
            return found
        tail = path.rpartition(".")[2]
        return next((obj for p, obj in _SAFE.items()
                     if p.startswith("omnitensor.") and p.rpartition(".")[2] == tail), None)


def resolve_global(path: str, weights_only: bool, what: str = "class") -> Any:
    """The class or function a checkpoint names: from the allowlist, or (only when
    ``weights_only`` is False) by importing its module."""
    found = user_allowed(path)
    if found is not None:
        return found
    if weights_only:
        raise refusal(path, what)
    # the module part is the longest importable prefix: "pkg.mod.Outer.Inner"
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module, qual = ".".join(parts[:cut]), parts[cut:]
        try:
            obj: Any = importlib.import_module(module)
        except ImportError:
            continue
        try:
            for attr in qual:
                obj = getattr(obj, attr)
        except AttributeError:
            break
        return obj
    raise ValueError(f"omnitensor.load: the checkpoint names {path}, which cannot be found "
                     f"(import the module that defines it before loading)")


def object_state(obj: Any) -> Any:
    """What is saved of ``obj``: ``__getstate__()`` (Python's protocol, which optimizers and
    most classes follow) — its ``__dict__`` unless the class defines otherwise."""
    state = obj.__getstate__() if hasattr(obj, "__getstate__") else vars(obj)
    if state is None:
        state = {}
    return state


def rebuild_object(cls: Any, state: Any, into: Any = None) -> Any:
    """``cls.__new__(cls)`` (or ``into``, made that way earlier) given ``state``
    (``__setstate__`` when the class has its own, else a ``__dict__`` update), as unpickling
    does; ``__init__`` does not run."""
    if not isinstance(cls, type):
        raise ValueError(f"omnitensor.load: {cls!r} named as a class is not a class")
    new: Any = cls.__new__  # any class's __new__, called as unpickling does
    obj = new(cls) if into is None else into
    setstate = getattr(type(obj), "__setstate__", None)
    if setstate is not None and setstate is not getattr(object, "__setstate__", None):
        obj.__setstate__(state)
    elif isinstance(state, dict):
        obj.__dict__.update(state)
    elif state:
        raise ValueError(f"omnitensor.load: cannot restore a {cls.__name__} from a state of "
                         f"type {type(state).__name__}")
    return obj
