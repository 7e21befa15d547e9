"""Loop nests for a fused kernel, rendered as Python source for numba or as C for OpenCL/CUDA.

``omnitensor.compiler.fusion`` plans the groups (:class:`~.fused_spec.KernelSpec`); the
backends' ``fused_kernels`` launchers render them here and compile and launch the text.

Both follow one schedule: an elementwise kernel walks its loop space in C order; a reduce
kernel walks the kept axes outside and the reduced axes inside, accumulates in a scalar
(float32 sums in double), then runs the epilogue once per kept position. Every argument is
a flat C-contiguous array; a load's index is ``sum(i_d * stride_d)`` with the strides baked
in as constants (the loop space and strides are fixed by the capture's guards).

Every per-element expression (ops, casts, ``where``, constants, loads and stores, the
prelude and helper functions) comes from :mod:`omnitensor.kernels.scalar`, the table the
eager kernels use; this module only writes loops and reductions around them. A GEMM
kernel's loops are :mod:`omnitensor.kernels.gemm`'s: its ops become that kernel's
:class:`~omnitensor.kernels.gemm.Epilogue`, rendered here like any other kernel's body.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from . import gemm, scalar
from .ctype import BY_NP
from .dialect import DIALECTS, Dialect, Language
from .fused_spec import KernelSpec, Load, Op, Reduce, c_strides


def _index(idx_vars: list[str], strides: tuple[int, ...] | list[int]) -> str:
    terms = []
    for v, s in zip(idx_vars, strides):
        if s == 0:
            continue
        terms.append(v if s == 1 else f"{v} * {s}")  # s an int, or a parameter's name
    return " + ".join(terms) if terms else "0"


class _Body:
    """Shared bookkeeping: which temporaries and loads each phase defines."""

    def __init__(self, spec: KernelSpec, dialect: Language, generic: bool = False) -> None:
        self.spec = spec
        self.d = dialect
        nd = len(spec.shape)
        self.kept = [a for a in range(nd) if not spec.reduced[a]]
        self.red = [a for a in range(nd) if spec.reduced[a]]
        self.ivars = [f"i{a}" for a in range(nd)]
        full = c_strides(spec.shape)
        kdims = tuple(spec.shape[a] for a in self.kept)
        kstr = dict(zip(self.kept, c_strides(kdims)))
        #: (name, value) of the integer parameters a generic kernel takes after its arrays
        self.params: list[tuple[str, int]] = []
        self.loads = list(spec.loads)
        if not generic:
            self.dims: list = list(spec.shape)
            self.full: list = list(full)
            self.kstr: dict = kstr
            return
        # generic: sizes and strides are arguments, so groups that differ only in shape
        # share one compiled kernel; the innermost stride stays literal (0 or 1) so the
        # inner loop still vectorizes
        self.dims = [self._param(f"n{a}", spec.shape[a]) for a in range(nd)]
        self.full = [1 if a == nd - 1 else self._param(f"f{a}", full[a]) for a in range(nd)]
        last_kept = self.kept[-1] if self.kept else None
        self.kstr = {a: 1 if a == last_kept else self._param(f"k{a}", kstr[a])
                     for a in self.kept}
        for j, ld in enumerate(spec.loads):
            if ld.phase != "p":
                continue
            st = tuple(s if (a == nd - 1 and s in (0, 1)) or s == 0 else
                       self._param(f"s{j}_{a}", s) for a, s in enumerate(ld.strides))
            self.loads[j] = Load(ld.arg, ld.dtype, ld.phase, st)  # type: ignore[arg-type]

    def _param(self, name: str, value: int) -> str:
        self.params.append((name, int(value)))
        return name

    def ref(self, r: tuple, dtype: str) -> str:
        if r[0] == "l":
            return f"l{r[1]}"
        if r[0] == "t":
            return f"t{r[1]}"
        return scalar.literal(r[1], dtype, self.d)

    def load_index(self, ld: Load) -> str:
        if ld.phase == "e":
            return "ko"
        return _index(self.ivars, ld.strides)

    def phase_lines(self, phase: str, decl: Callable[[str, str, str], str],
                    load: Callable[[Load, str], str], store: Callable[[int, str, str], str]
                    ) -> list[str]:
        """Loads, ops and stores of ``phase`` as statements."""
        sp = self.spec
        lines = []
        for j, ld in enumerate(self.loads):
            if ld.phase == phase:
                lines.append(decl(ld.dtype, f"l{j}", load(ld, self.load_index(ld))))
        for k, st in enumerate(sp.steps):
            if isinstance(st, Op) and st.phase == phase:
                op_dtype = st.dtype if st.op == "where" else st.in_dtype
                xs = []
                for n, r in enumerate(st.operands):
                    xs.append(self.ref(r, "bool" if st.op == "where" and n == 0 else op_dtype))
                lines.append(decl(st.dtype, f"t{k}", _op_expr(st, xs, self.d)))
        idx = "ko" if phase == "e" else _index(self.ivars, self.full)
        for s in sp.stores:
            if s.phase == phase:
                lines.append(store(s.arg, idx, self.ref(s.ref, s.dtype)))
        return lines

    def reduce_step(self) -> tuple[int, Reduce] | None:
        for k, st in enumerate(self.spec.steps):
            if isinstance(st, Reduce):
                return k, st
        return None


def _op_expr(st: Op, xs: list[str], d: Language) -> str:
    """The expression of fused op ``st`` over operand expressions ``xs`` in dialect ``d``."""
    if st.op == "astype":
        e = scalar.cast(st.in_dtype, st.dtype, xs[0], d)
    elif st.op == "where":
        e = scalar.where(xs[0], xs[1], xs[2], d)
    else:
        e = scalar.expr(st.op, st.in_dtype, xs, d)
    if e is None:  # table.supports admits only what every dialect renders
        raise ValueError(f"{st.op} on {st.in_dtype} has no {d.name} expression")
    return e


def _dialect(d: str | Dialect) -> Dialect:
    return DIALECTS[d] if isinstance(d, str) else d


def _dtypes(specs: list[KernelSpec]) -> list[str]:
    """The operand dtypes of every op of ``specs``, in first-use order."""
    out: dict[str, None] = {}
    for sp in specs:
        for st in sp.steps:
            if isinstance(st, Op):
                out.setdefault(st.in_dtype)
                out.setdefault(st.dtype)
    return list(out)


def _helpers(specs: list[KernelSpec], d: Language) -> str:
    """The helper functions the expressions of ``specs`` may call, each text once."""
    texts: dict[str, None] = {}
    for dt in _dtypes(specs):
        h = scalar.helpers(dt, d)
        if h:
            texts.setdefault(h)
    return "".join(texts)


# --------------------------------------------------------------------- numba (Python)
def python_source(spec: KernelSpec, name: str = "kernel") -> str:
    """A module defining ``name(a0, a1, ...)`` over flat NumPy arrays, for numba."""
    return python_kernel(spec, name, generic=False)[0]


def python_kernel(spec: KernelSpec, name: str = "kernel", generic: bool = True
                  ) -> tuple[str, tuple[int, ...]]:
    """(module source, integer arguments): ``name(a0, ..., p0, ...)`` over flat NumPy
    arrays for numba; ``generic`` passes sizes and strides as the integer arguments."""
    b = _Body(spec, scalar.NUMBA, generic)
    args = ", ".join([f"a{i}" for i in range(spec.nargs)] + [p for p, _v in b.params])
    # NumPy semantics: no fast-math, division by zero gives inf/nan (error_model numpy)
    out = [scalar.prelude(scalar.NUMBA) + _helpers([spec], scalar.NUMBA), "",
           "@numba.njit(cache=True, error_model='numpy', fastmath=False, nogil=True)",
           f"def {name}({args}):"]

    def decl(dtype: str, v: str, e: str) -> str:
        return f"{v} = {e}"

    def load(ld: Load, idx: str) -> str:
        return scalar.load(ld.dtype, f"a{ld.arg}", idx, scalar.NUMBA)

    def store(arg: int, idx: str, v: str) -> str:
        return f"a{arg}[{idx}] = {v}"

    ind = "    "
    body: list[str] = []
    red = b.reduce_step()
    if red is None:
        for a in range(len(b.dims)):
            body.append(ind * (1 + a) + f"for i{a} in range({b.dims[a]}):")
        depth = 1 + len(b.dims)
        body += [ind * depth + ln for ln in b.phase_lines("p", decl, load, store)]
    else:
        k, r = red
        depth = 1
        for a in b.kept:
            body.append(ind * depth + f"for i{a} in range({b.dims[a]}):")
            depth += 1
        body.append(ind * depth + "ko = " + _index([f"i{a}" for a in b.kept],
                                                   [b.kstr[a] for a in b.kept]))
        acc_t = "float64" if r.op == "sum" else r.dtype
        init = {"sum": "0.0", "max": "-np.inf", "min": "np.inf"}[r.op]
        body.append(ind * depth + f"acc = np.{acc_t}({init})")
        inner = depth
        for a in b.red:
            body.append(ind * inner + f"for i{a} in range({b.dims[a]}):")
            inner += 1
        body += [ind * inner + ln for ln in b.phase_lines("p", decl, load, store)]
        src = b.ref(r.operand, r.dtype)
        if r.op == "sum":
            body.append(ind * inner + f"acc += np.float64({src})")
        else:
            cmp = ">" if r.op == "max" else "<"
            body.append(ind * inner + f"v = {src}")
            body.append(ind * inner + f"if v {cmp} acc or v != v:")
            body.append(ind * (inner + 1) + "acc = v")
        body.append(ind * depth + f"t{k} = np.{r.dtype}(acc)")
        body += [ind * depth + ln for ln in b.phase_lines("e", decl, load, store)]
    src = "\n".join(out + (body or [ind + "pass"])) + "\n"
    return src, tuple(v for _p, v in b.params)


# ------------------------------------------------------------------- OpenCL C / CUDA C
def c_program(specs: list[KernelSpec], dialect: str | Dialect = "opencl") -> str:
    """One program holding kernels ``fused0``, ``fused1``... for ``specs``: one build (a
    PoCL or Intel OpenCL build costs ~0.2 s whatever its size) for a whole plan."""
    parts = [c_source(sp, f"fused{i}", dialect, prelude=False) for i, sp in enumerate(specs)]
    return _c_head(specs, _dialect(dialect)) + "\n".join(parts)


def _c_head(specs: list[KernelSpec], d: Dialect) -> str:
    """The prelude (FP_CONTRACT OFF: NumPy rounds a*b+c twice; fp64), the helpers, and
    the GEMM kernels' batch helper when there is one."""
    head = scalar.prelude(d) + _helpers(specs, d)
    if any(sp.gemm is not None for sp in specs):
        head += gemm.batch_helper(d)
    return head


