"""``omnitensor.utils.benchmark``: torch.utils.benchmark's ``Timer``, ``Measurement`` and
``Compare`` (same fields, statistics and text), on every device: the default clock
synchronizes the accelerators (``timer.py``).

::

    from omnitensor.utils.benchmark import Timer, Compare
    m = Timer("x @ x", globals={"x": x}, label="matmul", description="256").blocked_autorange()
    print(m)                       # median, IQR, runs, as torch prints it
    Compare([m, ...]).print()

Not here: ``Fuzzer`` and its parameters (random input generation for sweeps), the C++
timer and callgrind instruction counts; they raise ``NotImplementedError`` naming the
feature.
"""
from __future__ import annotations

from ..._unsupported import unsupported
from .common import Measurement, TaskSpec, select_unit, trim_sigfig
from .compare import Colorize, Compare
from .timer import Language, Timer, timer

__all__ = ["Timer", "Measurement", "TaskSpec", "Compare", "Colorize", "Language", "timer",
           "select_unit", "trim_sigfig", "Fuzzer", "FuzzedParameter", "FuzzedTensor",
           "ParameterAlias", "CallgrindStats", "FunctionCounts"]

_HINT = "write the input sweep as a loop over sizes and build each Timer yourself"
Fuzzer = unsupported("torch.utils.benchmark.Fuzzer", _HINT)
FuzzedParameter = unsupported("torch.utils.benchmark.FuzzedParameter", _HINT)
FuzzedTensor = unsupported("torch.utils.benchmark.FuzzedTensor", _HINT)
ParameterAlias = unsupported("torch.utils.benchmark.ParameterAlias", _HINT)
CallgrindStats = unsupported("torch.utils.benchmark.CallgrindStats",
                             "callgrind instruction counts are not collected")
FunctionCounts = unsupported("torch.utils.benchmark.FunctionCounts",
                             "callgrind instruction counts are not collected")
