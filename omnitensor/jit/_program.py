"""The saved program: one zip file, no pickle, no Python code.

``program.json`` holds the captured graph (the IR's own JSON: backend primitives and their
constant arguments), which input is which (call argument, parameter, buffer, constant), the
argument signature it was traced for and the structure of the result; ``tensors.safetensors``
holds the parameters, buffers and constant arrays. :func:`read` accepts exactly these two
members and validates every op name, keyword and value of the graph before anything runs:
replay builds Python source from the graph (op names become attribute look-ups, keywords
become keyword arguments), so a name outside the primitive contract is refused there.
"""
from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import math

import numpy as np

from ..backends.base import BINARY, REDUCTIONS, UNARY

__all__ = ["FORMAT", "VERSION", "write", "read", "read_bytes", "ProgramError", "OPS"]

FORMAT = "omnitensor.jit.program"
VERSION = 1
_GRAPH, _TENSORS = "program.json", "tensors.safetensors"

#: every op a saved program may name: the portable backend primitives and the IR's check
OPS = frozenset(UNARY + BINARY + REDUCTIONS + (
    "argmax", "argmin", "cumsum", "cumprod", "astype", "copy", "contiguous", "assign",
    "assign_from_host", "where", "reshape", "permute", "broadcast_to", "index", "flip",
    "concat", "pad", "diagonal", "gather_nd", "scatter_nd", "sort", "argsort",
    "searchsorted", "matmul", "random_bits", "full", "empty", "arange", "from_numpy",
    "check"))
