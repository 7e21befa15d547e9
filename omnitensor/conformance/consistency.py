"""Cross-device consistency: the same float32 computation on every device, each result's
distance from a float64 NumPy reference, and the distance between every pair of devices.

``omnitensor conformance --consistency`` prints the table; ``--json`` puts it in the
certificate. The distance is normwise: ``max|a - b| / max|reference|`` over the result, so
an op is at its reference library's accuracy when its figure is a few float32 ulps
(float32's unit roundoff is 6e-8). Random numbers are compared between devices only: for
the same seed they must be bit-identical (distance 0).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass
class Probe:
    """One computation: ``call(ot, *tensors)`` on float32 inputs made by ``inputs(rng)``;
    ``ref(*float64 arrays)`` is its reference (None: compare devices with each other only)."""
    name: str
    inputs: Callable[[np.random.Generator], list[np.ndarray]]
    call: Callable[..., Any]
    ref: Callable[..., np.ndarray] | None


def _normal(*shape: int) -> Callable[[np.random.Generator], list[np.ndarray]]:
    return lambda rng: [rng.standard_normal(shape).astype(np.float32)]


def _uniform(lo: float, hi: float, *shape: int) -> Callable:
    return lambda rng: [rng.uniform(lo, hi, shape).astype(np.float32)]


def _pair(*shape_a: int, shape_b: tuple | None = None) -> Callable:
    return lambda rng: [rng.standard_normal(shape_a).astype(np.float32),
                        rng.standard_normal(shape_b or shape_a).astype(np.float32)]


def _erf(x: np.ndarray) -> np.ndarray:
    try:
        from scipy.special import erf
        return erf(x)
    except ImportError:  # pragma: no cover
        return np.vectorize(math.erf)(x)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _layer_norm(x: np.ndarray) -> np.ndarray:
    m = x.mean(-1, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5)


def _cross_entropy(logits: np.ndarray) -> np.ndarray:
    target = np.arange(logits.shape[0]) % logits.shape[1]
    lse = np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1)) + logits.max(1)
    return np.asarray((lse - logits[np.arange(logits.shape[0]), target]).mean())


def _conv2d(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + h - kh + 1, j:j + wd - kw + 1]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out


def _ce_call(ot: Any, logits: Any) -> Any:
    target = ot.arange(logits.shape[0], device=logits.device) % logits.shape[1]
    return ot.nn.functional.cross_entropy(logits, target)


PROBES: list[Probe] = [
    Probe("exp", _uniform(-10, 10, 10000), lambda ot, x: x.exp(), np.exp),
    Probe("log", _uniform(1e-3, 1e3, 10000), lambda ot, x: x.log(), np.log),
    Probe("tanh", _normal(10000), lambda ot, x: x.tanh(), np.tanh),
    Probe("sin", _uniform(-100, 100, 10000), lambda ot, x: x.sin(), np.sin),
    Probe("sqrt", _uniform(0, 100, 10000), lambda ot, x: x.sqrt(), np.sqrt),
    Probe("erf", _normal(10000), lambda ot, x: x.erf(), _erf),
    Probe("sigmoid", _normal(10000), lambda ot, x: x.sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    Probe("divide", _pair(10000), lambda ot, a, b: a / b, np.divide),
    Probe("pow", lambda rng: [rng.uniform(0.1, 3, 10000).astype(np.float32),
                              rng.uniform(-2, 2, 10000).astype(np.float32)],
          lambda ot, a, b: a ** b, np.power),
    # positive terms: the error is the accumulation's, not cancellation's
    Probe("sum 1M", _uniform(0, 1, 1 << 20), lambda ot, x: x.sum(), np.sum),
    Probe("mean rows", _normal(256, 1024), lambda ot, x: x.mean(1), lambda x: x.mean(1)),
    Probe("var", _normal(64, 4096), lambda ot, x: x.var(1), lambda x: x.var(1, ddof=1)),
    Probe("logsumexp", _normal(64, 1000), lambda ot, x: ot.logsumexp(x, dim=1),
          lambda x: np.log(np.exp(x).sum(1))),
    Probe("cumsum 10k", _normal(10000), lambda ot, x: x.cumsum(0), np.cumsum),
    Probe("matmul 512", _pair(512, 512), lambda ot, a, b: a @ b, np.matmul),
    Probe("softmax", _normal(64, 1000), lambda ot, x: x.softmax(-1), _softmax),
    Probe("log_softmax", _normal(64, 1000), lambda ot, x: x.log_softmax(-1),
          lambda x: np.log(_softmax(x))),
    Probe("gelu", _normal(10000), lambda ot, x: ot.nn.functional.gelu(x),
          lambda x: x * 0.5 * (1 + _erf(x / math.sqrt(2)))),
    Probe("layer_norm", _normal(64, 512), lambda ot, x: ot.nn.functional.layer_norm(x, (512,)),
          _layer_norm),
    Probe("cross_entropy", _normal(256, 10), _ce_call, _cross_entropy),
    Probe("conv2d", lambda rng: [rng.standard_normal((4, 8, 16, 16)).astype(np.float32),
                                 rng.standard_normal((16, 8, 3, 3)).astype(np.float32)],
          lambda ot, x, w: ot.nn.functional.conv2d(x, w), _conv2d),
    Probe("randn (seeded)", lambda rng: [], lambda ot, dev: _seeded(ot, dev, ot.randn), None),
    Probe("rand (seeded)", lambda rng: [], lambda ot, dev: _seeded(ot, dev, ot.rand), None),
    Probe("dropout mask (seeded)", lambda rng: [],
          lambda ot, dev: _seeded(ot, dev, lambda n, device: ot.nn.functional.dropout(
              ot.ones(n, device=device), 0.5)), None),
]


def _seeded(ot: Any, dev: Any, draw: Callable) -> Any:
    ot.manual_seed(1234)
    return draw(4096, device=dev)


def _distance(a: np.ndarray, b: np.ndarray, scale: float) -> float:
    if a.size == 0:
        return 0.0
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return math.inf
    ok = ~np.isnan(a)
    diff = float(np.max(np.abs(a[ok] - b[ok]))) if ok.any() else 0.0
    return diff / scale if scale else diff


def measure(devices: list[Any]) -> dict[str, Any]:
    """Run every probe on every device: ``{"devices": [...], "rows": [...]}`` where each
    row has the probe's error against float64 per device and the distance per device pair."""
    import omnitensor as ot
    devs = [ot.device(d) for d in devices]
    names = [str(d) for d in devs]
    rows = []
    for i, probe in enumerate(PROBES):
        arrays = probe.inputs(np.random.default_rng(1000 + i))
        results: dict[str, np.ndarray | str] = {}
        for d in devs:
            try:
                if probe.ref is None:
                    out = probe.call(ot, d)
                else:
                    out = probe.call(ot, *[ot.asarray(a, device=d) for a in arrays])
                results[str(d)] = out.detach().cpu().numpy().astype(np.float64)
            except Exception as e:  # noqa: BLE001 - reported in the table
                results[str(d)] = f"{type(e).__name__}: {e}"
        row: dict[str, Any] = {"op": probe.name, "vs_float64": {}, "pairs": {}, "errors": {}}
        ref = None
        if probe.ref is not None:
            with np.errstate(all="ignore"):
                ref = np.asarray(probe.ref(*[a.astype(np.float64) for a in arrays]))
        scale = float(np.max(np.abs(ref))) if ref is not None and ref.size else 1.0
        for n in names:
            r = results[n]
            if isinstance(r, str):
                row["errors"][n] = r
            elif ref is not None:
                row["vs_float64"][n] = _distance(r, ref, scale)
        for a_i, a in enumerate(names):
            for b in names[a_i + 1:]:
                ra, rb = results[a], results[b]
                if not isinstance(ra, str) and not isinstance(rb, str):
                    row["pairs"][f"{a}|{b}"] = _distance(ra, rb, scale)
        rows.append(row)
    return {"devices": names, "metric": "max|a-b| / max|float64 reference|", "rows": rows}


def format_table(report: dict[str, Any]) -> str:
    """The report as a text table: one row per probe, error vs float64 per device, then
    the distance per device pair (``0`` means bit-identical)."""
    names = report["devices"]
    pairs = [f"{a}|{b}" for i, a in enumerate(names) for b in names[i + 1:]]
    head = ["op"] + [f"{n} vs f64" for n in names] + [p.replace("|", " vs ") for p in pairs]
    lines = []
    for row in report["rows"]:
        cells = [row["op"]]
        for n in names:
            cells.append("error" if n in row["errors"] else
                         "-" if n not in row["vs_float64"] else f"{row['vs_float64'][n]:.1e}")
        for p in pairs:
            v = row["pairs"].get(p)
            cells.append("-" if v is None else "0" if v == 0 else f"{v:.1e}")
        lines.append(cells)
    widths = [max(len(r[i]) for r in [head] + lines) for i in range(len(head))]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths))]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in lines]
    for row in report["rows"]:
        for n, e in row["errors"].items():
            out.append(f"  {row['op']} on {n}: {e}")
    out.append(f"metric: {report['metric']}; float32 unit roundoff is 6.0e-08")
    return "\n".join(out)
