"""Composite region -> ONNX node(s): ``linear`` -> ``Gemm``, ``conv2d`` -> ``Conv``, ``rnn``
(mode LSTM) -> ``LSTM`` ...

A region is a call of an ``nn.functional`` composite decorated with
``capture_hooks.composite``. Each mapping gets the emitter, the region and its arguments
bound to the composite's parameter names (tensors as captured Values, absent ones None) and
returns the ONNX names of the region's outputs, or None to decline *before emitting
anything*: the region's primitives are then exported one by one instead (always correct for
the traced sizes; the mapped op is what keeps spatial and time axes shape-polymorphic).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

__all__ = ["REGIONS", "bind"]

Mapping = Callable[[Any, Any, dict], Any]
REGIONS: dict[str, Mapping] = {}


def _reg(*names: str) -> Callable[[Mapping], Mapping]:
    def deco(fn: Mapping) -> Mapping:
        for n in names:
            REGIONS[n] = fn
        return fn
    return deco


def _functions() -> dict[str, Any]:
    from ..nn import _rnn
    from ..nn import functional as F
    fns = {n: getattr(F, n) for n in (
        "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d",
        "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
        "batch_norm", "layer_norm", "group_norm", "gelu", "softmax", "log_softmax",
        "dropout", "embedding")}
    fns["rnn"] = _rnn.rnn_forward
    return fns


_SIGS: dict[str, inspect.Signature] = {}


def _is_value(a: Any) -> bool:
    return hasattr(a, "id") and hasattr(a, "shape") and hasattr(a, "dtype")


def _resolve(a: Any, inputs: tuple) -> Any:
    """Replace ``{"$in": k}`` references by the region's k-th input Value."""
    if isinstance(a, dict) and set(a) == {"$in"}:
        return inputs[a["$in"]]
    if isinstance(a, (list, tuple)):
        return [_resolve(x, inputs) for x in a]
    return a


def bind(region: Any) -> dict | None:
    """The region's call as ``{parameter: value}`` (defaults applied), or None when it
    cannot be reconstructed exactly. Positional non-tensor arguments are ``attrs["arg<i>"]``,
    positional tensor (or None) arguments are ``inputs`` in order, keyword arguments are the
    other attrs."""
    if not _SIGS:
        for n, fn in _functions().items():
            _SIGS[n] = inspect.signature(fn)
    sig = _SIGS.get(region.name)
    if sig is None:
        return None
    attrs = dict(region.attrs)
    inputs = tuple(region.inputs)
    pos_keys = sorted((int(k[3:]) for k in attrs if k.startswith("arg") and k[3:].isdigit()))
    positional: list = []
    it = iter(inputs)
    total = len(pos_keys) + len(inputs)
    uses_refs = "$in" in repr(attrs)
    for i in range(total):
        if i in pos_keys:
            positional.append(_resolve(attrs.pop(f"arg{i}"), inputs))
        elif uses_refs:
            break
        else:
            positional.append(next(it, None))
    kwargs = {k: _resolve(v, inputs) for k, v in attrs.items()}
    try:
        ba = sig.bind(*positional, **kwargs)
    except TypeError:
        return None
    ba.apply_defaults()
    return dict(ba.arguments)


def _ints(v: Any, nd: int) -> list[int]:
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return [int(v[0])] * nd
        return [int(x) for x in v]
    return [int(v)] * nd


# ------------------------------------------------------------------------ linear
@_reg("linear")
def _linear(e: Any, r: Any, a: dict) -> Any:
    x, w, bias = a["input"], a["weight"], a["bias"]
    if not (_is_value(x) and _is_value(w)) or (bias is not None and not _is_value(bias)):
        return None
    b = e.b
    if len(x.shape) == 2 and bias is not None:
        return [b.op("Gemm", [e.name(x), e.name(w), e.name(bias)], transB=1)]
    y = b.op("MatMul", [e.name(x), b.op("Transpose", [e.name(w)], perm=[1, 0])])
    if bias is not None:
        y = b.op("Add", [y, e.name(bias)])
    return [y]


