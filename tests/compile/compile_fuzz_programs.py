"""Random programs for the compile differential fuzzer (``test_compile_fuzz.py``).

A program is real Python source, a factory ``make(state, log)`` returning ``prog(x0, x1,
...)``: lines of views (slices, transposes, reshape, view, expand, unsqueeze), in-place ops
(``add_``, ``mul_``, ``clamp_``, ``copy_``, slice assignment, ``masked_fill_``), broadcasts,
casts, reductions, matmul, and graph breaks (``.item()`` in a branch or as a scale,
``.tolist()`` into ``log``, ``nonzero``), over its inputs and a captured ``state`` tensor
that it may write in place. Each line is kept only if it runs eagerly (cpu, float64) for
every shape variant of the program, so the program is valid for all its call shapes.

Values are small integers and every op but a few marked inexact (``tanh``, ``exp``,
``mean``, ``softmax``) keeps them integers below 1e6, so results are exact in float32 and
float64 whatever order a fused kernel computes in: casts to int and comparisons stay
deterministic, and compiled results must equal eager's exactly (inexact values within
float32 rounding). ``compile_fuzz_training.py`` adds the kinds training code uses (indexed
writes, a parameter and its optimizer step, linear/conv1d, promotion, breaks on values that
change between calls). A :class:`Call` says how one call's inputs are made: the shape
variant, each input's layout (contiguous, transposed, strided, at an offset, expanded,
another dtype, on the host) and its aliasing (the same tensor twice, a second view of one, overlapping windows of one buffer,
a view of the captured state).
"""
from __future__ import annotations

import dataclasses
import random
from typing import Any

import numpy as np

import omnitensor as ot
from compile_fuzz_training import PARAM_ROOTS, TrainingKinds

LIMIT = 1e6          # |value| bound that keeps float32 integer arithmetic exact
# contiguous, transposed, strided, offset, expanded; another dtype (float64 <-> float32,
# int64 -> int32), on the host (cpu) while the rest is on the device
LAYOUTS = ("c", "t", "s", "o", "e", "d", "h")
_OTHER_DTYPE = {"float64": "float32", "float32": "float64", "int64": "int32"}
ALIASES = ("none", "same", "view", "overlap", "state")


@dataclasses.dataclass
class Var:
    name: str
    shapes: list            # per shape variant
    dtype: str
    exact: bool
    bound: float
    readonly: bool = False  # an expand (in-place writes raise)
    roots: frozenset = frozenset()   # the inputs (and state) whose memory it may view


@dataclasses.dataclass
class Program:
    source: str
    n_inputs: int
    in_shapes: list         # [variant][input] -> shape
    in_dtypes: list
    state_shape: tuple
    writes_state: bool
    breaks: bool
    written: frozenset      # inputs the program may write in place
    has_param: bool = False  # ``make`` holds a parameter ``param`` (``prog.param``)

    def factory(self) -> Any:
        ns: dict = {"ot": ot}
        exec(compile(self.source, "<compile-fuzz program>", "exec"), ns)
        return ns["make"]


@dataclasses.dataclass
class Call:
    variant: int
    layouts: tuple          # per input
    alias: str              # how input 1 relates to input 0 (or input 0 to the state)
    seed: int


def _bshape(shapes: list) -> bool:
    """Whether two shapes broadcast (NumPy's rule)."""
    try:
        np.broadcast_shapes(*shapes)
        return True
    except ValueError:
        return False


def param_source(shape: tuple, momentum: float) -> list[str]:
    """The lines of ``make`` that create the parameter ``param`` and its ``opt``."""
    n = int(np.prod(shape))
    return [f"param = (ot.arange({n}, dtype=ot.float64, device=state.device) % 5 - 2)"
            f".reshape({tuple(shape)}).requires_grad_()",
            f"opt = ot.optim.SGD([param], lr=0.5, momentum={momentum})"]


