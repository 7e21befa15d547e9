"""``SparseAdam``: Adam restricted to the positions a sparse gradient holds (torch's
masked update, for ``nn.Embedding(sparse=True)`` and other sparse-gradient layers)."""
from __future__ import annotations

import math
from typing import Any, Iterable

from ..core.ops.creation import zeros_like
from ..core.sparse import sparse_coo_tensor
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """For each parameter with a sparse gradient ``g`` (coalesced first): at the positions
    ``g`` holds, ``m += (1 - b1)(g - m)``, ``v += (1 - b2)(g^2 - v)`` and ``p -= lr *
    sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)``; every other position of ``p``,
    ``m`` and ``v`` is left as it is. Dense gradients are refused (use Adam)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, b in enumerate(betas):
            if not 0.0 <= b < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {b}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "maximize": maximize})
        for name, test, what in (("Sparse", lambda p: p.is_sparse, "requires dense parameter "
                                  "tensors"),
                                 ("Complex", lambda p: p.is_complex(), "does not support "
                                  "complex parameters")):
            bad = [[gi, pi] for gi, g in enumerate(self.param_groups)
                   for pi, p in enumerate(g["params"]) if test(p)]
            if bad:
                raise ValueError(f"{name} params at indices {bad}: SparseAdam {what}")

    def _step(self) -> None:
        for group in self.param_groups:
            lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
            for p, g in self._grads(group):
                if not g.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["exp_avg"] = zeros_like(p)
                    st["exp_avg_sq"] = zeros_like(p)
                st["step"] = int(st["step"]) + 1
                _update(p, g.coalesce(), st["exp_avg"], st["exp_avg_sq"], st["step"], lr, b1,
                        b2, eps)


def _update(p: Any, g: Any, m: Any, v: Any, step: int, lr: float, b1: float, b2: float,
            eps: float) -> None:
    """One masked Adam step at ``g``'s positions (``g`` coalesced)."""
    idx, gv = g._indices(), g._values()
    if gv.numel() == 0:
        return

    def at_g(values: Any) -> Any:
        return sparse_coo_tensor(idx, values, g.shape)

    m_old = m.sparse_mask(g)._values()
    m_step = (gv - m_old) * (1 - b1)
    m.add_(at_g(m_step))
    v_old = v.sparse_mask(g)._values()
    v_step = (gv * gv - v_old) * (1 - b2)
    v.add_(at_g(v_step))
    step_size = lr * math.sqrt(1 - b2 ** step) / (1 - b1 ** step)
    denom = (v_step + v_old).sqrt() + eps
    p.add_(at_g((m_step + m_old) / denom * -step_size))
