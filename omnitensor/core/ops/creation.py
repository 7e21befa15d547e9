"""Creating tensors: from data, filled, ranges, identity, grids, DLPack."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...backends import registry
from ...errors import DTypeError
from .. import dtypes as _dt
from .. import oom as _oom
from ..device import (Device, check_dtype, device as as_device, get_default_device,  # noqa: F401
                      resolve_device)
from ..shape_util import as_shape
from ..tensor import Tensor, _make, host_array
from .ternary import where

_SCALARS = (bool, int, float, complex)


_dtype_checked: set = set()


def _checked(dev: Device, dtype: _dt.DType) -> None:
    key = (dev, dtype)
    if key not in _dtype_checked:
        check_dtype(dev, dtype)
        _dtype_checked.add(key)


def from_host(array: np.ndarray, dev: Device, dtype: _dt.DType | None = None,
              requires_grad: bool = False) -> Tensor:
    """Put a host array on ``dev`` (no copy on cpu when the dtype already matches)."""
    d = dtype or _dt.as_dtype(array.dtype)
    _checked(dev, d)
    if array.dtype != d.np:
        array = array.astype(d.np)
    try:
        data = dev.backend.from_numpy(array, dev.index)
    except Exception as e:  # an allocation failure becomes OutOfMemoryError
        if _oom.is_out_of_memory(e):
            raise _oom.translate(e, dev, array.nbytes) from None
        raise
    t = _make(data, dev, d)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _python_kind_dtype(arr: np.ndarray) -> _dt.DType:
    """The dtype torch gives nested Python data: floats -> default float."""
    k = arr.dtype.kind
    if k == "f":
        return _dt.get_default_dtype()
    if k == "c":
        return _dt.get_default_dtype().to_complex()
    if k in "iu":
        return _dt.int64 if k == "i" or arr.dtype.itemsize < 8 else _dt.uint64
    if k == "b":
        return _dt.bool_
    raise DTypeError(f"cannot make a tensor from data of NumPy dtype {arr.dtype} (an "
                     f"object or string array?); give numbers, lists of numbers or arrays")


def _host_array(data: Any) -> tuple[np.ndarray, _dt.DType]:
    """(host array, natural dtype) of any array-like input."""
    if isinstance(data, Tensor):
        return host_array(data), data._dtype
    if isinstance(data, np.ndarray):
        return data, _dt.as_dtype(data.dtype)
    if isinstance(data, np.generic):
        arr = np.asarray(data)
        return arr, _dt.as_dtype(arr.dtype)
    if isinstance(data, (list, tuple)) or isinstance(data, _SCALARS):
        try:
            arr = np.asarray(data)
        except (ValueError, TypeError) as e:
            what = "ragged nested sequences (the sub-sequences have different lengths)" \
                if "inhomogeneous" in str(e) else f"{type(data).__name__}: {e}"
            raise ValueError(f"cannot make a tensor from {what}") from None
        if arr.dtype == object:
            raise ValueError("cannot make a tensor from ragged nested sequences (the "
                             "sub-sequences have different lengths)")
        if any(isinstance(x, np.ndarray) for x in (data if isinstance(data, (list, tuple))
                                                   else ())):
            return arr, _dt.as_dtype(arr.dtype)
        return arr, _python_kind_dtype(arr)
    if hasattr(data, "__dlpack__") and not hasattr(data, "__array__"):
        arr = np.from_dlpack(data)
        return arr, _dt.as_dtype(arr.dtype)
    try:
        arr = np.asarray(data)
    except Exception as e:  # noqa: BLE001
        raise TypeError(f"cannot make a tensor from {type(data).__name__}: {e}") from None
    if arr.dtype == object:
        raise TypeError(f"cannot make a tensor from {type(data).__name__}")
    return arr, _dt.as_dtype(arr.dtype)


def tensor(data: Any, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, scalars, arrays, tensors).
    Python floats become the default float dtype, ints int64, bools bool (torch)."""
    dev = resolve_device(device if device is not None else
                         (data.device if isinstance(data, Tensor) else None))
    arr, natural = _host_array(data)
    d = _dt.as_dtype(dtype) if dtype is not None else natural
    if d.kind in "iu" and arr.dtype.kind in "iuf" and arr.size and \
            isinstance(data, (list, tuple, int, float)):
        _check_python_ints_fit(arr, d)
    arr = np.array(arr, dtype=d.np, copy=True)
    return from_host(arr, dev, d, requires_grad)


