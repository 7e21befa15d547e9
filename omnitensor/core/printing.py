"""``repr`` of tensors in torch's format: ``tensor([1.5000, 2.0000], device='opencl:0',
requires_grad=True)``."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes as _dt
from .grad_mode import _mode

_THRESHOLD = 1000
_EDGEITEMS = 3
# torch.set_printoptions: precision (None: torch's 4), sci_mode (None: automatic), linewidth
_OPTIONS: dict[str, Any] = {"precision": 4, "threshold": _THRESHOLD, "edgeitems": _EDGEITEMS,
                            "linewidth": 80, "sci_mode": None}
_PROFILES: dict[str, dict[str, Any]] = {"default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
             "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
             "full": {"precision": 4, "threshold": float("inf"), "edgeitems": 3,
                      "linewidth": 80}}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """torch's ``set_printoptions``: digits after the point, the element count above which
    a tensor is summarised, items kept at each edge, line width, a ``profile``
    (``"default"``, ``"short"``, ``"full"``), and ``sci_mode`` (True/False force it, None
    chooses)."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: unknown profile {profile!r}; expected one of "
                             f"{', '.join(_PROFILES)}")
        _OPTIONS.update(_PROFILES[profile])
    for key, value in (("precision", precision), ("threshold", threshold),
                       ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            if not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"set_printoptions: {key} must be a non-negative number, "
                                 f"got {value!r}")
            _OPTIONS[key] = value
    _OPTIONS["sci_mode"] = sci_mode


def _float_formatter(values: np.ndarray) -> Any:
    p = int(_OPTIONS["precision"])
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return lambda v: _special(v) or f"{v:.{p}f}"
    absvals = np.abs(finite.astype(np.float64))
    nonzero = absvals[absvals > 0]
    all_int = bool(np.all(finite == np.round(finite)))
    amax = float(absvals.max()) if absvals.size else 0.0
    amin = float(nonzero.min()) if nonzero.size else 0.0
    # torch's _Formatter: scientific past a 1000x spread or 1e8 (or below 1e-4 unless every
    # value is an integer), unless sci_mode forces either way
    sci = _OPTIONS["sci_mode"]
    if sci is None:
        sci = bool(amax > 1e8 or (amin and amax / amin > 1000) or
                   (not all_int and amin and amin < 1e-4))
    if all_int and not sci:
        width = max(len(f"{v:.0f}") for v in finite.astype(np.float64)) + 1
        return lambda v: _special(v) or f"{v:.0f}.".rjust(width)
    if sci:
        width = max(len(f"{v:.{p}e}") for v in finite.astype(np.float64))
        return lambda v: _special(v) or f"{v:.{p}e}".rjust(width)
    width = max(len(f"{v:.{p}f}") for v in finite.astype(np.float64))
    return lambda v: _special(v) or f"{v:.{p}f}".rjust(width)


def _special(v: Any) -> str | None:
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


def _format_array(arr: np.ndarray, prefix: str = "tensor(") -> str:
    """The data part of a repr; continuation lines are indented by ``len(prefix)``."""
    threshold = _OPTIONS["threshold"]
    summarize = arr.size > threshold
    kind = arr.dtype.kind
    opts: dict[str, Any] = {"separator": ", ", "prefix": prefix, "threshold": int(threshold)
                            if summarize else arr.size + 1,
                            "edgeitems": int(_OPTIONS["edgeitems"]),
                            # NumPy keeps a column for the closing bracket; torch does not
                            "max_line_width": int(_OPTIONS["linewidth"]) + 1}
    # torch chooses the format from the values it prints (the edges of a summarized tensor)
    shown = _edges(arr, int(_OPTIONS["edgeitems"])) if summarize else arr
    if kind == "f":
        fmt = _float_formatter(shown.astype(np.float64) if arr.dtype == np.float16 else shown)
        opts["formatter"] = {"float_kind": fmt}
    elif kind == "c":
        re = _float_formatter(np.concatenate([shown.real.ravel(), shown.imag.ravel()]))
        opts["formatter"] = {"complex_kind": lambda v: f"{re(v.real).strip()}"
                             f"{'+' if v.imag >= 0 or np.isnan(v.imag) else '-'}"
                             f"{re(abs(v.imag)).strip()}j"}
    elif kind == "b":
        opts["formatter"] = {"bool": lambda v: " True" if v else "False"}
    if arr.ndim == 0:
        fmts = opts.get("formatter", {})
        f = fmts.get("float_kind") or fmts.get("complex_kind") or fmts.get("bool")
        return (f(arr.item()).strip() if f else str(arr.item()))
    text = np.array2string(arr, **opts)
    # torch's summary mark is the element " ...": two spaces after the comma, as NumPy's one
    return text.replace(", ...,", ",  ...,") if summarize else text


def _edges(arr: np.ndarray, edge: int) -> np.ndarray:
    """The first and last ``edge`` entries along every longer axis (what a summary shows)."""
    for axis, n in enumerate(arr.shape):
        if n > 2 * edge:
            idx = np.r_[0:edge, n - edge:n]
            arr = np.take(arr, idx, axis=axis)
    return arr


def _host_values(t: Any) -> np.ndarray:
    from .tensor import host_array  # printing is imported by tensor.py
    arr = host_array(t)
    if t._dtype.compute is not t._dtype:  # bfloat16: formatted as its (exact) float32
        arr = arr.astype(t._dtype.compute.np)
    return arr


def tensor_str(t: Any, indent: int = 0) -> str:
    """torch's ``_tensor_str``: the data part of ``repr(t)`` alone (``[[1., 2.], ...]``),
    continuation lines indented by ``indent`` spaces."""
    if t.numel() == 0:
        return "[]"
    return _format_array(_host_values(t), " " * indent)


def tensor_repr(t: Any) -> str:
    arr = _host_values(t)
    extras = []
    if t._device.type != "cpu":
        extras.append(f"device='{t._device}'")
    default_dtype = {_dt.get_default_dtype(), _dt.int64, _dt.bool_}
    if t.numel() == 0:
        body = "[]"
        if t.ndim != 1:
            extras.insert(0, f"size={tuple(t.shape)}")
    else:
        body = _format_array(arr)
    if t._dtype not in default_dtype or t.numel() == 0 and t._dtype is not _dt.get_default_dtype():
        extras.append(f"dtype=omnitensor.{t._dtype.name}")
    fw = [lv for lv in t.__dict__.get("_fw", ()) if lv in _mode.fw_levels]
    if fw:  # forward-AD tangents, as torch prints them (the innermost level's)
        extras.append("tangent=" + tensor_repr(t.__dict__["_fw"][max(fw)]))
    if t.grad_fn is not None:
        if not t.grad_fn._fw_only:
            extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    return _add_suffixes("tensor(" + body, extras, len("tensor("))


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """torch's ``_add_suffixes``: each suffix after ", ", or on a line of its own when the
    last line would pass the line width (torch's measure of that line, kept as it is)."""
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > _OPTIONS["linewidth"]:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    return "".join(parts) + ")"
