"""One check: an OpInfo, a kind (forward, grad, errors), a device and a dtype, over at most
:data:`~.oracle.MAX_SAMPLES` of torch's samples. Each sample is run by torch and by the
face and compared; the result says, per sample, pass, fail (with a cause) or skip.

Causes of a failure: ``missing`` (a name the face lacks), ``refused`` (the face rejects the
call form with a TypeError), ``unsupported`` (NotImplementedError), ``error`` (any other
exception where torch succeeds), ``no-error`` (torch raises, the face returns),
``structure``/``dtype``/``shape``/``values`` (the outputs differ), and for gradients
``no-grad`` (the face records no backward or returns no gradient where torch has one).
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import time
import warnings
import zlib
from typing import Any, Callable, Iterable

from ...errors import DeviceDTypeError
from .compare import Options, compare
from .convert import Arr, Converter, Unconvertible, canon, to_float64
from .oracle import MAX_SAMPLES, ops_by_key, supports, torch, torch_dtype
from .resolve import face, resolve, why_missing

#: outputs defined only up to sign or phase, compared by absolute value (top-level index)
ABS_OUTPUTS = {"svd": (0, 2), "linalg.svd": (0, 2), "linalg.eigh": (1,),
               "linalg.eig": (1,), "qr": (0, 1), "linalg.qr": (0, 1)}



def _singular_subspace(tree: Any, op_name: str) -> Any:
    """An SVD's outputs without the singular vectors beyond min(m, n) (``full_matrices``:
    any orthonormal completion is right, so they are not compared)."""
    if not (isinstance(tree, list) and len(tree) == 3 and
            all(isinstance(t, Arr) for t in tree)):
        return tree
    u, s, v = tree
    k = s.shape[-1] if s.shape else 0

    def cut(a: Arr, cols: bool) -> Arr:
        vals = a.values[..., :, :k] if cols else a.values[..., :k, :]
        return Arr(vals, a.dtype, tuple(vals.shape))
    return [cut(u, True), s, cut(v, op_name == "svd")]  # torch.svd returns V, not Vh


#: per op, a rewrite of both sides' outputs before they are compared
GAUGE = {"svd": _singular_subspace, "linalg.svd": _singular_subspace}

#: outputs holding the indices of sorted, selected or extreme values (top-level index; -1:
#: the whole output): where the input has ties, torch and the face may pick other indices
#: of equal values, so there only their dtype and shape are compared
TIE_INDICES = {"sort": (1,), "argsort": (-1,), "topk": (1,), "kthvalue": (1,),
               "median": (1,), "nanmedian": (1,), "mode": (1,), "cummax": (1,),
               "cummin": (1,), "max.reduction_with_dim": (1,),
               "min.reduction_with_dim": (1,)}

KINDS = ("forward", "grad", "errors")


@dataclasses.dataclass
class SampleResult:
    """One sample: ``status`` pass/fail/skip, and for a failure its ``cause``."""
    index: int
    status: str
    cause: str = ""
    message: str = ""
    sample: str = ""


@dataclasses.dataclass
class CheckResult:
    """One (op, kind, device, dtype): ``status`` pass, fail, skip (nothing to run) or
    missing (no counterpart: ``reason`` names the missing paths)."""
    op: str
    kind: str
    device: str
    dtype: str
    status: str
    samples: list[SampleResult] = dataclasses.field(default_factory=list)
    reason: str = ""
    seconds: float = 0.0
    samples_total: int = 0  # samples torch has (those of a missing op included)

    def count(self, status: str) -> int:
        return sum(s.status == status for s in self.samples)

    def failures(self) -> list[SampleResult]:
        return [s for s in self.samples if s.status == "fail"]


def _describe(sample: Any) -> str:
    try:
        text = str(sample.summary())
    except Exception:  # noqa: BLE001 - only a description
        text = repr(sample)
    text = " ".join(text.split())
    return text if len(text) <= 240 else text[:237] + "..."


def _call(fn: Callable[..., Any], args: list[Any]) -> tuple[Any, BaseException | None]:
    inp, pos, kw = args
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(inp, *pos, **kw), None
    except Exception as e:  # noqa: BLE001 - an error is an answer to compare
        return None, e


def classify(err: BaseException) -> str:
    """The cause an exception from the face stands for."""
    if isinstance(err, AttributeError) and "has no attribute" in str(err):
        return "missing"
    if isinstance(err, TypeError):
        return "refused"
    if isinstance(err, NotImplementedError):
        return "unsupported"
    return "error"


def face_failure(index: int, err: BaseException, desc: str = "",
                 prefix: str = "") -> SampleResult:
    """The result of a sample the face raised on: a skip when the device itself lacks a
    dtype the sample needs (float16 without cl_khr_fp16: no library could run it there),
    else a failure of the cause ``err`` stands for."""
    if isinstance(err, DeviceDTypeError):
        return SampleResult(index, "skip", message=f"the device cannot: {_err(err)}",
                            sample=desc)
    return SampleResult(index, "fail", classify(err), prefix + _err(err), desc)


def _err(e: BaseException) -> str:
    text = " ".join(f"{type(e).__name__}: {e}".split())
    return text if len(text) <= 300 else text[:297] + "..."


def values_defined(op: Any) -> bool:
    """False for ops whose values are random or undefined (``empty``, dropout, ``randn``):
    only dtypes, shapes and structure are compared."""
    if op.has_nondeterministic_output:
        return False
    if getattr(op.gradcheck_wrapper, "__name__", "") == "wrapper_set_seed":
        return False
    code = getattr(op.op, "__code__", None)
    return not (code is not None and "wrapper_set_seed" in code.co_names)


def pick(gen: Iterable[Any]) -> list[Any]:
    """At most :data:`MAX_SAMPLES` samples spread evenly over the first four times as many
    (torch lists its samples by kind: the first few are often all empty tensors)."""
    pool = list(itertools.islice(gen, MAX_SAMPLES * 4))
    if len(pool) <= MAX_SAMPLES:
        return pool
    step = len(pool) / MAX_SAMPLES
    return [pool[int(i * step)] for i in range(MAX_SAMPLES)]


def _has_ties(sample: Any) -> bool:
    t = sample.input
    if not isinstance(t, torch().Tensor) or t.numel() < 2:
        return False
    return bool(t.detach().flatten().unique().numel() < t.numel())


def options(op: Any, sample: Any, reference: Callable[[], Any] | None) -> Options:
    """How to compare ``op``'s outputs on ``sample`` (see :class:`Options`)."""
    from .oracle import opinfo_key
    values = values_defined(op)
    loose = TIE_INDICES.get(opinfo_key(op), ())
    if not loose or sample.kwargs.get("stable") or not _has_ties(sample):
        loose = ()
    if loose == (-1,):
        values, loose = False, ()
    return Options(values=values, abs_outputs=ABS_OUTPUTS.get(op.name, ()),
                   loose_outputs=loose, reference=reference)


