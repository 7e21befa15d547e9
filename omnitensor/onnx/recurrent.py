"""ONNX's recurrent operators (LSTM, GRU, RNN) with omnitensor ops, as the operator
specification defines them: gate order i, o, f, c (LSTM) and z, r, h (GRU), weights
``W [dirs, G*H, I]``, ``R [dirs, G*H, H]``, biases ``B [dirs, 2*G*H]``, outputs
``Y [seq, dirs, batch, H]`` and the final states. ``sequence_lens`` shorter than the
sequence mask the steps past each length (forward direction), as onnxruntime does."""
from __future__ import annotations

from typing import Any

from ..core.ops import creation as cr, join
from ..core.ops.ternary import where
from ..core.tensor import Tensor
from .ops import OPS, Ctx, OnnxOpError, _joint

_DEFAULT_ACTS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"],
                 "RNN": ["Tanh"]}
_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def _check(ctx: Ctx, kind: str) -> None:
    acts = [a.decode() if isinstance(a, bytes) else a for a in (ctx.attr("activations") or [])]
    dirs = 2 if ctx.attr("direction", "forward") == "bidirectional" else 1
    if acts and [a.lower() for a in acts] != [a.lower() for a in _DEFAULT_ACTS[kind]] * dirs:
        raise OnnxOpError(f"{kind} with activations {acts} is not supported (only the "
                          f"defaults {_DEFAULT_ACTS[kind]})")
    if ctx.attr("clip") is not None:
        raise OnnxOpError(f"{kind} with clip is not supported")
    if kind == "LSTM" and ctx.attr("input_forget", 0):
        raise OnnxOpError("LSTM with input_forget=1 is not supported")


def _cell(kind: str, x_proj: Tensor, h: Tensor, c: Any, r: Tensor, rb: Tensor,
          linear_before_reset: bool) -> tuple[Tensor, Any]:
    hr = h @ r.t()
    if kind == "LSTM":
        g = x_proj + hr + rb
        i, o, f, cc = g.chunk(4, -1)
        c_new = f.sigmoid() * c + i.sigmoid() * cc.tanh()
        return o.sigmoid() * c_new.tanh(), c_new
    if kind == "GRU":
        hs = h.shape[-1]
        xz, xr, xh = x_proj.chunk(3, -1)
        rz, rr, rh = r[:hs], r[hs:2 * hs], r[2 * hs:]
        bz, br, bh = rb.chunk(3, -1)
        z = (xz + h @ rz.t() + bz).sigmoid()
        rt = (xr + h @ rr.t() + br).sigmoid()
        if linear_before_reset:
            n = (xh + rt * (h @ rh.t() + bh)).tanh()
        else:
            n = (xh + (rt * h) @ rh.t() + bh).tanh()
        return (1 - z) * n + z * h, None
    return (x_proj + hr + rb).tanh(), None


def _run(kind: str, ctx: Ctx, x: Tensor, w: Tensor, r: Tensor, b: Any = None,
         seq_lens: Any = None, h0: Any = None, c0: Any = None, p: Any = None) -> tuple:
    _check(ctx, kind)
    if p is not None:
        raise OnnxOpError("LSTM peepholes (input P) are not supported")
    x, w, r = _joint(x, w, r)
    if ctx.attr("layout", 0):
        x = x.transpose(0, 1)
    seq, batch = x.shape[0], x.shape[1]
    gates = _GATES[kind]
    hs = r.shape[-1]
    dirs = w.shape[0]
    direction = ctx.attr("direction", "forward")
    lens = None
    if seq_lens is not None:
        lv = [int(v) for v in seq_lens.tolist()]
        if any(v != seq for v in lv):
            if direction != "forward":
                raise OnnxOpError(f"{kind}: sequence_lens shorter than the sequence need "
                                  f"direction='forward'")
            lens = seq_lens.to(x.device).reshape(1, batch, 1)
    ys: list[Tensor] = []
    hs_out: list[Any] = []
    cs_out: list[Any] = []  # None per direction for RNN/GRU
    for d in range(dirs):
        reverse = direction == "reverse" or (direction == "bidirectional" and d == 1)
        bias = b[d].to(x.device) if b is not None else cr.zeros(2 * gates * hs, dtype=x.dtype,
                                                                 device=x.device)
        wb, rb = bias[:gates * hs], bias[gates * hs:]
        proj = x @ w[d].t() + wb                        # every step's input projection
        h = h0[d] if h0 is not None else cr.zeros((batch, hs), dtype=x.dtype, device=x.device)
        c = (c0[d] if c0 is not None else cr.zeros((batch, hs), dtype=x.dtype,
                                                   device=x.device)) if kind == "LSTM" else None
        steps = range(seq - 1, -1, -1) if reverse else range(seq)
        outs: list[Tensor] = [None] * seq  # type: ignore[list-item]
        for t in steps:
            h_new, c_new = _cell(kind, proj[t], h, c, r[d], rb,
                                 bool(ctx.attr("linear_before_reset", 0)))
            if lens is not None:
                live = t < lens[0]
                outs[t] = where(live, h_new, h_new * 0)
                h = where(live, h_new, h)
                c = where(live, c_new, c) if c is not None else None
            else:
                outs[t], h, c = h_new, h_new, c_new
        ys.append(join.stack(outs, 0))
        hs_out.append(h)
        cs_out.append(c)
    y = join.stack(ys, 1)                               # [seq, dirs, batch, H]
    y_h = join.stack(hs_out, 0)
    if ctx.attr("layout", 0):
        y, y_h = y.permute(2, 0, 1, 3), y_h.transpose(0, 1)
    res = [y, y_h]
    if kind == "LSTM":
        y_c = join.stack(cs_out, 0)
        res.append(y_c.transpose(0, 1) if ctx.attr("layout", 0) else y_c)
    return tuple(res[:max(1, ctx.n_out)])


OPS["LSTM"] = lambda ctx, *a: _run("LSTM", ctx, *a)
OPS["GRU"] = lambda ctx, *a: _run("GRU", ctx, *a[:6])
OPS["RNN"] = lambda ctx, *a: _run("RNN", ctx, *a[:6])
