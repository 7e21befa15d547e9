"""The compile fuzzer's candidate lines in the style of training code
(``compile_fuzz_programs.Generator`` draws these kinds beside its own): writes through
indexing (tensor indices, bool masks, ``index_put_``/``index_add_``/``scatter_``,
``masked_fill_`` with a tensor value), in-place ops on views of inputs and on split/chunk
results, a captured parameter updated as optimizers do (``backward`` then ``opt.step()``, or
``p.add_(g, alpha=-lr)`` under ``no_grad``, in place on a view of it), ``linear``/``conv1d``/
batched ``matmul``, ``where``/``clamp`` with tensor bounds, dtype promotion (bool masks in
arithmetic, int / float, 0-d tensors) and breaks whose value differs from call to call
(a slice length, an index or a branch read from the data or from the state).

Each method returns what ``Generator._try`` takes (``line, name, exact, bound, readonly,
flags, roots, target``); a line may hold several statements (a ``with`` block), and is kept
only where it runs eagerly for every shape variant.
"""
from __future__ import annotations

import random
from typing import Any

import numpy as np

PARAM_ROOTS = frozenset(["param", "state"])   # writing it is writing captured state


def _min_dim(v: Any, d: int = 0) -> int:
    return min(s[d] for s in v.shapes) if all(len(s) > d for s in v.shapes) else 0


def _fits(a: Any, b: Any) -> bool:
    """``b`` broadcasts to ``a``'s shape in every variant (an in-place operand)."""
    try:
        return all(np.broadcast_shapes(sa, sb) == sa for sa, sb in zip(a.shapes, b.shapes))
    except ValueError:
        return False


