"""Gradient and error-input checks, per sample.

Gradients: torch and the face each run the sample (through the OpInfo's
``gradcheck_wrapper`` and the sample's ``output_process_fn_grad``, as torch's own gradcheck
does), and each returns the vector-Jacobian product for the same random cotangent with
respect to every sample tensor that requires grad. Errors: torch's ``error_inputs`` must
make the face raise too.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, Iterator

import numpy as np

from .compare import Options, compare
from .convert import Arr, Converter, Unconvertible, canon, tensors_in, to_float64
from .driver import (SampleResult, _call, _describe, _err, _parts, face_failure, samples,
                     values_defined)
from .oracle import torch, torch_gradient_unverified
from .resolve import face, for_face


def _differentiable(outs: list[Any]) -> list[int]:
    return [i for i, t in enumerate(outs)
            if t.requires_grad and (t.is_floating_point() or t.is_complex())]


def _cotangents(outs: list[Any], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    cots = []
    for t in outs:
        shape = tuple(t.shape)
        c = rng.standard_normal(shape)
        if t.is_complex():
            c = c + 1j * rng.standard_normal(shape)
        cots.append(np.asarray(c))
    return cots


def _torch_vjp(op: Any, parts: list[Any], process: Callable[[Any], Any],
               seed: int) -> tuple[list[Any], list[int], list[np.ndarray]]:
    """torch's gradients wrt the sample's tensors that require grad, the positions of the
    differentiable outputs, and the cotangents used."""
    tm = torch()
    inputs = list({id(t): t for t in tensors_in(parts, tm.Tensor) if t.requires_grad}
                  .values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = process(op.gradcheck_wrapper(op.op, parts[0], *parts[1], **parts[2]))
        outs = tensors_in(out, tm.Tensor)
        pos = _differentiable(outs)
        cots = _cotangents([outs[i] for i in pos], seed)
        if not pos or not inputs:
            return [], pos, cots
        grads = tm.autograd.grad([outs[i] for i in pos], inputs,
                                 [tm.from_numpy(c).to(outs[i].dtype)
                                  for c, i in zip(cots, pos)], allow_unused=True)
    return list(grads), pos, cots


def _face_vjp(op: Any, fn: Callable[..., Any], sample: Any, device: str, pos: list[int],
              cots: list[np.ndarray]) -> tuple[list[Any] | None, SampleResult | None]:
    ns = face()
    conv = Converter(ns, device, grad=True)
    args = conv(_parts(sample))
    wrapper = for_face(op.gradcheck_wrapper)
    process = for_face(sample.output_process_fn_grad)
    out, err = _call(lambda *a, **k: process(wrapper(fn, *a, **k)), args)
    if err is not None:
        return None, face_failure(0, err)
    outs = tensors_in(out, ns.Tensor)
    if len(outs) <= max(pos):
        return None, SampleResult(0, "fail", "structure",
                                  f"{len(outs)} output tensors, torch has more")
    chosen = [outs[i] for i in pos]
    flat = [i for i, t in zip(pos, chosen) if not t.requires_grad]
    if flat:
        return None, SampleResult(0, "fail", "no-grad", f"output tensor(s) {flat} do not "
                                  f"require grad: no backward was recorded")
    inputs = [f for _t, f in conv.pairs]
    cot = [ns.tensor(c, device=t.device).to(t.dtype) for c, t in zip(cots, chosen)]
    try:
        grads = ns.autograd.grad(chosen, inputs, cot, allow_unused=True)
    except Exception as e:  # noqa: BLE001 - the backward itself failed
        return None, face_failure(0, e, prefix="backward: ")
    return list(grads), None


def _zero(g: Any) -> bool:
    if isinstance(g, Arr):
        return not np.any(g.values)
    return False


def _compare_grads(t_grads: list[Any], f_grads: list[Any], ns: Any, values: bool,
                   reference: Callable[[], Any]) -> tuple[str, str] | None:
    for i, (tg, fg) in enumerate(zip(t_grads, f_grads)):
        t_c = None if tg is None else canon(tg, ns)
        f_c = None if fg is None else canon(fg, ns)
        if t_c is None or f_c is None:
            if t_c is None and (f_c is None or _zero(f_c)):
                continue
            if f_c is None and _zero(t_c):
                continue
            side = "omnitensor" if f_c is None else "torch"
            return "no-grad", f"input {i}: {side} gives no gradient"
        opts = Options(values=values, reference=functools.partial(_ref_at, reference, i))
        bad = compare(f_c, t_c, opts, f"grad of input {i}: ")
        if bad is not None:
            return bad.cause, bad.message
    return None


def _ref_at(reference: Callable[[], Any], i: int) -> Any:
    """The float64 reference gradient of input ``i``, or None."""
    refs = reference()
    return refs[i] if isinstance(refs, list) and i < len(refs) else None


def grad_sample(op: Any, fn: Callable[..., Any], sample: Any, device: str,
                index: int) -> SampleResult:
    """torch's and the face's vector-Jacobian products for one sample."""
    ns = face()
    desc = _describe(sample)
    try:
        t_grads, pos, cots = _torch_vjp(op, _parts(sample), sample.output_process_fn_grad,
                                        index)
    except Exception as e:  # noqa: BLE001 - torch cannot differentiate this sample
        return SampleResult(index, "skip", message=f"torch's backward fails: {_err(e)}",
                            sample=desc)
    if not t_grads:
        return SampleResult(index, "skip", message="nothing to differentiate", sample=desc)
    try:
        f_grads, failed = _face_vjp(op, fn, sample, device, pos, cots)
    except Unconvertible as e:
        return SampleResult(index, "skip", message=f"not convertible: {e}", sample=desc)
    if failed is not None and failed.cause == "no-grad" and \
            all(g is None or _zero(canon(g, ns)) for g in t_grads):
        return SampleResult(index, "pass", sample=desc)  # torch's gradient is zero too
    if failed is not None:
        return SampleResult(index, failed.status, failed.cause, failed.message, desc)
    assert f_grads is not None

    @functools.lru_cache(maxsize=1)
    def reference() -> Any:
        try:
            grads, _pos, _cots = _torch_vjp(op, to_float64(_parts(sample)),
                                            sample.output_process_fn_grad, index)
        except Exception:  # noqa: BLE001 - no float64 reference: judge by float32 alone
            return None
        return [None if g is None else canon(g, ns) for g in grads]

    try:
        bad = _compare_grads(t_grads, f_grads, ns, values_defined(op), reference)
    except Exception as e:  # noqa: BLE001 - reading the face's gradient failed
        return SampleResult(index, "fail", "error", f"reading the gradient: {_err(e)}", desc)
    if bad is None:
        return SampleResult(index, "pass", sample=desc)
    if torch_gradient_unverified(op):
        return SampleResult(index, "skip", message=f"torch's own gradcheck of this op is an "
                            f"expected failure, so its gradient is no oracle ({bad[1]})",
                            sample=desc)
    return SampleResult(index, "fail", bad[0], bad[1], desc)


def grad_samples(op: Any, fn: Callable[..., Any], device: str,
                 dtype: str) -> Iterator[SampleResult]:
    for i, s in enumerate(samples(op, "grad", dtype)):
        yield grad_sample(op, fn, s, device, i)


def error_samples(op: Any, fn: Callable[..., Any], device: str) -> Iterator[SampleResult]:
    """torch's error inputs: where torch raises, the face must raise too."""
    ns = face()
    for i, ei in enumerate(samples(op, "errors", "-")):
        sample = ei.sample_input
        desc = _describe(sample)
        try:
            args = Converter(ns, device)(_parts(sample))
        except Unconvertible as e:
            yield SampleResult(i, "skip", message=f"not convertible: {e}", sample=desc)
            continue
        _out, t_err = _call(op.op, _parts(sample))
        if t_err is None:
            yield SampleResult(i, "skip", message="torch does not raise here", sample=desc)
            continue
        out, o_err = _call(fn, args)
        if o_err is not None:
            yield SampleResult(i, "pass", sample=desc)
            continue
        yield SampleResult(i, "fail", "no-error", f"torch raises {_err(t_err)}; omnitensor "
                           f"returns {type(out).__name__}", desc)
