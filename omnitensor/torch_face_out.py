"""torch's ``out=`` on every torch-face function that has it in torch.

Which functions take ``out=`` is torch's data, not a list kept by hand:
``aten/out_arguments.txt`` (``tools/gen_aten_overloads.py``) names each public function of
torch, torch.linalg and torch.fft one of whose ATen overloads writes out arguments. Each
gets one wrapper: the function computes its result as always and ``out`` receives it by
core's one rule (``core/ops/out_arg.write_out``: resized to the result, the result's dtype
and device, a tuple for a tuple result), so ``torch.sort(x, out=(v, i))`` writes ``v`` and
``i`` instead of ignoring them.
"""
from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Any, Callable

from .core.ops.out_arg import write_out

_TABLE = Path(__file__).with_name("aten") / "out_arguments.txt"


def out_functions(module: str) -> list[str]:
    """The names of torch module ``module``'s functions (``"torch"``, ``"torch.linalg"``,
    ``"torch.fft"``) that take ``out=``."""
    rows = (line.split() for line in _TABLE.read_text().splitlines()
            if line and not line.startswith("#"))
    return [name for mod, name, _ in rows if mod == module]


def with_out(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` taking torch's keyword ``out=``: its result written into ``out``."""
    @functools.wraps(fn)
    def call(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        return result if out is None else write_out(name, result, out)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # (an ATen packet: any arguments)
        sig = inspect.Signature([
            inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
            inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
    params = [p for p in sig.parameters.values() if p.name != "out"]
    kw = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
    at = next((i for i, p in enumerate(params) if p.kind is inspect.Parameter.VAR_KEYWORD),
              len(params))
    call.__signature__ = sig.replace(parameters=params[:at] + [kw] + params[at:])  # type: ignore[attr-defined]
    return call


def bind_out(namespace: dict, module: str) -> None:
    """Give every function of ``namespace`` (a torch-face module's globals) that takes
    ``out=`` in torch its ``out=``, once, at import; names the module makes lazily get it
    from :func:`lazy_with_out` when they are made."""
    for name in out_functions(module):
        if name in namespace:
            namespace[name] = lazy_with_out(module, name, namespace[name])


def lazy_with_out(module: str, name: str, value: Any) -> Any:
    """``value`` (torch module ``module``'s attribute ``name``) with ``out=`` where torch
    gives that function one."""
    if name not in _names(module) or not callable(value) or isinstance(value, type) or \
            getattr(value, "_binds_out", False):
        return value
    fn = with_out(name, value)
    fn._binds_out = True  # type: ignore[attr-defined]
    return fn


@functools.lru_cache(maxsize=None)
def _names(module: str) -> frozenset[str]:
    return frozenset(out_functions(module))