class Generator(TrainingKinds):
    """Builds one program from ``seed`` (see the module docstring and
    ``compile_fuzz_training.py``)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        r = self.rng
        rank = r.choice((1, 2, 2, 3))
        base = [r.randint(2, 4) for _ in range(rank)]
        self.variants = [tuple(base), tuple(d + r.choice((0, 1)) for d in base)]
        n = r.choice((1, 2, 2, 3))
        self.vars: list[Var] = []
        self.in_shapes: list = [[] for _ in self.variants]
        self.in_dtypes = []
        masks = [[r.random() < 0.25 for _ in range(rank)] for _ in range(n)]
        masks[0] = [False] * rank
        if n > 1 and r.random() < 0.6:
            masks[1] = [False] * rank    # same shape as x0: aliasing is possible
        for i in range(n):
            dt = r.choice(("float64", "float64", "float32", "int64"))
            self.in_dtypes.append(dt)
            shapes = [tuple(1 if m else d for m, d in zip(masks[i], v)) for v in self.variants]
            for k, s in enumerate(shapes):
                self.in_shapes[k].append(s)
            self.vars.append(Var(f"x{i}", shapes, dt, True, 3.0, roots=frozenset([f"x{i}"])))
        self.state = Var("state", [self.variants[0]] * 2, "float64", True, 50.0,
                         roots=frozenset(["state"]))
        self.vars.append(self.state)
        self.param = Var("param", [self.variants[0]] * 2, "float64", True, 50.0,
                         roots=PARAM_ROOTS)
        self.param_lines = param_source(self.variants[0], r.choice((0.0, 0.5)))
        self.lines: list[str] = []
        self.writes_state = False
        self.breaks = False
        self.written: set[str] = set()
        self.wbound = 0.0        # largest value an in-place write stored (any alias sees it)
        self.n = n
        self.envs: list[dict] = []
        self._reset_envs()

    def _reset_envs(self) -> None:
        """Fresh inputs for every variant, and the accepted lines run on them again."""
        self.envs = []
        for k in range(len(self.variants)):
            # one state for every call shape (it lives across calls): lines mixing it with
            # the inputs survive only where the variants share the shape
            env: dict = {"ot": ot, "log": [],
                         "state": ot.zeros(self.variants[0], dtype=ot.float64)}
            for line in self.param_lines:
                exec(line, env)
            for i in range(self.n):
                env[f"x{i}"] = _value(self.in_shapes[k][i], self.in_dtypes[i], 7 + k * 31 + i)
            for line in self.lines:
                exec(line, env)
            self.envs.append(env)

    def eff(self, v: Var) -> float:
        """A bound on ``v``'s values: an in-place write through any alias may reach it."""
        return max(v.bound, self.wbound)

    # ------------------------------------------------------------------ building
    def build(self, n_lines: int) -> Program:
        tries = 0
        while len(self.lines) < n_lines and tries < n_lines * 12:
            tries += 1
            cand = self._candidate()
            if cand is not None:
                self._try(*cand)
        outs = [v.name for v in self.vars[self.n + 1:]][-3:] or ["x0"]
        body = "\n".join("        " + ln.replace("\n", "\n        ")
                         for ln in self.lines) or "        pass"
        args = ", ".join(f"x{i}" for i in range(self.n))
        has_param = any("param" in ln or "opt." in ln for ln in self.lines)
        pre = "".join(f"    {ln}\n" for ln in self.param_lines) if has_param else ""
        post = "    prog.param = param\n" if has_param else ""
        src = (f"def make(state, log):\n{pre}    def prog({args}):\n{body}\n"
               f"        return ({', '.join(outs)},)\n{post}    return prog\n")
        return Program(src, self.n, self.in_shapes, self.in_dtypes, self.variants[0],
                       self.writes_state, self.breaks, frozenset(self.written), has_param)

    def _try(self, line: str, name: str | None, exact: bool, bound: float,
             readonly: bool = False, flags: tuple = (), roots: frozenset = frozenset(),
             target: Var | None = None) -> None:
        if bound > LIMIT:
            return
        results = []
        try:
            for env in self.envs:
                exec(line, env)
                if name is not None:
                    results.append(env[name])
            if name is not None and not all(isinstance(t, ot.Tensor) for t in results):
                raise TypeError("not a tensor")
        except Exception:  # not valid for every variant: drop the line
            self._reset_envs()
            return
        if name is not None:
            self.vars.append(Var(name, [tuple(t.shape) for t in results],
                                 str(results[0].dtype).split(".")[-1], exact, bound,
                                 readonly, roots))
        if target is not None:     # an in-place write
            self.wbound = max(self.wbound, bound)
            self.written |= target.roots
            target.bound = max(target.bound, bound)
        self.lines.append(line)
        if "state" in flags or (target is not None and "state" in target.roots):
            self.writes_state = True
        if "break" in flags:
            self.breaks = True

    # ------------------------------------------------------------------ candidates
    def _pick(self, pred: Any = None) -> Var | None:
        vs = [v for v in self.vars if pred is None or pred(v)]
        return self.rng.choice(vs) if vs else None

    def _pair(self, pred: Any = None) -> tuple[Var, Var] | None:
        a = self._pick(pred)
        if a is None:
            return None
        bs = [v for v in self.vars if (pred is None or pred(v))
              and all(_bshape([sa, sb]) for sa, sb in zip(a.shapes, v.shapes))]
        return (a, self.rng.choice(bs)) if bs else None

    def _candidate(self) -> tuple | None:
        r = self.rng
        kind = r.choice(("view", "view", "inplace", "inplace", "binary", "binary", "unary",
                         "cast", "reduce", "break", "misc",
                         # compile_fuzz_training.py: what training code does
                         "index_write", "index_data", "view_write", "train", "linalg",
                         "bounds", "promote", "break_value"))
        new = f"v{len(self.lines)}"
        return getattr(self, "_" + kind)(new, r)

    def _view(self, new: str, r: random.Random) -> tuple | None:
        a = self._pick()
        assert a is not None
        nd = len(a.shapes[0])
        ops = ["reshape(-1)", "view(-1)", "unsqueeze(0)", "contiguous()", "flatten()"]
        if nd >= 1:
            ops += [f"[{r.choice(('1:', ':-1', '::2', '1::2'))}]", "flip(0)"]
        if nd >= 2:
            ops += ["t()", "transpose(0, 1)", f"[:, {r.choice(('1:', '::2', ':1'))}]",
                    "permute(1, 0)" if nd == 2 else "permute(2, 0, 1)", "[..., 0]"]
        if nd >= 3:
            ops += ["transpose(0, 2)", "[1:, :, ::2]", "flatten(1)"]
        op = r.choice(ops)
        sep = "" if op.startswith("[") else "."
        b = self.eff(a)
        if r.random() < 0.15 and nd:
            line = f"{new} = {a.name}.unsqueeze(0).expand(2, *{a.name}.shape)"
            return line, new, a.exact, b, True, (), a.roots
        return f"{new} = {a.name}{sep}{op}", new, a.exact, b, a.readonly, (), a.roots

    def _inplace(self, new: str, r: random.Random) -> tuple | None:
        a = self._pick(lambda v: not v.readonly and v.dtype != "bool")
        if a is None:
            return None
        ba = self.eff(a)
        b = self._pick(lambda v: v.exact and v.dtype != "bool" and all(
            _bshape([sa, sb]) and np.broadcast_shapes(sa, sb) == sa
            for sa, sb in zip(a.shapes, v.shapes)))
        bb = 0.0 if b is None else self.eff(b)
        c = r.randint(-2, 3)
        if a.name == "state":   # it accumulates over calls: every write stays bounded
            cands = [("state.mul_({c}).clamp_(-50, 50)", 50.0), ("state.zero_()", 0.0),
                     ("state.add_({c}).clamp_(-50, 50)", 50.0)]
            if b is not None:
                cands += [("state.add_({b}).clamp_(-50, 50)", 50.0),
                          ("state.copy_({b}).clamp_(-50, 50)", 50.0)]
            line, bound = r.choice(cands)
            line = line.format(c=c, b=b.name if b is not None else "")
            return line, None, a.exact, bound, False, ("state",), frozenset(), a
        cands = [(f"{a.name}.mul_({c})", abs(c) * ba), (f"{a.name}.add_({c})", ba + 3),
                 (f"{a.name}.clamp_({-c - 1}, {abs(c) + 1})", min(ba, abs(c) + 1)),
                 (f"{a.name}.neg_()", ba), (f"{a.name}.zero_()", 0.0),
                 (f"{a.name}.fill_({c})", abs(c)),
                 (f"{a.name}[{r.choice(('0', '1:', '::2', '...'))}] = {c}", max(ba, abs(c)))]
        if a.exact:
            cands.append((f"{a.name}.masked_fill_({a.name} > {c}, {c})", max(ba, abs(c))))
        if b is not None:
            cands += [(f"{a.name}.add_({b.name})", ba + bb),
                      (f"{a.name}.sub_({b.name}).clamp_(-40, 40)", 40.0),
                      (f"{a.name}.copy_({b.name})", bb),
                      (f"{a.name}.mul_({b.name}).clamp_(-40, 40)", 40.0)]
        line, bound = r.choice(cands)
        return line, None, a.exact, bound, False, (), frozenset(), a

    def _binary(self, new: str, r: random.Random) -> tuple | None:
        p = self._pair(lambda v: v.dtype != "bool")
        if p is None:
            return None
        a, b = p
        ea, eb = self.eff(a), self.eff(b)
        ex, mx = a.exact and b.exact, max(ea, eb)
        op, bound = r.choice(((f"{a.name} + {b.name}", ea + eb),
                              (f"{a.name} - {b.name}", ea + eb),
                              (f"{a.name} * {b.name}", ea * eb),
                              (f"ot.maximum({a.name}, {b.name})", mx),
                              (f"ot.where({a.name} > {b.name}, {a.name}, {b.name} * 2)", 2 * mx),
                              (f"({a.name} >= {b.name})", 1.0),
                              (f"{a.name} * {r.randint(-3, 3)} + {r.randint(-2, 2)}",
                               3 * ea + 2)))
        if ">" in op and not ex:
            return None
        return f"{new} = {op}", new, ex, bound

    def _unary(self, new: str, r: random.Random) -> tuple | None:
        a = self._pick(lambda v: v.dtype != "bool")
        if a is None:
            return None
        ba = self.eff(a)
        exact = [("-{}", ba), ("{}.abs()", ba), ("{}.relu()", ba), ("{}.square()", ba ** 2),
                 ("({} / 2).floor()", ba)]
        inexact = [("{}.tanh()", 1.0), ("({}.tanh() * 2).exp()", 8.0), ("{}.sigmoid()", 1.0)]
        if a.dtype == "int64" or r.random() < 0.6:
            fmt, bound = r.choice(exact[:4] if a.dtype == "int64" else exact)
            return f"{new} = {fmt.format(a.name)}", new, a.exact, bound
        fmt, bound = r.choice(inexact)
        return f"{new} = {fmt.format(a.name)}", new, False, bound

    def _cast(self, new: str, r: random.Random) -> tuple | None:
        a = self._pick()
        assert a is not None
        to = r.choice(("float32", "float64", "int64", "bool")) if a.exact else \
            r.choice(("float32", "float64"))
        return (f"{new} = {a.name}.to(ot.{to})", new, a.exact,     # (itself when the
                1.0 if to == "bool" else self.eff(a), False, (), a.roots)   # dtype is its)

    def _reduce(self, new: str, r: random.Random) -> tuple | None:
        a = self._pick(lambda v: v.dtype != "bool" and len(v.shapes[0]) >= 1)
        if a is None:
            return None
        nd, ba = len(a.shapes[0]), self.eff(a)
        d = r.randrange(nd)
        k = r.choice(("True", "False"))
        n = max(max(s) for s in a.shapes)
        size = max(int(np.prod(s)) for s in a.shapes)
        cands = [(f"{a.name}.sum({d}, keepdim={k})", ba * n, a.exact),
                 (f"{a.name}.amax({d}, keepdim={k})", ba, a.exact),
                 (f"{a.name}.cumsum({d})", ba * n, a.exact),
                 (f"{a.name}.sum()", ba * size, a.exact)]
        if a.exact:
            cands.append((f"{a.name}.argmax({d})", float(n), True))
        if a.dtype.startswith("float"):
            cands += [(f"{a.name}.mean({d})", ba, False),
                      (f"{a.name}.softmax({d})", 1.0, False)]
        op, bound, exact = r.choice(cands)
        return f"{new} = {op}", new, exact, bound

    def _break(self, new: str, r: random.Random) -> tuple | None:
        a = self._pick(lambda v: v.exact and v.dtype != "bool")
        if a is None:
            return None
        b = self._pick(lambda v: v.dtype != "bool") or a
        ba, bb = self.eff(a), self.eff(b)
        c = r.randint(-3, 3)
        cands = [(f"{new} = {b.name} + 1 if {a.name}.sum().item() > {c} else {b.name} - 1",
                  bb + 1, b.exact),
                 (f"{new} = {b.name} * int({a.name}.amax().item() if {a.name}.numel() else 1)",
                  bb * ba, b.exact),
                 (f"log.append({a.name}.tolist())", None, True),
                 (f"{new} = {b.name} * 2 if bool(({a.name} > {c}).any()) else {b.name}",
                  2 * bb, b.exact),
                 (f"{new} = ({a.name} > {c}).nonzero()", 8.0, True)]
        k = r.randrange(len(cands))
        line, bound, exact = cands[k]
        roots = b.roots if k == 3 else frozenset()   # (b itself on one path)
        return (line, (None if bound is None else new), exact, bound or 0.0, False,
                ("break",), roots)

    def _misc(self, new: str, r: random.Random) -> tuple | None:
        a = self._pick(lambda v: v.dtype.startswith("float") and len(v.shapes[0]) == 2)
        if a is not None and r.random() < 0.5:
            b = self._pick(lambda v: v.dtype == a.dtype and len(v.shapes[0]) == 2) or a
            k = max(s[1] for s in a.shapes)
            return (f"{new} = {a.name} @ {b.name}.t()", new, a.exact and b.exact,
                    self.eff(a) * self.eff(b) * k)
        a = self._pick(lambda v: len(v.shapes[0]) >= 1)
        if a is None:
            return None
        return r.choice(((f"{new} = ot.cat([{a.name}, {a.name}], 0)", new, a.exact, self.eff(a)),
                         (f"{new} = ot.stack([{a.name}, -{a.name}])", new, a.exact,
                          self.eff(a))))