# ------------------------------------------------------------------------ convolution
def _batched(e: Any, x: Any, nd: int) -> tuple[str, bool]:
    if len(x.shape) == nd + 1:
        return e.b.op("Unsqueeze", [e.name(x), e.b.intvec([0])]), True
    return e.name(x), False


def _unbatch(e: Any, y: str, unbatched: bool) -> str:
    return e.b.op("Squeeze", [y, e.b.intvec([0])]) if unbatched else y


@_reg("conv1d", "conv2d", "conv3d")
def _conv(e: Any, r: Any, a: dict) -> Any:
    nd = int(r.name[-2])
    x, w, bias = a["input"], a["weight"], a["bias"]
    if not (_is_value(x) and _is_value(w)):
        return None
    k = list(w.shape[2:])
    d = _ints(a["dilation"], nd)
    s = _ints(a["stride"], nd)
    pad = a["padding"]
    if pad == "valid":
        p_begin = p_end = [0] * nd
    elif pad == "same":
        total = [dd * (kk - 1) for dd, kk in zip(d, k)]
        p_begin = [t // 2 for t in total]
        p_end = [t - t // 2 for t in total]
    elif isinstance(pad, str):
        return None
    else:
        p_begin = p_end = _ints(pad, nd)
    xn, unb = _batched(e, x, nd)
    ins = [xn, e.name(w)] + ([e.name(bias)] if bias is not None else [])
    y = e.b.op("Conv", ins, kernel_shape=k, strides=s, dilations=d, pads=p_begin + p_end,
               group=int(a["groups"]))
    return [_unbatch(e, y, unb)]


@_reg("conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
def _conv_t(e: Any, r: Any, a: dict) -> Any:
    nd = int(r.name[-2])
    x, w, bias = a["input"], a["weight"], a["bias"]
    if not (_is_value(x) and _is_value(w)):
        return None
    p = _ints(a["padding"], nd)
    xn, unb = _batched(e, x, nd)
    ins = [xn, e.name(w)] + ([e.name(bias)] if bias is not None else [])
    y = e.b.op("ConvTranspose", ins, kernel_shape=list(w.shape[2:]),
               strides=_ints(a["stride"], nd), dilations=_ints(a["dilation"], nd),
               pads=p + p, output_padding=_ints(a["output_padding"], nd),
               group=int(a["groups"]))
    return [_unbatch(e, y, unb)]


# ------------------------------------------------------------------------ pooling
@_reg("max_pool1d", "max_pool2d", "max_pool3d")
def _max_pool(e: Any, r: Any, a: dict) -> Any:
    nd = int(r.name[-2])
    x = a["input"]
    if a["return_indices"]:
        return None        # torch's index layout: the primitives are exact
    k = _ints(a["kernel_size"], nd)
    s = k if a["stride"] in (None, []) else _ints(a["stride"], nd)
    p = _ints(a["padding"], nd)
    xn, unb = _batched(e, x, nd)
    # ceil_mode: ONNX's rule (a window that would start in the right padding is dropped)
    # is torch's
    y = e.b.op("MaxPool", [xn], kernel_shape=k, strides=s, pads=p + p,
               dilations=_ints(a["dilation"], nd), ceil_mode=int(bool(a["ceil_mode"])))
    return [_unbatch(e, y, unb)]


@_reg("avg_pool1d", "avg_pool2d", "avg_pool3d")
def _avg_pool(e: Any, r: Any, a: dict) -> Any:
    nd = int(r.name[-2])
    x = a["input"]
    if a.get("divisor_override") is not None:
        return None
    k = _ints(a["kernel_size"], nd)
    s = k if a["stride"] in (None, []) else _ints(a["stride"], nd)
    p = _ints(a["padding"], nd)
    xn, unb = _batched(e, x, nd)
    y = e.b.op("AveragePool", [xn], kernel_shape=k, strides=s, pads=p + p,
               count_include_pad=int(bool(a["count_include_pad"])),
               ceil_mode=int(bool(a["ceil_mode"])))
    return [_unbatch(e, y, unb)]


@_reg("adaptive_avg_pool1d", "adaptive_avg_pool2d")
def _adaptive_avg(e: Any, r: Any, a: dict) -> Any:
    nd = int(r.name[-2])
    x = a["input"]
    size = list(x.shape[-nd:])
    out = a["output_size"]
    out = [out] * nd if isinstance(out, int) else list(out)
    out = [sz if o is None else int(o) for o, sz in zip(out, size)]
    xn, unb = _batched(e, x, nd)
    if all(o == 1 for o in out):
        y = e.b.op("GlobalAveragePool", [xn])
    elif all(sz % o == 0 for sz, o in zip(size, out)):
        k = [sz // o for sz, o in zip(size, out)]
        y = e.b.op("AveragePool", [xn], kernel_shape=k, strides=k)
    else:
        return None
    return [_unbatch(e, y, unb)]


# ------------------------------------------------------------------------ normalization
def _ones(e: Any, like: Any, shape: tuple) -> str:
    return e.b.const(np.ones(shape, dtype=e.np_dtype(like.dtype)))


def _zeros(e: Any, like: Any, shape: tuple) -> str:
    return e.b.const(np.zeros(shape, dtype=e.np_dtype(like.dtype)))


@_reg("batch_norm")
def _batch_norm(e: Any, r: Any, a: dict) -> Any:
    x, mean, var, w, bias = (a["input"], a["running_mean"], a["running_var"], a["weight"],
                             a["bias"])
    if a["training"] or not (_is_value(mean) and _is_value(var)) or len(x.shape) < 2:
        return None
    c = (x.shape[1],)
    sc = e.name(w) if w is not None else _ones(e, x, c)
    bi = e.name(bias) if bias is not None else _zeros(e, x, c)
    return [e.b.op("BatchNormalization", [e.name(x), sc, bi, e.name(mean), e.name(var)],
                   epsilon=float(a["eps"]))]


@_reg("layer_norm")
def _layer_norm(e: Any, r: Any, a: dict) -> Any:
    x, w, bias = a["input"], a["weight"], a["bias"]
    ns = a["normalized_shape"]
    ns = [ns] if isinstance(ns, int) else list(ns)
    if e.opset < 17:
        return None
    sc = e.name(w) if w is not None else _ones(e, x, tuple(ns))
    ins = [e.name(x), sc] + ([e.name(bias)] if bias is not None else [])
    return [e.b.op("LayerNormalization", ins, axis=-len(ns), epsilon=float(a["eps"]))]


# ------------------------------------------------------------------------ activations
def _softmax_dim(a: dict, ndim: int) -> int:
    dim = a["dim"]
    if dim is None:                  # torch's legacy implicit dim
        dim = 0 if ndim in (0, 1, 3) else 1
    return int(dim)


@_reg("softmax", "log_softmax")
def _softmax(e: Any, r: Any, a: dict) -> Any:
    x = a["input"]
    if len(x.shape) == 0:
        return None
    xn = e.name(x)
    if a.get("dtype") is not None:
        from ._prims import onnx_dtype
        xn = e.b.op("Cast", [xn], to=onnx_dtype(r.outputs[0].dtype))
    op = "Softmax" if r.name == "softmax" else "LogSoftmax"
    return [e.b.op(op, [xn], axis=_softmax_dim(a, len(x.shape)))]


@_reg("gelu")
def _gelu(e: Any, r: Any, a: dict) -> Any:
    if e.opset < 20:
        return None                  # the erf formula, primitive by primitive
    return [e.b.op("Gelu", [e.name(a["input"])], approximate=str(a["approximate"]))]


@_reg("embedding")
def _embedding(e: Any, r: Any, a: dict) -> Any:
    if a["max_norm"] is not None:
        return None
    return [e.b.op("Gather", [e.name(a["weight"]), e.name(a["input"])], axis=0)]


@_reg("dropout")
def _dropout(e: Any, r: Any, a: dict) -> Any:
    if a["training"] and a["p"] > 0:
        return None                   # the random draw is refused with a clear error
    return [e.b.op("Identity", [e.name(a["input"])])]


# ------------------------------------------------------------------------ recurrent
# torch's gate blocks -> ONNX's: LSTM i,f,g,o -> i,o,f,c; GRU r,z,n -> z,r,h
_GATES = {"LSTM": (4, [0, 3, 1, 2]), "GRU": (3, [1, 0, 2]), "RNN_TANH": (1, [0]),
          "RNN_RELU": (1, [0])}


def _reorder(e: Any, w: str, hidden: int, order: list[int]) -> str:
    if order == [0]:
        return w
    b = e.b
    parts = [b.op("Slice", [w, b.intvec([g * hidden]), b.intvec([(g + 1) * hidden]),
                            b.intvec([0])]) for g in order]
    return b.op("Concat", parts, axis=0)


@_reg("rnn")
def _rnn(e: Any, r: Any, a: dict) -> Any:
    mode = a["mode"]
    x, hx, weights = a["x"], a["hx"], a["weights"]
    sizes = a["batch_sizes"]
    if (mode not in _GATES or not _is_value(x) or not isinstance(hx, list)
            or not all(_is_value(h) for h in hx) or not isinstance(weights, list)
            or not isinstance(sizes, list) or len(set(sizes)) != 1
            or (a["training"] and a["dropout"] > 0)):
        return None                   # packed sequences, training dropout: the loop
    if any(len(wt) != 5 or wt[4] is not None for wt in weights):
        return None                   # proj_size: no ONNX equivalent
    b = e.b
    ng, order = _GATES[mode]
    steps, batch = len(sizes), int(sizes[0])
    dirs = 2 if a["bidirectional"] else 1
    hidden = hx[0].shape[-1]
    op = "LSTM" if mode == "LSTM" else "GRU" if mode == "GRU" else "RNN"
    layer_in = b.op("Reshape", [e.name(x), b.intvec([steps, batch, x.shape[-1]],
                                                    role="reshape")], allowzero=1)
    finals: list[list[str]] = [[] for _ in hx]
    for layer in range(int(a["num_layers"])):
        ws, rs, bs = [], [], []
        for d in range(dirs):
            w_ih, w_hh, b_ih, b_hh, _ = weights[layer * dirs + d]
            ws.append(b.op("Unsqueeze", [_reorder(e, e.name(w_ih), hidden, order),
                                         b.intvec([0])]))
            rs.append(b.op("Unsqueeze", [_reorder(e, e.name(w_hh), hidden, order),
                                         b.intvec([0])]))
            zero = _zeros(e, w_ih, (ng * hidden,))
            bi = _reorder(e, e.name(b_ih), hidden, order) if b_ih is not None else zero
            bh = _reorder(e, e.name(b_hh), hidden, order) if b_hh is not None else zero
            bs.append(b.op("Unsqueeze", [b.op("Concat", [bi, bh], axis=0), b.intvec([0])]))
        cat = (lambda xs: xs[0] if len(xs) == 1 else b.op("Concat", xs, axis=0))
        k0 = layer * dirs
        states = [b.op("Slice", [e.name(h), b.intvec([k0]), b.intvec([k0 + dirs]),
                                 b.intvec([0])]) for h in hx]
        ins = [layer_in, cat(ws), cat(rs), cat(bs), ""] + states
        attrs: dict = {"hidden_size": int(hidden),
                       "direction": "bidirectional" if dirs == 2 else "forward"}
        if op == "GRU":
            attrs["linear_before_reset"] = 1
        if op == "RNN":
            attrs["activations"] = ["Relu" if mode == "RNN_RELU" else "Tanh"] * dirs
        outs = b.op(op, ins, n_out=3 if op == "LSTM" else 2, **attrs)
        y = outs[0]                                  # (T, dirs, B, H)
        for i, s in enumerate(outs[1:]):
            finals[i].append(s)
        y = b.op("Transpose", [y], perm=[0, 2, 1, 3])    # (T, B, dirs, H)
        layer_in = b.op("Reshape", [y, b.intvec([steps, batch, dirs * hidden],
                                                role="reshape")], allowzero=1)
    out = b.op("Reshape", [layer_in, b.intvec([steps * batch, dirs * hidden],
                                              role="reshape")], allowzero=1)
    states_out = [f[0] if len(f) == 1 else b.op("Concat", f, axis=0) for f in finals]
    return [out] + states_out
