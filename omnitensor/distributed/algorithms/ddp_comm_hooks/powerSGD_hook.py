"""torch's PowerSGD communication hook (Vogels et al., 2019): :class:`PowerSGDState` and
:func:`powerSGD_hook`, with torch's algorithm and state.

Each iteration from ``start_powerSGD_iter`` on, a bucket's gradients (plus the error the
compression left last time, ``use_error_feedback``) are split: every matrix-shaped
gradient ``M`` (n x m, viewed as ``shape[0] x -1``) that rank-r compression shrinks by
more than ``min_compression_rate`` is replaced by ``P Q^T`` with ``P = orth(allreduce(M
Q))`` and ``Q = allreduce(M^T P) / world``; the other gradients are averaged as they are.
``Q`` starts random (the same on every rank: a seed drawn from ``state.rng``, as torch
draws it) and, with ``warm_start``, is reused the next iteration. Before
``start_powerSGD_iter`` the hook is ``allreduce_hook``.

The initial ``Q`` comes from NumPy's generator seeded with torch's seed, not from torch's
CPU generator, so a run is deterministic and equal across ranks but its random start is
not torch's (the tests substitute torch's values for ``_initial_qs`` to compare with torch).
Not there: ``batched_powerSGD_hook``.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterator

import numpy as np

from .... import linalg
from ....core import dtypes
from ....core.ops.creation import tensor as make_tensor, zeros
from ....core.ops.join import cat, stack
from ....core.ops.linalg_ops import bmm
from ....core.tensor import Tensor
from ....futures import Future
from ...collectives import all_reduce
from ...comm_hooks import GradBucket
from ...group import resolve_group
from .default_hooks import _allreduce_fut

__all__ = ["PowerSGDState", "powerSGD_hook"]


class PowerSGDState:
    """torch's ``PowerSGDState``: the hook's configuration, its per-bucket memory (errors,
    ``P``/``Q``) and iteration count; the ``state`` of ``register_comm_hook``."""

    __slots__ = ["process_group", "matrix_approximation_rank", "start_powerSGD_iter",
                 "min_compression_rate", "orthogonalization_epsilon", "use_error_feedback",
                 "warm_start", "batch_tensors_with_same_shape", "rng", "error_dict",
                 "p_memory_dict", "q_memory_dict", "iter", "total_numel_before_compression",
                 "total_numel_after_compression", "compression_stats_logging_frequency",
                 "next_stats_report"]

    def __init__(self, process_group: Any, matrix_approximation_rank: int = 1,
                 start_powerSGD_iter: int = 1_000, min_compression_rate: float = 2,
                 use_error_feedback: bool = True, warm_start: bool = True,
                 orthogonalization_epsilon: float = 0, random_seed: int = 0,
                 compression_stats_logging_frequency: int = 10_000,
                 batch_tensors_with_same_shape: bool = False) -> None:
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            # DDP rebuilds its buckets after the first iteration (torch's rule, kept so
            # that programs written for torch behave the same)
            raise ValueError("Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or "
                             "`warm_start` is enabled, because PowerSGD can only be applied "
                             "after the first two iterations in DDP.")
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback = use_error_feedback
        self.warm_start = warm_start
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape
        self.rng = np.random.RandomState(random_seed)
        self.error_dict: dict[int, Tensor] = {}
        self.p_memory_dict: dict[int, Tensor] = {}
        self.q_memory_dict: dict[int, Tensor] = {}
        self.iter = 0
        self.total_numel_before_compression = 0
        self.total_numel_after_compression = 0
        self.compression_stats_logging_frequency = max(1, compression_stats_logging_frequency)
        self.next_stats_report = 0

    def maybe_increase_iter(self, bucket: GradBucket) -> None:
        """Count an iteration when its last bucket is processed."""
        if bucket.is_last():
            self.iter += 1

    def compression_stats(self) -> tuple[float, int, int]:
        """(rate, elements before compression, elements after), summed over the run."""
        after = self.total_numel_after_compression
        rate = self.total_numel_before_compression / after if after > 0 else 0
        return rate, self.total_numel_before_compression, after


def _should_compress(n: int, m: int, rank: int, min_rate: float) -> tuple[bool, int, int]:
    """(worth compressing, elements uncompressed, elements compressed): torch's test."""
    full, small = n * m, (n + m) * rank
    return small * min_rate < full, full, small


def _orthogonalize(matrices: Tensor, epsilon: float = 0) -> None:
    """Orthonormalise the columns of each matrix of a (batch, n, r) tensor in place:
    Gram-Schmidt for rank <= 2 or half precision, else QR (torch's choice)."""
    rank = matrices.shape[2]
    if rank <= 2 or matrices.dtype in (dtypes.float16, dtypes.bfloat16):
        for i in range(rank):
            col = matrices[:, :, i:i + 1]
            norm = col.norm(dim=1, keepdim=True)
            col.div_(norm + epsilon if epsilon else norm)
            if i + 1 < rank:
                rest = matrices[:, :, i + 1:]
                rest.sub_((col * rest).sum(dim=1, keepdim=True) * col)
    else:
        matrices.copy_(linalg.qr(matrices).Q)


def _initial_qs(shapes: list[tuple], seed: int, like: Tensor) -> list[Tensor]:
    """Random starts for the Qs, one stream seeded with ``seed`` (drawn from state.rng, so
    the same on every rank), on ``like``'s device and dtype."""
    rng = np.random.default_rng(seed)
    return [make_tensor(rng.standard_normal(s).astype(np.float32), device=like.device)
            .to(like.dtype) for s in shapes]


