"""The public calls the fuzz suite makes: one table, used by the case generator
(``cases.py``, names and arities) and the worker (``worker.py``, the calls). Each entry is
``name -> fn(lib, F, *args)`` where ``lib`` is ``omnitensor`` or ``torch`` and ``F`` its
``nn.functional``: the same code runs on both, so torch is the oracle."""
from __future__ import annotations

from typing import Any, Callable

Op = Callable[..., Any]

# ops whose result is random or uninitialised: only shape/dtype (or the error) are compared
SHAPE_ONLY = {"empty", "dropout_train", "randn", "rand", "randint", "normal", "multinomial"}

OPS: dict[str, Op] = {
    # creation (device given by the worker through the ``dev`` keyword)
    "zeros": lambda m, F, dev, shape: m.zeros(shape, device=dev),
    "ones": lambda m, F, dev, shape: m.ones(*shape, device=dev) if isinstance(shape, list)
    else m.ones(shape, device=dev),
    "empty": lambda m, F, dev, shape: m.empty(shape, device=dev),
    "full": lambda m, F, dev, shape, v: m.full(shape, v, device=dev),
    "eye": lambda m, F, dev, n, k: m.eye(n, k, device=dev),
    "arange": lambda m, F, dev, a, b, s: m.arange(a, b, s, device=dev),
    "linspace": lambda m, F, dev, a, b, n: m.linspace(a, b, n, device=dev),
    "tensor_dtype": lambda m, F, dev, data, dt: m.tensor(data, dtype=getattr(m, dt),
                                                         device=dev),
    "randn": lambda m, F, dev, shape: m.randn(shape, device=dev),
    "randint": lambda m, F, dev, lo, hi, shape: m.randint(lo, hi, shape, device=dev),
    "normal": lambda m, F, dev, mean, std, shape: m.normal(mean, std, shape, device=dev),
    # elementwise
    "add": lambda m, F, x, y: x + y,
    "mul": lambda m, F, x, y: x * y,
    "sub": lambda m, F, x, y: x - y,
    "div": lambda m, F, x, y: x / y,
    "floordiv": lambda m, F, x, y: x // y,
    "pow": lambda m, F, x, y: x ** y,
    "maximum": lambda m, F, x, y: m.maximum(x, y),
    "where": lambda m, F, c, x, y: m.where(c, x, y),
    "clamp": lambda m, F, x, lo, hi: m.clamp(x, lo, hi),
    "exp": lambda m, F, x: x.exp(),
    "log": lambda m, F, x: x.log(),
    "sqrt": lambda m, F, x: x.sqrt(),
    "tanh": lambda m, F, x: x.tanh(),
    "sigmoid": lambda m, F, x: x.sigmoid(),
    "abs": lambda m, F, x: x.abs(),
    "neg": lambda m, F, x: -x,
    # reductions
    "sum": lambda m, F, x, dim, keep: x.sum(dim, keepdim=keep),
    "mean": lambda m, F, x, dim, keep: x.mean(dim, keepdim=keep),
    "amax": lambda m, F, x, dim, keep: x.amax(dim, keepdim=keep),
    "argmax": lambda m, F, x, dim, keep: x.argmax(dim, keepdim=keep),
    "prod": lambda m, F, x, dim: x.prod(dim),
    "std": lambda m, F, x, dim: x.std(dim),
    "cumsum": lambda m, F, x, dim: x.cumsum(dim),
    "softmax": lambda m, F, x, dim: x.softmax(dim),
    "logsumexp": lambda m, F, x, dim: x.logsumexp(dim),
    "max_dim": lambda m, F, x, dim: x.max(dim),
    "topk": lambda m, F, x, k, dim: x.topk(k, dim),
    "sort": lambda m, F, x, dim: x.sort(dim),
    "max": lambda m, F, x: x.max(),
    # shape
    "reshape": lambda m, F, x, shape: x.reshape(shape),
    "view": lambda m, F, x, shape: x.view(shape),
    "transpose": lambda m, F, x, a, b: x.transpose(a, b),
    "permute": lambda m, F, x, dims: x.permute(dims),
    "squeeze": lambda m, F, x, dim: x.squeeze(dim),
    "unsqueeze": lambda m, F, x, dim: x.unsqueeze(dim),
    "flatten": lambda m, F, x, a, b: x.flatten(a, b),
    "expand": lambda m, F, x, shape: x.expand(shape),
    "repeat": lambda m, F, x, reps: x.repeat(reps),
    "flip": lambda m, F, x, dims: x.flip(dims),
    "roll": lambda m, F, x, s, d: x.roll(s, d),
    "narrow": lambda m, F, x, d, s, n: x.narrow(d, s, n),
    "chunk": lambda m, F, x, n, d: x.chunk(n, d),
    "split": lambda m, F, x, n, d: x.split(n, d),
    "cat": lambda m, F, xs, d: m.cat(xs, d),
    "stack": lambda m, F, xs, d: m.stack(xs, d),
    "size": lambda m, F, x, d: x.size(d),
    "t": lambda m, F, x: x.t(),
    # indexing
    "getitem": lambda m, F, x, key: x[key],
    "index_select": lambda m, F, x, d, idx: x.index_select(d, idx),
    "gather": lambda m, F, x, d, idx: x.gather(d, idx),
    "scatter": lambda m, F, x, d, idx, src: x.scatter(d, idx, src),
    "scatter_add": lambda m, F, x, d, idx, src: x.scatter_add(d, idx, src),
    "masked_fill": lambda m, F, x, mask, v: x.masked_fill(mask, v),
    # nn.functional
    "linear": lambda m, F, x, w, b: F.linear(x, w, b),
    "conv1d": lambda m, F, x, w, s, p, d: F.conv1d(x, w, None, s, p, d),
    "conv2d": lambda m, F, x, w, s, p, d: F.conv2d(x, w, None, s, p, d),
    "max_pool2d": lambda m, F, x, k, s, p: F.max_pool2d(x, k, s, p),
    "avg_pool2d": lambda m, F, x, k, s, p: F.avg_pool2d(x, k, s, p),
    "embedding": lambda m, F, idx, w: F.embedding(idx, w),
    "cross_entropy": lambda m, F, x, t: F.cross_entropy(x, t),
    "nll_loss": lambda m, F, x, t: F.nll_loss(x, t),
    "mse_loss": lambda m, F, x, y: F.mse_loss(x, y),
    "one_hot": lambda m, F, idx, n: F.one_hot(idx, n),
    "dropout_eval": lambda m, F, x, p: F.dropout(x, p, training=False),
    "dropout_train": lambda m, F, x, p: F.dropout(x, p, training=True),
    "pad": lambda m, F, x, pads: F.pad(x, pads),
    "layer_norm": lambda m, F, x, shape: F.layer_norm(x, shape),
    "relu": lambda m, F, x: F.relu(x),
    "gelu": lambda m, F, x: F.gelu(x),
}

#: ops that take the device as their first argument (creation)
CREATION = {"zeros", "ones", "empty", "full", "eye", "arange", "linspace", "tensor_dtype",
            "randn", "randint", "normal"}