def _value(shape: tuple, dtype: str, seed: int, device: str = "cpu") -> Any:
    rng = np.random.default_rng(seed)
    arr = rng.integers(-3, 4, shape)
    return ot.tensor(arr.astype(dtype), device=device)


def generate(seed: int) -> Program:
    """The program of ``seed`` (6-16 lines)."""
    g = Generator(seed)
    return g.build(g.rng.randint(6, 16))


def calls_for(prog: Program, seed: int, n: int = 8) -> list[Call]:
    """How ``prog`` is called: plain calls first (capture, replays), then other shapes,
    layouts and aliasing, and plain ones again (the first key must still serve)."""
    r = random.Random(seed)
    out = [Call(0, ("c",) * prog.n_inputs, "none", seed * 100 + i) for i in range(3)]
    for i in range(n - 4):
        layouts = tuple(r.choice(LAYOUTS) if r.random() < 0.5 else "c"
                        for _ in range(prog.n_inputs))
        alias = r.choice(ALIASES) if r.random() < 0.5 else "none"
        out.append(Call(r.randrange(2), layouts, alias, seed * 100 + 10 + i))
    out.append(Call(0, ("c",) * prog.n_inputs, "none", seed * 100 + 99))
    return out


# ---------------------------------------------------------------------- call inputs
def make_inputs(prog: Program, call: Call, device: str, state: Any) -> tuple[list, list]:
    """``(inputs, holders)`` for one call: the argument tensors in ``call``'s layouts and
    aliasing, and every tensor whose memory they view (compared after the call)."""
    shapes = prog.in_shapes[call.variant]
    dtypes = [_OTHER_DTYPE[d] if lay == "d" else d
              for d, lay in zip(prog.in_dtypes, call.layouts)]
    arrs = [np.random.default_rng(call.seed + i).integers(-3, 4, s).astype(d)
            for i, (s, d) in enumerate(zip(shapes, dtypes))]
    xs, holders = [], []
    for i, (arr, lay) in enumerate(zip(arrs, call.layouts)):
        # an expanded input only where nothing writes into it (through an alias neither):
        # writing overlapping memory is undefined (torch refuses it)
        if lay == "e" and (f"x{i}" in prog.written or call.alias != "none"):
            lay = "c"
        x, h = _laid_out(arr, lay, "cpu" if lay == "h" else device)
        xs.append(x)
        holders.append(h)
    alias = call.alias
    same = prog.n_inputs > 1 and shapes[0] == shapes[1] and dtypes[0] == dtypes[1]
    if alias == "same" and same:
        xs[1] = xs[0]
    elif alias == "view" and same:
        xs[1] = xs[0][...]
    elif alias == "overlap" and same and arrs[0].size > 1:
        n = arrs[0].size
        k = 1 + call.seed % (n - 1)
        flat = np.concatenate([arrs[0].reshape(-1), arrs[1].reshape(-1)[:k]])
        buf = ot.tensor(flat, device=device)
        xs[0], xs[1] = buf[:n].view(shapes[0]), buf[k:k + n].view(shapes[0])
        holders[0] = holders[1] = buf
    elif alias == "state" and tuple(state.shape) == shapes[0] and dtypes[0] == "float64":
        xs[0] = state[...]
    return xs, holders


def _laid_out(arr: np.ndarray, layout: str, device: str) -> tuple[Any, Any]:
    nd = arr.ndim
    if layout == "t" and nd >= 2:
        perm = tuple(reversed(range(nd)))
        h = ot.tensor(np.ascontiguousarray(arr.transpose(perm)), device=device)
        return h.permute(perm), h
    if layout == "s" and nd >= 1:
        big = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1],), arr.dtype)
        big[..., ::2] = arr
        h = ot.tensor(big, device=device)
        return h[..., ::2], h
    if layout == "o":
        h = ot.tensor(np.concatenate([np.zeros(3, arr.dtype), arr.reshape(-1)]),
                      device=device)
        return h[3:].view(arr.shape), h
    if layout == "e" and nd >= 1:
        h = ot.tensor(arr[:1], device=device)
        return h.expand(arr.shape), h
    h = ot.tensor(arr, device=device)
    return h, h