def _split(state: PowerSGDState, tensors: list[Tensor]) -> tuple[list, list, int, int]:
    """Matrices worth compressing, the rest, and the sizes of their P and Q memory."""
    compress, plain = [], []
    p_size = q_size = 0
    for t in tensors:
        matrix = t.view(t.shape[0], -1)
        n, m = matrix.shape
        rank = min(n, m, state.matrix_approximation_rank)
        worth, before, after = _should_compress(n, m, rank, state.min_compression_rate)
        state.total_numel_before_compression += before
        if worth:
            compress.append(matrix)
            p_size += n * rank
            q_size += m * rank
            state.total_numel_after_compression += after
        else:
            plain.append(t)
            state.total_numel_after_compression += before
    return compress, plain, p_size, q_size


def _batches(state: PowerSGDState, by_shape: dict) -> Iterator[Tensor]:
    for group in by_shape.values():
        if state.batch_tensors_with_same_shape and len(group) > 1:
            yield stack(group)
        else:
            yield from (t.unsqueeze(0) for t in group)


def _error_feedback(state: PowerSGDState, index: int, buf: Tensor) -> Tensor | None:
    """Add the bucket's error of the last step (torch's error feedback); return a copy of
    the corrected buffer, from which the new error is measured after decompression."""
    if not state.use_error_feedback:
        return None
    if index in state.error_dict:
        buf.add_(state.error_dict[index])
    else:
        state.error_dict[index] = zeros(buf.shape, dtype=buf.dtype, device=buf.device)
    return buf.detach().clone()


def _factor_views(state: PowerSGDState, index: int, compress: list) -> tuple:
    """The matrices to compress (batched by shape when asked) and their P and Q factors,
    as views into the bucket's P and Q memories: ``(by_shape, mats, ps, qs)``."""
    by_shape: dict = defaultdict(list)
    for t in compress:
        by_shape[tuple(t.shape)].append(t)
    mats, ps, qs = [], [], []
    p_at = q_at = 0
    for t in _batches(state, by_shape):
        b, n, m = t.shape
        r = min(n, m, state.matrix_approximation_rank)
        mats.append(t)
        ps.append(state.p_memory_dict[index][p_at:p_at + b * n * r].view(b, n, r))
        qs.append(state.q_memory_dict[index][q_at:q_at + b * m * r].view(b, m, r))
        p_at, q_at = p_at + b * n * r, q_at + b * m * r
    return by_shape, mats, ps, qs


def _start_qs(state: PowerSGDState, qs: list, randomize: bool, buf: Tensor) -> None:
    """Q's starting point, orthogonalized: random (from the state's seed, the same on
    every rank) when not warm-starting, else last step's."""
    if randomize:
        seed = int(state.rng.randint(1_000_000_000))
        for q, start in zip(qs, _initial_qs([tuple(q.shape) for q in qs], seed, buf)):
            q.copy_(start)
    for q in qs:
        _orthogonalize(q, state.orthogonalization_epsilon)


def powerSGD_hook(state: PowerSGDState, bucket: GradBucket) -> Future:
    """torch's ``powerSGD_hook``: average the bucket through rank-``r`` approximations of
    its matrix-shaped gradients (see the module doc)."""
    group = resolve_group(state.process_group)
    world = group.size()
    buf = bucket.buffer()
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        return _allreduce_fut(group, buf)
    index = bucket.index()
    saved = _error_feedback(state, index, buf)
    compress, plain, p_size, q_size = _split(state, bucket.gradients())
    plain_flat = (cat([t.reshape(-1) for t in plain]) if plain else
                  zeros((0,), dtype=buf.dtype, device=buf.device))
    randomize = not state.warm_start or index not in state.p_memory_dict
    if randomize:
        state.p_memory_dict[index] = zeros((p_size,), dtype=buf.dtype, device=buf.device)
        state.q_memory_dict[index] = zeros((q_size,), dtype=buf.dtype, device=buf.device)
    by_shape, mats, ps, qs = _factor_views(state, index, compress)
    _start_qs(state, qs, randomize, buf)
    for t, q, p in zip(mats, qs, ps):
        p.copy_(bmm(t, q))
    work = all_reduce(plain_flat, group=group, async_op=True)
    assert work is not None

    def unpack_and_reduce_ps(fut: Future) -> Tensor:
        flat = fut.value()[0].div_(world)
        at = 0
        for t in plain:
            t.copy_(flat[at:at + t.numel()].view(t.shape))
            at += t.numel()
        w = all_reduce(state.p_memory_dict[index], group=group, async_op=True)
        assert w is not None
        return w.get_future().wait()[0]

    def compute_qs(fut: Future) -> Tensor:
        for p in ps:
            _orthogonalize(p, state.orthogonalization_epsilon)
        for t, p, q in zip(mats, ps, qs):
            q.copy_(bmm(t.transpose(1, 2), p))
        w = all_reduce(state.q_memory_dict[index], group=group, async_op=True)
        assert w is not None
        return w.get_future().wait()[0]

    def decompress(fut: Future) -> Tensor:
        fut.value().div_(world)
        for p, q, t in zip(ps, qs, mats):
            t.copy_(bmm(p, q.transpose(1, 2)))
        if state.batch_tensors_with_same_shape:
            for t in mats:
                if t.shape[0] > 1:
                    for i, original in enumerate(by_shape[tuple(t.shape[1:])]):
                        original.copy_(t[i])
        if saved is not None:
            state.error_dict[index] = saved - buf
        if not state.warm_start:
            state.p_memory_dict.clear()
            state.q_memory_dict.clear()
        state.maybe_increase_iter(bucket)
        return buf

    return (work.get_future().then(unpack_and_reduce_ps).then(compute_qs)
            .then(decompress))