def _array_params(spec: KernelSpec, d: Dialect) -> list[str]:
    """The kernel's array parameters ``a<i>`` then their element offsets ``o<i>``."""
    types = _arg_types(spec, d)
    stored = {s.arg for s in spec.stores}
    args = []
    for i in range(spec.nargs):
        const = "const " if i not in stored else ""
        args.append(f"{d.glob}{const}{types[i]} * {d.restrict} a{i}")
    # element offsets of views into their buffers (CLArray.offset), applied once
    return args + [f"long o{i}" for i in range(spec.nargs)]


def uses_fast_gemm(spec: KernelSpec, d: Dialect) -> bool:
    """Whether GEMM kernel ``spec`` is rendered on the register-blocked kernel (packed
    operands) rather than the generic one, by the rule the eager matmul follows."""
    mm = spec.gemm
    assert mm is not None
    m, n = spec.shape
    return gemm.uses_fast(BY_NP[np.dtype(mm.dtype)], m * n * mm.k, d)


def gemm_kernel(spec: KernelSpec, name: str, d: Dialect) -> str:
    """GEMM kernel ``spec`` as kernel ``name``: :mod:`omnitensor.kernels.gemm`'s product
    kernel with the spec's ops as its epilogue (element ``(ot_i, ot_j)``, ``t0`` the
    product; the arrays follow the product kernel's own parameters)."""
    mm = spec.gemm
    assert mm is not None
    b = _Body(spec, d)
    b.ivars = ["ot_i", "ot_j"]
    stored = {s.arg: s.dtype for s in spec.stores}

    def decl(dtype: str, v: str, e: str) -> str:
        return f"{scalar.compute_type(dtype, d)} {v} = {e};"

    def load(ld: Load, idx: str) -> str:
        return scalar.load(ld.dtype, f"a{ld.arg}", idx, d)

    def store(arg: int, idx: str, v: str) -> str:
        st = scalar.store(stored[arg], f"a{arg}", idx, v, d)
        return st if st.endswith(";") else st + ";"
    lines = [decl(mm.dtype, "t0", "ot_v")] + b.phase_lines("p", decl, load, store)
    ep = gemm.Epilogue(tuple(_array_params(spec, d)),
                       " ".join(f"a{i} += o{i};" for i in range(spec.nargs)), "\n".join(lines))
    t = BY_NP[np.dtype(mm.dtype)]
    make = gemm.fast_kernel if uses_fast_gemm(spec, d) else gemm.generic_kernel
    return make(t, d, name, ep)


