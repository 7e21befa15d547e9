"""Forward-mode AD against torch's, on torch's own op database (``op_db``).

For a sample of an OpInfo that ``supports_forward_ad``, the tensors torch marks
``requires_grad`` get the same random tangents in torch and in omnitensor, the op runs
under a dual level in both (through the OpInfo's ``gradcheck_wrapper`` and the sample's
``output_process_fn_grad``, as torch's own tests do) and the output tangents are compared.

The verdict separates forward AD from everything else:
* ``skip``: omnitensor has no such op, its forward values differ from torch's, or the
  sample cannot be converted: the OpInfo conformance suite (``tests/torch_opinfo``) owns
  those;
* ``gap``: the tangents differ and so does the reverse-mode gradient for a random
  cotangent (or omnitensor records no backward), or the tangent is NaN/inf where torch's is
  finite: forward AD derives its tangents from the op's backward formula, so that formula
  is what differs (or is not differentiable there);
* ``fail``: the reverse-mode gradient equals torch's but the tangent does not: a
  forward-AD bug (``J`` is determined by ``Jᵀ``, and the double-vjp identity is exact).
"""
from __future__ import annotations

import functools
import types
import warnings
from typing import Any

import numpy as np

import omnitensor as ot
import omnitensor.autograd.forward_ad as ofw

MAX_SAMPLES = 3


class Unconvertible(Exception):
    pass


@functools.lru_cache(maxsize=1)
def forward_ops() -> dict[str, Any]:
    """torch's OpInfos that support forward AD, by ``name[.variant]``."""
    from torch.testing._internal.common_methods_invocations import op_db
    return {key(op): op for op in op_db if op.supports_forward_ad}


def key(op: Any) -> str:
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def resolve(op: Any) -> Any:
    """omnitensor's callable for ``op``: a lambda of torch's test module rebuilt over
    omnitensor, else the object at torch's public name (None if absent)."""
    code = getattr(op.op, "__code__", None)
    if code is not None and "testing" in code.co_filename.replace("\\", "/"):
        return _for_ot(op.op)
    obj: Any = ot
    for part in op.name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if obj is not None and callable(obj) and not isinstance(obj, types.ModuleType):
        return obj
    if op.method_variant is not None:
        return getattr(ot.Tensor, op.name.split(".")[-1], None)
    return None


def _for_ot(fn: Any) -> Any:
    """A torch test helper (wrapper, output processing) rebuilt over omnitensor."""
    g = getattr(fn, "__globals__", None)
    if g is None or "torch" not in g or not hasattr(fn, "__code__"):
        return fn
    return types.FunctionType(fn.__code__, {**g, "torch": ot}, fn.__name__, fn.__defaults__,
                              fn.__closure__)


class _Duals:
    """Both sides of one sample: torch's and omnitensor's arguments, the tensors torch
    differentiates becoming duals with the same tangents."""

    def __init__(self, device: str, seed: int) -> None:
        self.device = device
        self.rng = np.random.default_rng(seed)
        self.tangents: list[np.ndarray] = []

    def ours(self, x: Any, dual: bool) -> Any:
        import torch
        if isinstance(x, torch.Tensor):
            o = ot.tensor(x.detach().numpy(), device=self.device)
            if x.requires_grad and dual:
                t = self.rng.standard_normal(tuple(x.shape))
                if x.is_complex():
                    t = t + 1j * self.rng.standard_normal(tuple(x.shape))
                self.tangents.append(t)
                return ofw.make_dual(o, ot.tensor(t, device=self.device).to(o.dtype))
            return o.requires_grad_(x.requires_grad and not dual)
        if isinstance(x, torch.dtype):
            return getattr(ot, str(x).split(".")[-1])
        if isinstance(x, torch.Size):
            return tuple(x)
        if isinstance(x, (list, tuple)):
            return type(x)(self.ours(v, dual) for v in x)
        if isinstance(x, dict):
            return {k: self.ours(v, dual) for k, v in x.items()}
        if type(x).__module__.startswith("torch"):
            raise Unconvertible(type(x).__name__)
        return x

    def theirs(self, x: Any, it: Any) -> Any:
        import torch
        import torch.autograd.forward_ad as tfw
        if isinstance(x, torch.Tensor):
            if x.requires_grad:
                return tfw.make_dual(x.detach(), torch.from_numpy(next(it)).to(x.dtype))
            return x
        if isinstance(x, (list, tuple)) and not isinstance(x, torch.Size):
            return type(x)(self.theirs(v, it) for v in x)
        if isinstance(x, dict):
            return {k: self.theirs(v, it) for k, v in x.items()}
        return x


def _tensors(x: Any, cls: type) -> list:
    if isinstance(x, cls):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors(v, cls)]
    return []


def _np(t: Any) -> np.ndarray:
    import torch
    if isinstance(t, torch.Tensor):
        t = t.detach()
        if t._is_zerotensor():  # torch's symbolic zero tangent
            return np.zeros(tuple(t.shape), dtype=str(t.dtype).split(".")[-1])
        return t.resolve_conj().resolve_neg().numpy()
    return np.asarray(t.detach().cpu().numpy() if hasattr(t, "cpu") else t)


def _close(a: Any, b: Any, tol: float) -> bool:
    a, b = _np(a), _np(b)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True))


def _call(op: Any, fn: Any, s: Any, args: tuple, torch_side: bool) -> Any:
    wrapper = op.gradcheck_wrapper if torch_side else _for_ot(op.gradcheck_wrapper)
    process = s.output_process_fn_grad if torch_side else _for_ot(s.output_process_fn_grad)
    return process(wrapper(fn, args[0], *args[1], **args[2]))