def _check_python_ints_fit(arr: np.ndarray, d: _dt.DType) -> None:
    """torch's rule for Python numbers given an integer dtype: out of range is an error
    (``tensor([300], dtype=uint8)``), never a silent wrap; unsigned types also take
    negatives down to ``-max`` (C's wrap-around, which torch allows: -1 -> 255)."""
    info = np.iinfo(d.np)
    lo = -int(info.max) if d.kind == "u" else int(info.min)
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise RuntimeError(f"value cannot be converted to type {d.name} without overflow "
                           f"(the data holds inf or nan)")
    small, big = arr.min(), arr.max()
    if small < lo or big > info.max:
        bad = small if small < lo else big
        raise RuntimeError(f"value cannot be converted to type {d.name} without overflow: "
                           f"{bad.item()!r} is outside [{lo}, {int(info.max)}]")


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None,
            copy: bool | None = None) -> Tensor:
    """Array API ``asarray``: reuse ``obj`` when it already is a tensor of that dtype and
    device (unless ``copy=True``); share memory with NumPy input on ``cpu`` when allowed."""
    d = _dt.as_dtype(dtype) if dtype is not None else None
    if isinstance(obj, Tensor):
        dev = obj._device if device is None else resolve_device(device)
        if dev is obj._device and (d is None or d is obj._dtype):
            return obj.clone().detach() if copy else obj
        if copy is False:
            raise ValueError("asarray(copy=False): a copy is needed to change the device or "
                             "dtype")
        out = obj.to(dev)
        out = out if d is None else out.to(d)
        return out.detach()
    if _device_dlpack(obj):
        t = from_dlpack(obj, device=device, copy=copy)
        if d is None or d is t._dtype:
            return t
        if copy is False:
            raise ValueError("asarray(copy=False): a copy is needed to change the dtype")
        return t.to(d)
    dev = resolve_device(device)
    arr, natural = _host_array(obj)
    d = d or natural
    if copy is False and (dev.type != "cpu" or arr.dtype != d.np
                          or not isinstance(obj, np.ndarray)):
        raise ValueError(f"asarray(copy=False): {type(obj).__name__} cannot be used on "
                         f"{dev} as {d.name} without a copy")
    if copy or (dev.type == "cpu" and not isinstance(obj, np.ndarray)):
        arr = np.array(arr, dtype=d.np, copy=True)
    return from_host(arr, dev, d)


