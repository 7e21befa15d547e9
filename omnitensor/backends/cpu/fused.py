"""Fused kernels on ``cpu`` (the ``fused_kernels`` hook of the NumPy backend): Python loop
nests (:func:`omnitensor.kernels.fused.python_kernel`) compiled by numba (no system
compiler).

The rendered source is written to a file in the kernel cache directory
(``$OMNITENSOR_CACHE_DIR/fusion``, default ``~/.cache/omnitensor/fusion``), named by its
hash, and imported from there, so numba's own on-disk cache (``cache=True``) keeps the
machine code across processes: a warm start loads instead of compiling. ``fastmath`` is
off and LLVM does not contract ``a * b + c`` into an fma, so arithmetic chains give NumPy's
bits; math functions (exp, tanh...) may differ from NumPy's SIMD versions in the last ulp.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ...kernels import fused as render
from ...kernels.fused_spec import KernelSpec
from ..fused import FusedLauncher

_LOCK = threading.Lock()
_LOADED: dict[str, Callable[..., Any]] = {}


def cache_dir() -> Path:
    """Where generated kernel sources (and numba's caches next to them) live."""
    root = os.environ.get("OMNITENSOR_CACHE_DIR")
    base = Path(root) if root else Path.home() / ".cache" / "omnitensor"
    return base / "fusion"


def compile_source(src: str) -> Callable[..., Any]:
    """The numba dispatcher ``kernel`` of module source ``src`` (imported from the cache
    directory; compiled, or loaded from numba's cache, on its first call)."""
    digest = hashlib.sha1(src.encode()).hexdigest()[:20]
    fn = _LOADED.get(digest)
    if fn is not None:
        return fn
    with _LOCK:
        fn = _LOADED.get(digest)
        if fn is not None:
            return fn
        d = cache_dir()
        d.mkdir(parents=True, exist_ok=True)
        path = d / f"k_{digest}.py"
        if not path.exists() or path.read_text() != src:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(src)
            os.replace(tmp, path)
        name = f"_omnitensor_fused_{digest}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        fn = mod.kernel
        _LOADED[digest] = fn
        return fn


class Kernel(FusedLauncher):
    """``kernel(*arrays) -> outputs`` for one fused group on NumPy arrays.

    ``arrays`` are the group's arguments (load bases, then in-place buffers); loads are
    flattened (a copy only when not C-contiguous), fresh outputs are allocated, or reused
    between calls when nothing outside the call can see them (``reuse``)."""

    def __init__(self, spec: KernelSpec, n_inputs: int, fresh: list[tuple[tuple, str, bool]],
                 out_args: list[int], inplace_args: list[int],
                 fallback: Callable[..., Any], device: Any = None) -> None:
        super().__init__(spec, n_inputs, fresh, out_args, inplace_args, fallback)
        self.spec = spec
        self.source, self.params = render.python_kernel(spec)
        self.fn = compile_source(self.source)
        self._warm(spec)

    def _warm(self, spec: KernelSpec) -> None:
        """Compile now (or load numba's cached code), on zero-filled arrays of the right
        sizes and types, so the plan's build, not its first replay, pays for it."""
        sizes = [1] * spec.nargs
        dtypes: list[Any] = [np.float32] * spec.nargs
        n_kept = render.work_items(spec)
        for ld in spec.loads:
            need = n_kept if ld.phase == "e" else 1 + sum(
                (d - 1) * s for d, s in zip(spec.shape, ld.strides))
            sizes[ld.arg] = max(sizes[ld.arg], need)
            dtypes[ld.arg] = ld.dtype
        full = int(np.prod(spec.shape, dtype=np.int64))
        for st in spec.stores:
            sizes[st.arg] = max(sizes[st.arg], n_kept if st.phase == "e" else full)
            dtypes[st.arg] = st.dtype
        self.fn(*[np.zeros(n, dt) for n, dt in zip(sizes, dtypes)], *self.params)

    def __call__(self, *arrays: Any) -> Any:
        for k in self.inplace_args:
            a = arrays[k]
            if not (a.flags.c_contiguous and a.flags.writeable):
                return self.fallback(*arrays)
        flat = [a.reshape(-1) for a in arrays]
        shaped = list(arrays)
        for buf in self.fresh_outputs(np.empty):
            flat.append(buf.reshape(-1))
            shaped.append(buf)
        self.fn(*flat, *self.params)
        return self.results(shaped)