def _reverse_agrees(op: Any, fn: Any, s: Any, device: str, tol: float) -> bool:
    """Whether omnitensor's vector-Jacobian product equals torch's for one cotangent."""
    import torch
    conv = _Duals(device, 1)
    ours = conv.ours((s.input, list(s.args), s.kwargs), dual=False)
    o_out = _tensors(_call(op, fn, s, ours, False), ot.Tensor)
    t_out = _tensors(_call(op, op.op, s, (s.input, list(s.args), s.kwargs), True),
                     torch.Tensor)
    o_in = [t for t in _tensors(list(ours[:2]) + list(ours[2].values()), ot.Tensor)
            if t.requires_grad]
    t_in = [t for t in _tensors([s.input, list(s.args), list(s.kwargs.values())],
                                torch.Tensor) if t.requires_grad]
    pos = [i for i, t in enumerate(t_out) if t.requires_grad]
    if not pos or len(o_out) != len(t_out):
        return False
    if not all(o_out[i].requires_grad for i in pos):
        return False  # omnitensor records no backward for this op
    cots = [conv.rng.standard_normal(tuple(t_out[i].shape)) for i in pos]
    tg = torch.autograd.grad([t_out[i] for i in pos], t_in,
                             [torch.from_numpy(c).to(t_out[i].dtype) for c, i in
                              zip(cots, pos)], allow_unused=True)
    og = ot.autograd.grad([o_out[i] for i in pos], o_in,
                          [ot.tensor(c, device=device).to(o_out[i].dtype) for c, i in
                           zip(cots, pos)], allow_unused=True)
    for a, b in zip(og, tg):
        if a is None or b is None:
            if (a is None) != (b is None) and np.any(_np(b if a is None else a)):
                return False
            continue
        if not _close(a, b, tol):
            return False
    return True


def check_sample(op: Any, fn: Any, s: Any, device: str, tol: float) -> tuple[str, str]:
    """``(verdict, message)`` for one sample: pass, skip, gap or fail."""
    import torch
    import torch.autograd.forward_ad as tfw
    duals = _Duals(device, 0)
    with ofw.dual_level():
        try:
            args = duals.ours((s.input, list(s.args), s.kwargs), dual=True)
        except Unconvertible as e:
            return "skip", f"not convertible: {e}"
        try:
            out = _tensors(_call(op, fn, s, args, False), ot.Tensor)
        except Exception as e:  # compared with the op's plain call below
            try:
                _call(op, fn, s, duals.ours((s.input, list(s.args), s.kwargs), False), False)
            except Exception as plain:
                return "skip", f"omnitensor's op fails: {type(plain).__name__}: {plain}"
            return "fail", f"fails only under forward AD: {type(e).__name__}: {e}"
        o_tan = [None if t is None else _np(t) for t in
                 (ofw.unpack_dual(o).tangent for o in out)]
        o_val = [_np(o) for o in out]
    with tfw.dual_level():
        it = iter(duals.tangents)
        t_args = duals.theirs((s.input, list(s.args), s.kwargs), it)
        t_out = _tensors(_call(op, op.op, s, t_args, True), torch.Tensor)
        t_tan = [None if t is None else _np(t) for t in
                 (tfw.unpack_dual(o).tangent for o in t_out)]
    if len(t_out) != len(out):
        return "skip", f"{len(out)} output tensors, torch has {len(t_out)}"
    for i, (ov, tt, ot_, tv) in enumerate(zip(o_val, t_out, o_tan, t_tan)):
        if not (tt.is_floating_point() or tt.is_complex()):
            continue
        if not _close(ov, _np(tt), tol):
            return "skip", f"output {i}: forward values differ from torch's"
        if tv is None and ot_ is None:
            continue
        a = np.zeros_like(tv) if ot_ is None else ot_
        b = np.zeros_like(ot_) if tv is None else tv
        if not _close(a, b, tol):
            diff = np.max(np.abs(a - b)) if a.shape == b.shape else (a.shape, b.shape)
            if not _reverse_agrees(op, fn, s, device, tol):
                return "gap", (f"output {i}: tangent differs from torch's (max {diff}), and "
                               f"so does the reverse-mode gradient: the op's backward "
                               f"formula differs")
            if a.shape == b.shape and np.any(~np.isfinite(a) & np.isfinite(b)):
                # with a correct vjp, the double-vjp identity can only give NaN/inf where
                # the backward formula is itself not differentiable (0 * inf inside it)
                return "gap", (f"output {i}: non-finite tangent where torch's is finite: the "
                               f"op's backward formula is not differentiable at this input")
            return "fail", f"output {i}: tangent differs from torch's (max {diff})"
    return "pass", ""


def check_op(name: str, device: str, tol: float = 1e-6) -> tuple[str, str]:
    """The worst verdict over the first samples of OpInfo ``name``."""
    import torch
    op = forward_ops()[name]
    fn = resolve(op)
    if fn is None:
        return "skip", f"omnitensor has no {op.name}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            samples = list(op.sample_inputs("cpu", torch.float64, requires_grad=True))
        except Exception as e:
            return "skip", f"torch gives no float64 samples: {e}"
        verdicts = [check_sample(op, fn, s, device, tol) for s in samples[:MAX_SAMPLES]]
    for level in ("fail", "gap", "pass", "skip"):
        for v in verdicts:
            if v[0] == level:
                return v
    return "skip", "no samples"