def from_numpy(array: np.ndarray) -> Tensor:
    """A cpu tensor sharing memory with a NumPy array (torch's from_numpy)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    return from_host(array, as_device("cpu"))


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """Import an array through DLPack: zero-copy where the producer's memory can be this
    device's; ``copy=True`` always copies, ``copy=False`` never does (BufferError when the
    requested ``device`` needs a copy), None copies only when needed."""
    want = None if device is None else resolve_device(device)
    if isinstance(x, Tensor):
        t = x
    else:
        t = _import_dlpack(x, want, copy)
    if want is not None and want is not t._device:
        if copy is False:
            raise BufferError(f"from_dlpack(copy=False): the array is on {t.device}; moving "
                              f"it to {want} needs a copy (pass copy=None or copy=True)")
        return t.to(want)  # a new buffer: copy=True is satisfied
    if copy and (isinstance(x, Tensor) or t._device.type != "cpu"):
        return t.clone().detach()  # host imports below already copied when asked
    return t


def _import_dlpack(x: Any, want: Any, copy: bool | None) -> Tensor:
    """x as a tensor on the device its memory lives on (a host copy when ``want`` is cpu
    and the producer can export one)."""
    dl_dev = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
    host_wanted = want is not None and want.type == "cpu"
    if dl_dev in (1, 3) or host_wanted:  # kDLCPU, kDLCUDAHost, or a host copy requested
        kw: dict[str, Any] = {} if dl_dev in (1, 3) else {"device": "cpu"}
        try:
            arr = np.from_dlpack(x, copy=copy, **kw)
        except TypeError:  # a producer without the 2023.12 keywords
            arr = np.from_dlpack(x)
            if copy:
                arr = np.array(arr)
        return from_host(arr, as_device("cpu"))
    for type_ in ("cuda", "sycl"):
        be, _why = registry.try_backend(type_)
        if be is not None and be.accepts_dlpack_device(dl_dev):
            data, index = be.from_dlpack(x)
            return _make(data, as_device(type_, index), _dt.as_dtype(data.dtype))
    raise BufferError(f"from_dlpack: no installed backend accepts DLPack device type "
                      f"{dl_dev}; convert to NumPy first")


def _device_dlpack(obj: Any) -> bool:
    """Whether obj is a foreign array in device memory (CuPy, dpnp, torch.cuda...) that
    only DLPack can import without a host round trip."""
    if isinstance(obj, (np.ndarray, np.generic, list, tuple)) or isinstance(obj, _SCALARS):
        return False
    try:
        return hasattr(obj, "__dlpack__") and obj.__dlpack_device__()[0] not in (1, 3)
    except Exception:  # noqa: BLE001 - a broken producer: let the host path report it
        return False


# -------------------------------------------------------------------- filled tensors
def _creation(shape: tuple, dtype: _dt.DType, device: Any, requires_grad: bool,
              fill: Any) -> Tensor:
    dev = resolve_device(device)
    _checked(dev, dtype)
    be = dev.backend
    if _oom.nbytes(shape, dtype.itemsize) >= 1 << 62:  # NumPy: a ValueError, torch: overflow
        raise _oom.out_of_memory(str(dev), _oom.nbytes(shape, dtype.itemsize),
                                 why="larger than any address space")
    try:
        data = be.empty(shape, dtype.np, dev.index) if fill is None else \
            be.full(shape, fill, dtype.np, dev.index)
    except Exception as e:  # an allocation failure becomes OutOfMemoryError
        if _oom.is_out_of_memory(e):
            raise _oom.translate(e, dev, _oom.nbytes(shape, dtype.itemsize)) from None
        raise
    t = _make(data, dev, dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


_NO_SHAPE: Any = object()


def _shape_of(shape: Any, more: tuple, op: str) -> tuple[int, ...]:
    """The Array API's ``shape`` argument, or torch's ``zeros(2, 3)`` spelling; a shape is
    required (torch: ``ones()`` is a TypeError; ``ones(())`` is 0-d)."""
    if shape is _NO_SHAPE:
        raise TypeError(f'{op}() missing 1 required positional arguments: "size"')
    return as_shape((shape,) + tuple(more), op=op)


def _dtype_or_default(dtype: Any) -> _dt.DType:
    return _dt.get_default_dtype() if dtype is None else _dt.as_dtype(dtype)


def zeros(shape: Any = _NO_SHAPE, *size: Any, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """A tensor of zeros; ``zeros(2, 3)`` and ``zeros((2, 3))`` both work."""
    d = _dtype_or_default(dtype)
    return _creation(_shape_of(shape, size, "zeros"), d, device, requires_grad,
                     d.np.type(0).item())


def ones(shape: Any = _NO_SHAPE, *size: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ones."""
    d = _dtype_or_default(dtype)
    return _creation(_shape_of(shape, size, "ones"), d, device, requires_grad,
                     d.np.type(1).item())


