"""``LBFGS`` (torch's limited-memory BFGS, with the optional strong Wolfe line search).

The algorithm and its stopping rules follow torch's implementation (itself after
minFunc) so that iterates agree: one parameter group, all parameters flattened into one
vector on their (single) device; curvature pairs ``(y, s)`` kept up to ``history_size``;
the two-loop recursion for the direction; a first step of ``min(1, 1 / |g|_1) * lr``.
Scalars (dot products, losses, step lengths) are read to the host as Python floats:
every one of them decides a branch, so the synchronization is inherent to the method.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable

from ..core.graph import set_grad_enabled_raw
from ..core.ops.join import cat
from ..core.tensor import Tensor
from .optimizer import Optimizer

__all__ = ["LBFGS"]


def _cubic_interpolate(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                       bounds: tuple[float, float] | None = None) -> float:
    """Minimizer of the cubic through ``(x1, f1, g1)`` and ``(x2, f2, g2)``, clipped to
    ``bounds`` (default: the interval between the points); the midpoint if the cubic has
    no real minimizer."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(pos, lo), hi)


def _strong_wolfe(obj: Callable[[float], tuple[float, Tensor]], t: float, d: Tensor, f: float,
                  g: Tensor, gtd: float, c1: float = 1e-4, c2: float = 0.9,
                  tolerance_change: float = 1e-9, max_ls: int = 25
                  ) -> tuple[float, Tensor, float, int]:
    """Step length ``t`` along ``d`` satisfying the strong Wolfe conditions (sufficient
    decrease ``c1``, curvature ``c2``): bracket by extrapolation with cubic interpolation,
    then zoom. ``obj(t)`` returns loss and flat gradient at ``x + t d``. Returns
    ``(f_new, g_new, t, evaluations)``."""
    d_norm = float(d.abs().max().item())
    f_new, g_new = obj(t)
    evals = 1
    gtd_new = float(g_new.dot(d).item())
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    # phase 1: find an interval that contains a point satisfying the conditions
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bf, bg, bgtd = [t], [f_new], [g_new], [gtd_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        # extrapolate between 1.01 t and 10 t
        nxt = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                 bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = nxt
        f_new, g_new = obj(t)
        evals += 1
        gtd_new = float(g_new.dot(d).item())
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bf, bg, bgtd = [0.0, t], [f, f_new], [g, g_new], [gtd, gtd_new]
    # phase 2: zoom into the bracket until a point satisfies the conditions
    insuf_progress = False
    low, high = (0, 1) if bf[0] <= bf[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bf[0], bgtd[0], bracket[1], bf[1], bgtd[1])
        # keep away from the bracket's ends unless the last step made no progress
        top, bot = max(bracket), min(bracket)
        eps = 0.1 * (top - bot)
        if min(top - t, t - bot) < eps:
            if insuf_progress or t >= top or t <= bot:
                t = top - eps if abs(t - top) < abs(t - bot) else bot + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj(t)
        evals += 1
        gtd_new = float(g_new.dot(d).item())
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bf[low]:
            bracket[high], bf[high], bg[high], bgtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if bf[0] <= bf[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bf[high], bg[high], bgtd[high] = \
                    bracket[low], bf[low], bg[low], bgtd[low]
            bracket[low], bf[low], bg[low], bgtd[low] = t, f_new, g_new, gtd_new
    return bf[low], bg[low], bracket[low], evals


class LBFGS(Optimizer):
    """L-BFGS: ``step(closure)`` runs up to ``max_iter`` iterations (``max_eval``
    closure calls, default ``max_iter * 5 // 4``), stopping early when the largest
    gradient entry is ``<= tolerance_grad`` or the step / loss change is below
    ``tolerance_change``. ``line_search_fn``: ``None`` (fixed step ``lr``) or
    ``'strong_wolfe'``. One parameter group only; all parameters on one device.

    State (on the first parameter, torch's keys): ``func_evals``, ``n_iter``, ``d``,
    ``t``, ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``,
    ``prev_loss``, ``al``."""

    def __init__(self, params: Iterable[Any], lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                             f"{line_search_fn!r}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                                  "tolerance_grad": tolerance_grad,
                                  "tolerance_change": tolerance_change,
                                  "history_size": history_size,
                                  "line_search_fn": line_search_fn})
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        devices = {str(p.device) for p in self._params}
        if len(devices) > 1:
            raise ValueError(f"LBFGS needs all parameters on one device, got "
                             f"{sorted(devices)}")

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    # --------------------------------------------------------------- flat views
    def _flat_grad(self) -> Tensor:
        views = []
        for p in self._params:
            g = p.grad
            views.append(p.new_zeros(p.numel()) if g is None else g.reshape(-1))
        return cat(views, 0)

    def _add_to_params(self, t: float, d: Tensor) -> None:
        """``params += t * d`` (``d`` flat)."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(d[offset:offset + n].reshape(p.shape), alpha=t)
            offset += n

    def _evaluate(self, closure: Callable[[], Any]) -> float:
        prev = set_grad_enabled_raw(True)
        try:
            return float(closure())
        finally:
            set_grad_enabled_raw(prev)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Run the iterations; ``closure`` re-evaluates the model (zero the gradients,
        compute the loss, ``backward()``) and returns the loss. Returns the first loss."""
        if closure is None:
            raise TypeError("LBFGS.step() needs a closure that reevaluates the model and "
                            "returns the loss")
        prev = set_grad_enabled_raw(False)
        try:
            return self._run(closure)
        finally:
            set_grad_enabled_raw(prev)

    def _run(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        set_grad_enabled_raw(True)
        try:
            orig_loss = closure()
        finally:
            set_grad_enabled_raw(False)
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if float(g.abs().max().item()) <= tol_grad:
            return orig_loss
        # resumed from the state (absent before the first iteration, which sets them)
        d: Any = state.get("d")
        t: Any = state.get("t")
        old_dirs: Any = state.get("old_dirs")
        old_stps: Any = state.get("old_stps")
        ro: Any = state.get("ro")
        h_diag: Any = state.get("H_diag")
        prev_g: Any = state.get("prev_flat_grad")
        prev_loss: Any = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # direction: steepest descent first, then the two-loop recursion
            if state["n_iter"] == 1:
                d = -g
                old_dirs, old_stps, ro, h_diag = [], [], [], 1.0
            else:
                h_diag = _remember(g - prev_g, d * t, old_dirs, old_stps, ro, h_diag,
                                   history_size)
                if "al" not in state:
                    state["al"] = [None] * history_size
                d = _two_loop(g, old_dirs, old_stps, ro, h_diag, state["al"])
            prev_g = g.clone()
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / float(g.abs().sum().item())) * lr
            else:
                t = lr
            gtd = float(g.dot(d).item())
            if gtd > -tol_change:  # not a descent direction
                break
            loss, g, t, ls_evals, opt_cond = self._move(
                closure, group, loss, g, d, t, gtd, max_eval - evals, last=n_iter == max_iter)
            evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == max_iter or evals >= max_eval or opt_cond:
                break
            if float((d * t).abs().max().item()) <= tol_change:
                break
            if abs(loss - prev_loss) < tol_change:
                break
        state.update({"d": d, "t": t, "old_dirs": old_dirs, "old_stps": old_stps, "ro": ro,
                      "H_diag": h_diag, "prev_flat_grad": prev_g, "prev_loss": prev_loss})
        return orig_loss

    def _move(self, closure: Callable[[], Any], group: dict, loss: float, g: Tensor,
              d: Tensor, t: float, gtd: float, evals_left: int,
              last: bool) -> tuple[float, Tensor, float, int, bool]:
        """Step along ``d``: by the strong-Wolfe line search, or by ``t`` (re-evaluating
        unless this is the ``last`` iteration). Returns the new loss, flat gradient, step,
        evaluations spent and whether the gradient is within tolerance."""
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        if group["line_search_fn"] == "strong_wolfe":
            x0 = [p.clone() for p in self._params]

            def obj(step: float) -> tuple[float, Tensor]:
                self._add_to_params(step, d)
                f_at = self._evaluate(closure)
                g_at = self._flat_grad().clone()
                for p, p0 in zip(self._params, x0):
                    p.copy_(p0)
                return f_at, g_at

            loss, g, t, ls_evals = _strong_wolfe(obj, t, d, loss, g, gtd,
                                                 tolerance_change=tol_change,
                                                 max_ls=evals_left)
            self._add_to_params(t, d)
            return loss, g, t, ls_evals, float(g.abs().max().item()) <= tol_grad
        self._add_to_params(t, d)
        if last:
            return loss, g, t, 0, False
        # re-evaluate only if another iteration may follow
        loss = self._evaluate(closure)
        g = self._flat_grad()
        return loss, g, t, 1, float(g.abs().max().item()) <= tol_grad


def _remember(y: Tensor, s: Tensor, old_dirs: list, old_stps: list, ro: list, h_diag: float,
              history_size: int) -> float:
    """Add the curvature pair ``(y, s)`` to the history if its curvature is positive
    (dropping the oldest beyond ``history_size``); return the new initial Hessian scale."""
    ys = float(y.dot(s).item())
    if ys <= 1e-10:
        return h_diag
    if len(old_dirs) == history_size:
        old_dirs.pop(0)
        old_stps.pop(0)
        ro.pop(0)
    old_dirs.append(y)
    old_stps.append(s)
    ro.append(1.0 / ys)
    return ys / float(y.dot(y).item())


def _two_loop(g: Tensor, old_dirs: list, old_stps: list, ro: list, h_diag: float,
              al: list) -> Tensor:
    """L-BFGS' two-loop recursion: the direction ``-H g`` from the curvature history."""
    q = -g
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = float(old_stps[i].dot(q).item()) * ro[i]
        q.add_(old_dirs[i], alpha=-al[i])
    d = r = q * h_diag
    for i in range(len(old_dirs)):
        be_i = float(old_dirs[i].dot(r).item()) * ro[i]
        r.add_(old_stps[i], alpha=al[i] - be_i)
    return d
