"""``functorch.compile``: ``memory_efficient_fusion`` compiles through
``omnitensor.compile`` (capture, fusion, replay: see docs/compile.md). The rest of torch's
module hands FX graphs to user-supplied compilers (``aot_function(fn, fw_compiler)``,
``nop``, ``ts_compile``...); omnitensor has no FX graphs, so those import and refuse."""
from __future__ import annotations

from typing import Any, Callable

from ..._unsupported import unsupported
from ...compiler import compile as _compile

__all__ = ["memory_efficient_fusion", "aot_function", "aot_module", "aot_module_simplified",
           "compiled_function", "compiled_module", "min_cut_rematerialization_partition",
           "default_partition", "nop", "make_boxed_func", "make_boxed_compiler",
           "ts_compile", "print_compile", "debug_compile", "nnc_jit", "draw_graph"]

_HINT = "omnitensor has no FX graphs to hand to a compiler; omnitensor.compile(fn) (torch." \
        "compile) captures, fuses and replays fn, and memory_efficient_fusion(fn) calls it"


def memory_efficient_fusion(fn: Any, **kwargs: Any) -> Any:
    """``fn`` (a function or an ``nn.Module``) compiled by ``omnitensor.compile``: the
    same values and gradients as ``fn``, its elementwise chains fused. The keyword
    overrides torch passes on to ``aot_function`` (FX-graph compilers, partitioners) have
    no counterpart and are refused."""
    if kwargs:
        raise NotImplementedError(f"functorch.compile.memory_efficient_fusion: the overrides "
                                  f"{sorted(kwargs)} are not supported ({_HINT})")
    return _compile(fn)


def _refusing(name: str) -> Callable[..., Any]:
    return unsupported(f"functorch.compile.{name}", _HINT)


aot_function = _refusing("aot_function")
aot_module = _refusing("aot_module")
aot_module_simplified = _refusing("aot_module_simplified")
compiled_function = _refusing("compiled_function")
compiled_module = _refusing("compiled_module")
min_cut_rematerialization_partition = _refusing("min_cut_rematerialization_partition")
default_partition = _refusing("default_partition")
nop = _refusing("nop")
make_boxed_func = _refusing("make_boxed_func")
make_boxed_compiler = _refusing("make_boxed_compiler")
ts_compile = _refusing("ts_compile")
print_compile = _refusing("print_compile")
debug_compile = _refusing("debug_compile")
nnc_jit = _refusing("nnc_jit")
draw_graph = _refusing("draw_graph")