_KWARGS = frozenset(("out", "copy", "generator", "what", "error"))
_DTYPES = frozenset(("float16", "bfloat16", "float32", "float64", "complex64", "complex128",
                     "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                     "bool"))
_KINDS = frozenset(("arg", "param", "buffer", "const"))

#: each dtype's kind (NumPy's letter) and item size
INFO = {"bool": ("b", 1), "int8": ("i", 1), "int16": ("i", 2), "int32": ("i", 4),
         "int64": ("i", 8), "uint8": ("u", 1), "uint16": ("u", 2), "uint32": ("u", 4),
         "uint64": ("u", 8), "float16": ("f", 2), "bfloat16": ("f", 2), "float32": ("f", 4),
         "float64": ("f", 8), "complex64": ("c", 8), "complex128": ("c", 16)}


def is_int(x: Any) -> bool:
    """Whether ``x`` is an int (not a bool)."""
    return isinstance(x, int) and not isinstance(x, bool)


def numel(shape: tuple[int, ...]) -> int:
    """The number of elements of ``shape``."""
    return math.prod(shape)


def fits(value: Any, dtype: str) -> bool:
    """Whether the Python scalar ``value`` is one a primitive of ``dtype`` may take."""
    kind = INFO[dtype][0]
    if isinstance(value, bool):
        return True
    if kind == "b":
        return False
    if is_int(value):
        if kind in "iu":
            bits = 8 * INFO[dtype][1]
            lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if kind == "i" else \
                (0, (1 << bits) - 1)
            return lo <= value <= hi
        return True
    if isinstance(value, float):
        return kind in "fc"
    return isinstance(value, complex) and kind == "c"


class ProgramError(ValueError):
    """The file is not a valid omnitensor.jit program."""


def _to_safetensors(arrays: dict[str, np.ndarray]) -> tuple[bytes, dict[str, str]]:
    from safetensors.numpy import save
    stored, dtypes = {}, {}
    for k, a in arrays.items():
        a = np.array(a, order="C")
        dtypes[k] = a.dtype.name
        if a.dtype.name == "bfloat16":
            a = a.view(np.uint16)           # safetensors' NumPy API has no bfloat16
        stored[k] = a
    return save(stored), dtypes


def write(path: Any, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """Write the program ``meta`` (JSON-able) and its tensors to ``path`` (or a file)."""
    data, dtypes = _to_safetensors(arrays)
    doc = dict(meta, format=FORMAT, version=VERSION, tensor_dtypes=dtypes)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(_GRAPH, json.dumps(doc))
        z.writestr(_TENSORS, data)
    if hasattr(path, "write"):
        path.write(buf.getvalue())
    else:
        with open(path, "wb") as f:
            f.write(buf.getvalue())


def read_bytes(f: Any) -> bytes:
    """The bytes of a path (a regular file only: a FIFO or a device is refused before a
    byte is read) or of a binary stream."""
    from ..serialization.files import CheckpointError, read_checkpoint_bytes
    try:
        return read_checkpoint_bytes(f)[0]
    except CheckpointError as e:
        raise ProgramError(f"omnitensor.jit.load: {e}".replace("a checkpoint", "a program")) \
            from None


def _member(z: zipfile.ZipFile, name: str, budget: list[int]) -> bytes:
    """One member's bytes, refused when it (with the members before it) would decompress
    to more than ``budget[0]`` bytes (a zip bomb): declared sizes are checked before
    inflating, and the inflated stream is cut at the budget whatever it declared."""
    info = z.getinfo(name)
    if info.file_size > budget[0]:
        raise ProgramError(f"omnitensor.jit.load: {name} would decompress to "
                           f"{info.file_size} bytes, over this file's limit (max_bytes="
                           f"{budget[0]}); if you trust the file, pass a larger max_bytes= "
                           f"to omnitensor.jit.load")
    with z.open(info) as stream:
        data = stream.read(budget[0] + 1)
    if len(data) > budget[0]:
        raise ProgramError(f"omnitensor.jit.load: {name} decompresses to more than its "
                           f"limit of {budget[0]} bytes")
    budget[0] -= len(data)
    return data


def read(raw: bytes, max_bytes: int) -> tuple[dict, dict[str, np.ndarray]]:
    """``(meta, arrays)`` of a saved program's bytes, validated; raises
    :class:`ProgramError`. The members may decompress to ``max_bytes`` bytes in all."""
    if raw[:2] == b"\x80\x02" or raw[:1] == b"\x80":
        raise ProgramError("omnitensor.jit.load: this is a pickle file; omnitensor.jit.load "
                           "never unpickles (it runs only programs saved by "
                           "omnitensor.jit.save)")
    try:
        z = zipfile.ZipFile(io.BytesIO(raw))
        names = set(z.namelist())
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError):
        raise ProgramError("omnitensor.jit.load: not an omnitensor.jit program (expected a "
                           "zip file written by omnitensor.jit.save)") from None
    if names != {_GRAPH, _TENSORS}:
        pk = [n for n in names if n.endswith(".pkl")]
        what = (" (a TorchScript archive: its data.pkl is a pickle, which is never loaded)"
                if pk else "")
        raise ProgramError(f"omnitensor.jit.load: not an omnitensor.jit program{what}: "
                           f"expected exactly {_GRAPH} and {_TENSORS}, found "
                           f"{sorted(names)[:6]}")
    budget = [max_bytes]
    try:
        graph_text = _member(z, _GRAPH, budget)
        tensor_bytes = _member(z, _TENSORS, budget)
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError) as e:
        if isinstance(e, ProgramError):
            raise
        raise ProgramError(f"omnitensor.jit.load: the zip file is corrupt ({e})") from None
    try:
        meta = json.loads(graph_text.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise ProgramError(f"omnitensor.jit.load: {_GRAPH} is not valid JSON "
                           f"({str(e)[:200] or type(e).__name__})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ProgramError("omnitensor.jit.load: not an omnitensor.jit program (format tag "
                           "missing)")
    if meta.get("version") != VERSION:
        raise ProgramError(f"omnitensor.jit.load: program version {meta.get('version')!r} "
                           f"is not supported (this omnitensor reads version {VERSION})")
    from safetensors import SafetensorError
    from safetensors.numpy import load
    try:
        arrays = load(tensor_bytes)
    except (SafetensorError, ValueError, OSError, TypeError) as e:
        raise ProgramError(f"omnitensor.jit.load: {_TENSORS} is corrupt ({e})") from None
    dtypes = meta.get("tensor_dtypes", {})
    if not isinstance(dtypes, dict):
        raise ProgramError("omnitensor.jit.load: invalid program: tensor_dtypes")
    for k, a in list(arrays.items()):
        if dtypes.get(k) == "bfloat16":
            if a.dtype != np.uint16:
                raise ProgramError(f"omnitensor.jit.load: invalid program: {k} is marked "
                                   f"bfloat16 but stored as {a.dtype}")
            import ml_dtypes
            arrays[k] = a.view(ml_dtypes.bfloat16)
    return meta, arrays


# ------------------------------------------------------------------------ validation
def _bad(msg: str) -> ProgramError:
    return ProgramError(f"omnitensor.jit.load: invalid program: {msg}")


def _check_value(v: Any) -> None:
    from ..compiler.ir import Value
    if not isinstance(v, Value):
        return
    if not (isinstance(v.id, int) and v.id >= 0 and isinstance(v.dtype, str)
            and v.dtype in _DTYPES and all(isinstance(s, int) and s >= 0 for s in v.shape)):
        raise _bad(f"malformed value {v!r}")


def _check_arg(a: Any, depth: int = 0) -> None:
    from ..compiler.ir import DTypeName, Value
    if depth > 8:
        raise _bad("arguments nested too deeply")
    if isinstance(a, Value):
        _check_value(a)
    elif isinstance(a, DTypeName):
        if str(a) not in _DTYPES:
            raise _bad(f"unknown dtype {str(a)!r}")
    elif isinstance(a, (tuple, list)):
        for x in a:
            _check_arg(x, depth + 1)
    elif isinstance(a, slice):
        for x in (a.start, a.stop, a.step):
            if not (x is None or isinstance(x, int)):
                raise _bad(f"malformed slice {a!r}")
    elif not isinstance(a, (bool, int, float, str, type(None))):
        raise _bad(f"argument of type {type(a).__name__}")


def validate(graph: Any) -> None:
    """Refuse any graph that names something outside the primitive contract."""
    for inp in graph.inputs:
        _check_value(inp.value)
        if inp.kind not in _KINDS or not isinstance(inp.name, str):
            raise _bad(f"input kind {inp.kind!r}")
    for n in graph.nodes:
        if n.op not in OPS:
            raise _bad(f"op {n.op!r} is not a portable backend primitive")
        if not isinstance(n.kwargs, dict) or not set(n.kwargs) <= _KWARGS:
            raise _bad(f"op {n.op} has keyword(s) {sorted(n.kwargs)}")
        if n.kwargs.get("generator", "default") != "default":
            raise _bad("a random op draws from a user Generator, which a file cannot carry")
        if n.device not in (None, "cpu"):
            raise _bad(f"node device {n.device!r}")
        _check_arg(n.args)
        _check_arg(tuple(v for k, v in n.kwargs.items() if k not in ("what", "error")))
        if not isinstance(n.kwargs.get("what", ""), str) or \
                not isinstance(n.kwargs.get("error", ""), str):
            raise _bad("check message")
        for v in n.outputs:
            _check_value(v)
        if n.inplace_of is not None:
            _check_value(n.inplace_of)
    for v in graph.outputs:
        _check_value(v)