class TrainingKinds:
    """Mixed into ``Generator`` (``self.rng``, ``self.vars``, ``_pick``, ``eff``, ``state``,
    ``param``)."""

    vars: list
    rng: random.Random
    param: Any

    def _pick(self, pred: Any = None) -> Any: ...   # (the generator's)
    def eff(self, v: Any) -> float: ...

    def _writable(self) -> Any:
        return self._pick(lambda v: not v.readonly and v.dtype != "bool" and v.shapes[0])

    # -------------------------------------------------------------- indexed writes
    def _index_write(self, new: str, r: random.Random) -> tuple | None:
        a = self._writable()
        if a is None:
            return None
        n = _min_dim(a)
        ba = self.eff(a)
        b = self._pick(lambda v: v.exact and v.dtype != "bool" and v.shapes[0])
        bb = 3.0 if b is None else self.eff(b)
        c = r.randint(-3, 3)
        ids = [r.randrange(-n, n) for _ in range(r.randint(1, 3))] if n else [0]
        idx = f"ot.tensor({ids}, device={a.name}.device)"
        cands = [(f"{a.name}[{idx}] = {c}", max(ba, abs(c))),
                 (f"{a.name}.index_put_(({idx},), ot.tensor({c}, dtype={a.name}.dtype, "
                  f"device={a.name}.device), accumulate=True)", ba + 3 * abs(c)),
                 (f"{a.name}.index_fill_(0, {idx}, {c})", max(ba, abs(c))),
                 (f"{a.name}.index_add_(0, {idx}, {a.name}[:{len(ids)}] * {c})",
                  ba + 3 * abs(c) * ba),
                 (f"{a.name}.scatter_(0, {a.name}.argmax(0, keepdim=True), {c})",
                  max(ba, abs(c)))]
        if b is not None and a.exact:
            cands += [(f"{a.name}[{b.name} > {c}] = {c}", max(ba, abs(c))),
                      (f"{a.name}.masked_fill_({b.name} < {c}, {b.name}.amax())",
                       max(ba, bb)),
                      (f"{a.name}[{b.name}.argmax(0)] = {c}", max(ba, abs(c))),
                      (f"{a.name}.scatter_add_(-1, {b.name}.argmin(-1, keepdim=True), "
                       f"{b.name}.amax(-1, keepdim=True))", ba + bb * _max_last(b)),
                      (f"{a.name}.index_put_(({b.name} >= {c},), "
                       f"{b.name}[{b.name} >= {c}].to({a.name}.dtype))", max(ba, bb))]
        line, bound = r.choice(cands)
        return line, None, a.exact, bound, False, (), frozenset(), a

    def _index_data(self, new: str, r: random.Random) -> tuple | None:
        """An integer tensor of the data as an index: its values differ from call to call,
        so a call may hold one out of range (eager raises; a compiled call must too)."""
        i = self._pick(lambda v: v.dtype in ("int64", "int32") and v.shapes[0])
        a = self._pick(lambda v: v.dtype != "bool" and v.shapes[0])
        if i is None or a is None:
            return None
        n = _min_dim(a)
        # the whole tensor (mostly in range: |values| <= 3), always in range, or two
        # values in [0, n]: out of range in about half the calls
        key = r.choice((i.name, f"{i.name}.abs() % {n}", f"{i.name}.flatten()[:2] % {n + 1}",
                        f"{i.name}.flatten()[:2] % {n + 1}"))
        ba, c = self.eff(a), r.randint(-3, 3)
        reads = [(f"{new} = {a.name}[{key}]", ba),
                 (f"{new} = {a.name}.index_select(0, ({key}).flatten())", ba),
                 (f"{new} = {a.name}.gather(0, {key})", ba),
                 (f"{new} = ot.nn.functional.embedding({key}, {a.name})", ba)]
        writes = [f"{a.name}[{key}] = {c}", f"{a.name}.index_fill_(0, ({key}).flatten(), {c})",
                  f"{a.name}.scatter_(0, {key}, {c})"]
        if a.readonly or r.random() < 0.5:
            line, bound = r.choice(reads)
            return line, new, a.exact, bound
        return r.choice(writes), None, a.exact, max(ba, abs(c)), False, (), frozenset(), a

    def _view_write(self, new: str, r: random.Random) -> tuple | None:
        """An in-place op on a view made on the spot (of an input, a split or chunk)."""
        a = self._writable()
        if a is None:
            return None
        nd, ba = len(a.shapes[0]), self.eff(a)
        c = r.randint(-2, 3)
        views = ["[1:]", "[::2]", ".view(-1)[::2]", ".split(1, 0)[-1]",
                 ".chunk(2, 0)[0]", ".unbind(0)[0]", ".narrow(0, 0, 1)"]
        if nd >= 2:
            views += [".t()[0]", "[:, 1:]", ".select(1, 0)", ".diagonal()",
                      ".transpose(0, 1).chunk(2)[-1]", ".split(1, -1)[0]"]
        view = r.choice(views)
        op, bound = r.choice(((f"add_({c})", ba + 3), (f"mul_({c})", ba * abs(c)),
                              ("neg_()", ba), (f"fill_({c})", max(ba, abs(c))),
                              (f"clamp_(min={-abs(c)})", max(ba, abs(c))),
                              (f"copy_({a.name}{view}.flip(0))", ba)))
        return f"{a.name}{view}.{op}", None, a.exact, bound, False, (), frozenset(), a

    # -------------------------------------------------------------- parameters
    def _train(self, new: str, r: random.Random) -> tuple | None:
        """A captured parameter (``param``, an ``opt`` SGD over it) used and updated."""
        g = self._pick(lambda v: v.exact and v.dtype != "bool" and _fits(self.param, v))
        c = r.randint(-2, 2)
        cands: list = [(f"{new} = param.detach() * {c} + 1", new, 101.0, frozenset(), None),
                       (f"{new} = param.detach(){r.choice(('', '[1:]', '.t()', '[..., ::2]'))}",
                        new, 50.0, PARAM_ROOTS, None),
                       ("with ot.no_grad():\n    param[{}].mul_({}).clamp_(-50, 50)".format(
                           r.choice(("0", "1:", "::2", "..., 0")), c), None, 50.0,
                        frozenset(), self.param)]
        if g is not None:
            gn = g.name
            cands += [
                (f"(param * {gn}).sum().backward()\nopt.step()\nopt.zero_grad()\n"
                 f"with ot.no_grad():\n    param.clamp_(-50, 50)", None, 50.0, frozenset(),
                 self.param),
                (f"with ot.no_grad():\n    param.add_({gn}, alpha=-0.5).clamp_(-50, 50)",
                 None, 50.0, frozenset(), self.param),
                (f"(param * {gn}).square().sum().backward()\n{new} = param.grad.clone()\n"
                 f"param.grad = None", new, 2 * 50.0 * self.eff(g) ** 2, frozenset(), None),
                (f"with ot.no_grad():\n    {new} = param * {gn}", new, 50.0 * self.eff(g),
                 frozenset(), None)]
        line, name, bound, roots, target = r.choice(cands)
        flags = ("state",) if target is not None or "param.grad" in line else ()
        return (line, name, True, bound, False, flags, roots, target)

    # -------------------------------------------------------------- linear algebra
    def _linalg(self, new: str, r: random.Random) -> tuple | None:
        a = self._pick(lambda v: v.dtype.startswith("float") and len(v.shapes[0]) >= 2)
        if a is None:
            return None
        nd, ba = len(a.shapes[0]), self.eff(a)
        k = max(max(s) for s in a.shapes)
        w = self._pick(lambda v: v.dtype == a.dtype and len(v.shapes[0]) == 2) or a
        bw = self.eff(w)
        F = "ot.nn.functional"
        cands = [(f"{F}.linear({a.name}, {w.name})", ba * bw * k),
                 (f"{F}.linear({a.name}, {w.name}, {w.name}[:, 0])", ba * bw * k + bw),
                 (f"ot.matmul({a.name}, {a.name}.transpose(-1, -2))", ba * ba * k)]
        if nd == 3:
            cands += [(f"{F}.conv1d({a.name}, {a.name}[:2, :, :2])", ba * ba * 2 * k),
                      (f"{F}.conv1d({a.name}, {a.name}[:1], padding=1)", ba * ba * k * k),
                      (f"ot.bmm({a.name}, {a.name}.transpose(1, 2))", ba * ba * k)]
        if nd == 2:
            cands.append((f"{F}.conv1d({a.name}, {a.name}[None, :, :2])", ba * ba * 2 * k))
        op, bound = r.choice(cands)
        return f"{new} = {op}", new, a.exact and w.exact, bound

    # -------------------------------------------------------------- where, clamp, dtypes
    def _bounds(self, new: str, r: random.Random) -> tuple | None:
        a = self._pick(lambda v: v.dtype != "bool")
        if a is None:
            return None
        b = self._pick(lambda v: v.dtype != "bool") or a
        m = self._pick(lambda v: v.dtype == "bool")
        ea, eb = self.eff(a), self.eff(b)
        c = r.randint(-2, 2)
        cands = [(f"{new} = ot.clamp({a.name}, min={b.name})", max(ea, eb), None),
                 (f"{new} = {a.name}.clamp({b.name} - 1, {b.name} + 1)", eb + 1, None),
                 (f"{new} = ot.where({a.name} > {c}, {a.name}, {c * 2})", max(ea, 4), None),
                 (f"{new} = ot.where({b.name} < 0, {c}, {a.name})", max(ea, 2), None)]
        if m is not None:
            cands.append((f"{new} = ot.where({m.name}, {a.name}, {b.name})", max(ea, eb), None))
        if not a.readonly and a.exact and _fits(a, b):
            cands.append((f"{a.name}.clamp_(min={b.name} - 1)", max(ea, eb + 1), a))
        line, bound, target = r.choice(cands)
        if target is not None:
            return line, None, a.exact, bound, False, (), frozenset(), a
        if (">" in line or "<" in line) and not (a.exact and b.exact):
            return None
        return line, new, a.exact and b.exact, bound

    def _promote(self, new: str, r: random.Random) -> tuple | None:
        a = self._pick(lambda v: v.exact)
        if a is None:
            return None
        b = self._pick(lambda v: v.exact) or a
        ea, eb = self.eff(a), self.eff(b)
        c = r.randint(-2, 2)
        cands = [(f"{a.name} * ({b.name} > {c})", ea, True),
                 (f"{a.name} + ({b.name} <= {c})", ea + 1, True),
                 (f"({a.name} > {c}) & ({b.name} < {c})", 1.0, True),
                 (f"~({a.name} == {c})", 1.0, True),
                 (f"({a.name} > {c}).sum(-1)", 64.0, True),
                 (f"{a.name} / 2", ea / 2, False),
                 (f"{a.name} * 2.5", ea * 2.5, False),
                 (f"{a.name}.to(ot.int64) + {b.name}.to(ot.float32)", ea + eb, False),
                 (f"{a.name} + {b.name}.sum()", ea + eb * 64, True),
                 (f"{a.name}.to(ot.int32) * {b.name}.to(ot.int64)", ea * eb, True),
                 (f"({a.name} > {c}).to(ot.float32).mean()", 1.0, False)]
        if a.dtype != "bool":
            cands.append((f"{a.name} // 2 + {a.name} % 3", ea, True))
        op, bound, exact = r.choice(cands)
        return f"{new} = {op}", new, exact and a.exact and b.exact, bound

    # -------------------------------------------------------------- value-dependent breaks
    def _break_value(self, new: str, r: random.Random) -> tuple | None:
        """A break whose value (a length, an index, a branch) differs from call to call:
        read from the inputs or from the state the program writes."""
        a = self._pick(lambda v: v.exact and v.dtype != "bool")
        b = self._pick(lambda v: v.dtype != "bool" and v.shapes[0])
        if a is None or b is None:
            return None
        n = _min_dim(b)
        if n == 0:
            return None
        bb = self.eff(b)
        c = r.randint(-2, 2)
        src = r.choice((a.name, a.name, "state"))
        cands = [(f"{new} = {b.name}[:int({src}.abs().amax().item()) % {n} + 1]", bb, True),
                 (f"{new} = {b.name}[int({src}.sum().item()) % {n}]", bb, True),
                 (f"{new} = {b.name} - 1 if {src}.amax() > {c} else {b.name} + 1", bb + 1,
                  False),
                 (f"{new} = {b.name} * float({src}.sum() > {c})", bb, False),
                 (f"{new} = {b.name}.clone()\nfor _ in range(int({src}.abs().sum().item()) "
                  f"% 3):\n    {new}.add_(1)", bb + 2, False)]
        line, bound, view = r.choice(cands)
        return (line, new, b.exact, bound, b.readonly and view, ("break",),
                b.roots if view else frozenset())

def _max_last(v: Any) -> int:
    return max(s[-1] for s in v.shapes) if v.shapes[0] else 1
