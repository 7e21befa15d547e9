"""torch's ``nn.AdaptiveLogSoftmaxWithLoss`` (Grave et al., "Efficient softmax approximation
for GPUs"): a head over the ``cutoffs[0]`` frequent classes plus one entry per tail
cluster, and per cluster a two-layer projection whose softmax is evaluated only for the rows
whose target falls in it."""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Sequence

from ..core.ops.creation import zeros
from ..core.tensor import Tensor
from . import functional as F
from .containers import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """torch's ``AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value=4.0,
    head_bias=False)``: ``forward(input, target)`` gives ``(output, loss)``, the target
    log-probabilities and their negated mean; ``log_prob`` and ``predict`` the full
    distribution and its argmax."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers "
                             "sorted in an increasing order, where each value is between 1 "
                             "and n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, **kw),
                                        Linear(hsz, osz, bias=False, **kw)))

    def reset_parameters(self) -> None:
        """Re-initialize the head and every projection as at construction."""
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection.children():
                layer.reset_parameters()

    def _check(self, input: Tensor, target: Tensor) -> None:  # noqa: A002
        if target.ndim == 1:
            if input.shape[0] != target.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input.ndim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {list(input.shape)}")
        elif target.ndim == 0:
            if input.ndim != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {list(input.shape)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

    def forward(self, input_: Tensor, target_: Tensor) -> Any:
        self._check(input_, target_)
        batched = target_.ndim > 0
        x = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        output = zeros(target.shape[0], dtype=x.dtype, device=x.device)
        head_index = target
        bounds = [0] + self.cutoffs
        used = 0
        for i in range(len(bounds) - 1):
            lo, hi = bounds[i], bounds[i + 1]
            mask = (target >= lo) & (target < hi)
            rows = mask.nonzero().reshape(-1)
            used += int(rows.numel())
            if i == 0 or rows.numel() == 0:
                continue
            head_index = head_index.masked_fill(mask, self.shortlist_size + i - 1)
            relative = target.index_select(0, rows) - lo
            logp = F.log_softmax(self.tail[i - 1](x.index_select(0, rows)), dim=1)
            output = output.index_add(0, rows, logp.gather(1, relative.unsqueeze(1))
                                      .squeeze(1))
        if used != target.shape[0]:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logp = F.log_softmax(self.head(x), dim=1)
        output = output + head_logp.gather(1, head_index.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        """The log-probabilities of all ``n_classes`` classes, ``(N, n_classes)``."""
        from ..core.ops.join import cat
        head_logp = F.log_softmax(self.head(input), dim=1)
        parts = [head_logp[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head_logp[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def predict(self, input: Tensor) -> Tensor:  # noqa: A002
        """The most probable class of each row (``log_prob(input).argmax(dim=1)``)."""
        return self.log_prob(input).argmax(dim=1)