def empty(shape: Any = _NO_SHAPE, *size: Any, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor."""
    return _creation(_shape_of(shape, size, "empty"), _dtype_or_default(dtype), device,
                     requires_grad, None)


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value``; the dtype follows the value when not given."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if isinstance(fill_value, np.generic):
        fill_value = fill_value.item()
    d = _dt.as_dtype(dtype) if dtype is not None else _dt.result_type(fill_value)
    value = _cast_scalar(fill_value, d)
    return _creation(_shape_of(shape, (), "full"), d, device, requires_grad, value)


def _cast_scalar(value: Any, d: _dt.DType) -> Any:
    if d.kind == "b":
        return bool(value)
    if d.kind in "iu":
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"cannot fill an integer tensor with {value}")
        return int(value)
    if d.kind == "f":
        if isinstance(value, complex):
            raise DTypeError(f"cannot fill a {d.name} tensor with the complex {value}")
        return float(value)
    return complex(value)


def _like(x: Tensor, dtype: Any, device: Any) -> tuple[_dt.DType, Any]:
    return (x._dtype if dtype is None else _dt.as_dtype(dtype),
            x._device if device is None else device)


def zeros_like(x: Tensor, /, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    d, dev = _like(x, dtype, device)
    return _creation(x.shape, d, dev, requires_grad, _cast_scalar(0, d))


def ones_like(x: Tensor, /, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    d, dev = _like(x, dtype, device)
    return _creation(x.shape, d, dev, requires_grad, _cast_scalar(1, d))


def empty_like(x: Tensor, /, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    d, dev = _like(x, dtype, device)
    return _creation(x.shape, d, dev, requires_grad, None)


def full_like(x: Tensor, /, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    d, dev = _like(x, dtype, device)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _creation(x.shape, d, dev, requires_grad, _cast_scalar(fill_value, d))


# ------------------------------------------------------------------------- ranges
def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """``[start, stop)`` with ``step``; ``arange(n)`` counts from 0. Integer arguments give
    int64, any float argument the default float dtype."""
    if stop is None:
        start, stop = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, stop, step)]
    start, stop, step = vals
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    if dtype is None:
        d = _dt.get_default_dtype() if any(isinstance(v, float) for v in vals) else _dt.int64
    else:
        d = _dt.as_dtype(dtype)
    if d.kind in "iu":  # an integer range takes integer bounds and step (torch truncates)
        start, stop, step = (_trunc(v) for v in (start, stop, step))
        if step == 0:
            raise ValueError("arange: step must be nonzero (after truncation to the integer "
                             "dtype)")
    n = max(0, math.ceil((stop - start) / step))
    dev = resolve_device(device)
    _checked(dev, d)
    start_c = _cast_scalar(start, d)
    step_c = _cast_scalar(step, d)
    t = _make(dev.backend.arange(start_c, step_c, n, d.np, dev.index), dev, d)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _trunc(v: Any) -> Any:
    """A float bound or step of an integer range, truncated toward zero (torch); an
    infinite one stays (the size check refuses it)."""
    return int(v) if isinstance(v, float) and math.isfinite(v) else v


def _steps(num: Any) -> int:
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)):
        raise TypeError(f"linspace/logspace: the number of steps must be an int, got "
                        f"{type(num).__name__}")
    return int(num)


def _bound(v: Any, name: str) -> Any:
    """A linspace/logspace end as a Python number (a bool as its int, which the
    arithmetic below may subtract); anything else is refused, even for 0 steps (torch)."""
    if isinstance(v, Tensor) and v.ndim == 0:
        v = v.item()
    if isinstance(v, np.generic):
        v = v.item()
    if not isinstance(v, (int, float, complex)):
        raise TypeError(f"linspace(): argument '{name}' must be Number, not "
                        f"{type(v).__name__}")
    return int(v) if isinstance(v, bool) else v


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None,
             endpoint: bool = True, requires_grad: bool = False) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` (inclusive when
    ``endpoint``), computed from both ends for accuracy, as torch does; an integer dtype
    truncates the ends first, as torch does."""
    num = _steps(num)
    start, stop = _bound(start, "start"), _bound(stop, "end")
    if num < 0:
        raise ValueError(f"linspace: number of steps must be non-negative, got {num}")
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    if dtype is None:
        d = _dt.get_default_dtype().to_complex() if is_complex else _dt.get_default_dtype()
    else:
        d = _dt.as_dtype(dtype)
    if d.kind in "iu":
        start, stop = _trunc(start), _trunc(stop)
    if not endpoint:
        # exactly the first num values of the num+1 grid with endpoint (Array API)
        return linspace(start, stop, num + 1, dtype=d, device=device,
                        requires_grad=requires_grad)[:num]
    work = d if d.kind in "fc" else _dt.float64 if resolve_device(device).supports_dtype(
        _dt.float64) else _dt.float32
    if num == 0:
        return empty(0, dtype=d, device=device)
    step = (stop - start) / (num - 1) if num > 1 else 0
    i = arange(num, dtype=work, device=device)
    if num > 1:
        out = where(i < num // 2, i * step + start, stop - (num - 1 - i) * step)
    else:
        out = i * step + start
    out = out if out._dtype is d else out.to(d)
    if requires_grad:
        out.requires_grad_(True)
    return out


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)`` (torch): the powers computed in floating
    point, then cast to ``dtype`` (an integer dtype truncates the ends first and the
    powers after, as torch does)."""
    d = _dtype_or_default(dtype)
    if d.kind in "iu":
        start, end = _trunc(start), _trunc(end)
    dev = resolve_device(device)
    work = d if d.kind in "fc" else _dt.float64 if dev.supports_dtype(_dt.float64) else \
        _dt.float32
    exponents = linspace(start, end, steps, dtype=work, device=dev)
    out = full_like(exponents, base) ** exponents
    out = out if out._dtype is d else out.to(d)
    if requires_grad:
        out.requires_grad_(True)
    return out


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None,
        device: Any = None, requires_grad: bool = False) -> Tensor:
    """Ones on the ``k``-th diagonal, zeros elsewhere."""
    m = n_rows if n_cols is None else n_cols
    for what, v in (("n", n_rows), ("m", m)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ValueError(f"eye: {what} must be an integer >= 0, got {v!r}")
    d = _dtype_or_default(dtype)
    rows = arange(n_rows, device=device).reshape(n_rows, 1)
    cols = arange(m, device=device).reshape(1, m)
    out = (rows + k == cols).to(d)
    if requires_grad:
        out.requires_grad_(True)
    return out


def meshgrid(*arrays: Tensor, indexing: str = "xy") -> list[Tensor]:
    """Coordinate grids from 1-D tensors. The default indexing is the Array API's 'xy'
    (torch's function defaults to 'ij': pass ``indexing='ij'`` for torch behaviour)."""
    if len(arrays) == 1 and isinstance(arrays[0], (list, tuple)):
        arrays = tuple(arrays[0])
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    if not arrays:
        return []
    n = len(arrays)
    for a in arrays:
        if a.ndim != 1:
            raise ValueError(f"meshgrid: expected 1-D tensors, got {a.ndim}-D")
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        view = [1] * n
        axis = i
        if indexing == "xy" and n >= 2 and i < 2:
            axis = 1 - i
        view[axis] = a.shape[0]
        out.append(a.reshape(*view).expand(*shape))
    return out


def tril(x: Tensor, /, diagonal: int = 0, *, k: int | None = None) -> Tensor:
    """The lower triangle of the last two axes (``k``/``diagonal`` shifts it)."""
    return _triangle(x, diagonal if k is None else k, lower=True)


def triu(x: Tensor, /, diagonal: int = 0, *, k: int | None = None) -> Tensor:
    """The upper triangle of the last two axes."""
    return _triangle(x, diagonal if k is None else k, lower=False)


def _triangle(x: Tensor, k: int, lower: bool) -> Tensor:
    if x.ndim < 2:
        raise ValueError(f"{'tril' if lower else 'triu'} needs at least 2 dimensions, got "
                         f"{x.ndim}")
    n, m = x.shape[-2:]
    rows = arange(n, device=x.device).reshape(n, 1)
    cols = arange(m, device=x.device).reshape(1, m)
    keep = (cols - rows <= k) if lower else (cols - rows >= k)
    zero = False if x._dtype is _dt.bool_ else 0
    return where(keep, x, zero)


def _index_dtype(dtype: Any) -> _dt.DType:
    d = _dt.int64 if dtype is None else _dt.as_dtype(dtype)
    if d not in (_dt.int32, _dt.int64):
        raise _dt.DTypeError(f"tril_indices/triu_indices: dtype must be int32 or int64, "
                             f"got {d.name}")
    return d


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None, layout: Any = None) -> Tensor:
    """Coordinates of the lower triangle, shape (2, N) (torch; int64 unless ``dtype``)."""
    r, c = np.tril_indices(row, offset, col)
    return tensor(np.stack([r, c]).astype(np.int64), device=device,
                  dtype=_index_dtype(dtype))


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None, layout: Any = None) -> Tensor:
    """Coordinates of the upper triangle, shape (2, N) (torch; int64 unless ``dtype``)."""
    r, c = np.triu_indices(row, offset, col)
    return tensor(np.stack([r, c]).astype(np.int64), device=device,
                  dtype=_index_dtype(dtype))