def samples(op: Any, kind: str, dtype: str) -> list[Any]:
    """torch's samples for one check (error inputs for ``errors``). torch draws their values
    from its global generator, so it is seeded from the check's name once, here (not per
    sample, as torch's own tests do at a few ms each): a check sees the same samples in any
    order and any process."""
    from .oracle import opinfo_key
    torch().manual_seed(zlib.crc32(f"{opinfo_key(op)}/{kind}/{dtype}".encode()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "errors":
            return pick(op.error_inputs("cpu", set_seed=False))
        return pick(op.sample_inputs("cpu", torch_dtype(dtype), requires_grad=kind == "grad",
                                     set_seed=False))


def _parts(sample: Any) -> list[Any]:
    return [sample.input, list(sample.args), dict(sample.kwargs)]


def forward_sample(op: Any, fn: Callable[..., Any], sample: Any, device: str,
                   index: int) -> SampleResult:
    """Run one sample through torch and the face and compare."""
    ns = face()
    desc = _describe(sample)
    try:
        args = Converter(ns, device)(_parts(sample))
    except Unconvertible as e:
        return SampleResult(index, "skip", message=f"not convertible: {e}", sample=desc)
    expected, t_err = _call(op.op, _parts(sample))
    actual, o_err = _call(fn, args)
    if t_err is not None and o_err is not None:
        return SampleResult(index, "pass", sample=desc)
    if t_err is not None:
        return SampleResult(index, "fail", "no-error", f"torch raises {_err(t_err)}; "
                            f"omnitensor returns", desc)
    if o_err is not None:
        return face_failure(index, o_err, desc)

    @functools.lru_cache(maxsize=1)
    def reference() -> Any:
        out, err = _call(op.op, to_float64(_parts(sample)))
        return None if err is not None else canon(out, ns)

    gauge = GAUGE.get(op.name, lambda tree, _name: tree)
    try:
        bad = compare(gauge(canon(actual, ns), op.name), gauge(canon(expected, ns), op.name),
                      options(op, sample, lambda: gauge(reference(), op.name)))
    except Exception as e:  # noqa: BLE001 - reading the face's output failed
        return SampleResult(index, "fail", "error", f"reading the output: {_err(e)}", desc)
    if bad is None:
        return SampleResult(index, "pass", sample=desc)
    return SampleResult(index, "fail", bad.cause, bad.message, desc)


def _checked(op: Any, kind: str, device: str, dtype: str,
             body: Callable[[Callable[..., Any]], Iterable[SampleResult]],
             count: Callable[[], int]) -> CheckResult:
    from .oracle import opinfo_key
    key = opinfo_key(op)
    t0 = time.perf_counter()
    fn = resolve(op)
    if fn is None:
        try:
            total = count()
        except Exception:  # noqa: BLE001 - torch's sample generator failed: no samples
            total = 0
        return CheckResult(key, kind, device, dtype, "missing",
                           reason=why_missing(op),
                           seconds=round(time.perf_counter() - t0, 3), samples_total=total)
    try:
        samples = list(body(fn))
    except Unconvertible as e:
        samples = [SampleResult(0, "skip", message=str(e))]
    except Exception as e:  # noqa: BLE001 - torch's own sample generation failed
        return CheckResult(key, kind, device, dtype, "skip",
                           reason=f"torch's samples failed: {_err(e)}")
    ran = [s for s in samples if s.status != "skip"]
    status = "skip" if not ran else ("fail" if any(s.status == "fail" for s in ran)
                                     else "pass")
    reason = "" if ran else (samples[0].message if samples else "no samples")
    return CheckResult(key, kind, device, dtype, status, samples, reason,
                       round(time.perf_counter() - t0, 3), len(samples))


def check(key: str, kind: str, device: str, dtype: str = "") -> CheckResult:
    """Run check ``kind`` of OpInfo ``key`` on ``device`` in ``dtype`` (the grad dtype for
    ``grad``; none for ``errors``)."""
    from .grad import error_samples, grad_samples
    op = ops_by_key()[key]
    if kind == "errors":
        if op.error_inputs_func is None:
            return CheckResult(key, kind, device, "-", "skip", reason="no error inputs")
        return _checked(op, kind, device, "-", lambda fn: error_samples(op, fn, device),
                        lambda: len(samples(op, kind, "-")))
    if not supports(op, dtype):
        return CheckResult(key, kind, device, dtype, "skip",
                           reason=f"torch's {key} does not support {dtype}")
    if kind == "grad" and not op.supports_autograd:
        return CheckResult(key, kind, device, dtype, "skip", reason="torch has no gradient")
    if kind == "grad":
        return _checked(op, kind, device, dtype,
                        lambda fn: grad_samples(op, fn, device, dtype),
                        lambda: len(samples(op, kind, dtype)))
    return _checked(op, kind, device, dtype,
                    lambda fn: (forward_sample(op, fn, s, device, i)
                                for i, s in enumerate(samples(op, kind, dtype))),
                    lambda: len(samples(op, kind, dtype)))