def c_source(spec: KernelSpec, name: str, dialect: str | Dialect = "opencl",
             prelude: bool = True) -> str:
    """One kernel ``name`` over flat buffers, one work-item per output position (kept
    position for a reduce kernel; a contiguous chunk of ``chunk`` positions for an
    elementwise one, as the OpenCL backend's own kernels, which PoCL vectorizes)."""
    d = _dialect(dialect)
    pre = _c_head([spec], d) if prelude else ""
    if spec.gemm is not None:
        return pre + gemm_kernel(spec, name, d)
    b = _Body(spec, d)
    args = _array_params(spec, d)
    head = f"{d.kernel} void"
    gid = d.flat_gid

    def decl(dtype: str, v: str, e: str) -> str:
        return f"{scalar.compute_type(dtype, d)} {v} = {e};"

    def load(ld: Load, idx: str) -> str:
        return scalar.load(ld.dtype, f"a{ld.arg}", idx, d)

    stored = {s.arg: s.dtype for s in spec.stores}

    def store(arg: int, idx: str, v: str) -> str:
        st = scalar.store(stored[arg], f"a{arg}", idx, v, d)
        return st if st.endswith(";") else st + ";"

    lines = [" ".join(f"a{i} += o{i};" for i in range(spec.nargs))]
    red = b.reduce_step()
    n_items = 1
    if red is None:
        total = 1
        for n in b.dims:
            total *= n
        lines.append(f"long s = {gid} * chunk; long e = s + chunk < {total} ? s + chunk : "
                     f"{total};")
        lines.append("for (long flat = s; flat < e; flat++) {")
        lines.append("  long r = flat;")
        for a in range(len(b.dims) - 1, -1, -1):
            lines.append(f"  long i{a} = r % {b.dims[a]}; r /= {b.dims[a]};"
                         if a else f"  long i{a} = r;")
        lines += ["  " + ln for ln in b.phase_lines("p", decl, load, store)]
        lines.append("}")
        args.append("long chunk")
    else:
        k, r = red
        for a in b.kept:
            n_items *= b.dims[a]
        lines.append(f"long ko = {gid}; if (ko >= {n_items}) return;")
        lines.append("long r = ko;")
        for a in reversed(b.kept):
            lines.append(f"long i{a} = r % {b.dims[a]}; r /= {b.dims[a]};")
        acc_t = "double" if r.op == "sum" else scalar.compute_type(r.dtype, d)
        init = {"sum": "0", "max": "-INFINITY", "min": "INFINITY"}[r.op]
        lines.append(f"{acc_t} acc = {init};")
        depth = ""
        for a in b.red:
            lines.append(depth + f"for (long i{a} = 0; i{a} < {b.dims[a]}; i{a}++) {{")
            depth += "  "
        lines += [depth + ln for ln in b.phase_lines("p", decl, load, store)]
        src = b.ref(r.operand, r.dtype)
        if r.op == "sum":
            lines.append(depth + f"acc += (double){src};")
        else:
            cmp = ">" if r.op == "max" else "<"
            lines.append(depth + f"{{ {acc_t} v = {src}; if (v {cmp} acc || isnan(v)) acc = v; }}")
        for _a in b.red:
            depth = depth[:-2]
            lines.append(depth + "}")
        ct = scalar.compute_type(r.dtype, d)
        lines.append(f"{ct} t{k} = ({ct})acc;")
        lines += b.phase_lines("e", decl, load, store)
    # CUDA: build with --fmad=false (no fma contraction; the prelude has the type names)
    body = "\n  ".join(lines)
    return f"{pre}{head} {name}({', '.join(args)}) {{\n  {body}\n}}\n"


def _arg_types(spec: KernelSpec, d: Dialect) -> list[str]:
    types = ["uchar"] * spec.nargs
    mm = spec.gemm
    if mm is not None:
        types[mm.a_arg] = types[mm.b_arg] = scalar.storage_type(mm.dtype, d)
    for ld in spec.loads:
        types[ld.arg] = scalar.storage_type(ld.dtype, d)
    for s in spec.stores:
        types[s.arg] = scalar.storage_type(s.dtype, d)
    return types


def work_items(spec: KernelSpec) -> int:
    """Positions a C kernel's work-items cover (kept positions, or every element)."""
    n = 1
    for a, d in enumerate(spec.shape):
        if not spec.reduced[a]:
            n *= d
    return n
