"""``omnitensor.nn.utils.rnn``: packed and padded batches of variable-length sequences
(torch's ``torch.nn.utils.rnn``).

A :class:`PackedSequence` stores the steps of a batch sorted by decreasing length, time-major:
``data`` holds, for each time step ``t``, the ``batch_sizes[t]`` sequences still running, so
a recurrent layer processes only real steps. ``batch_sizes`` is a CPU int64 tensor (as in
torch), ``sorted_indices``/``unsorted_indices`` map between the caller's batch order and the
sorted one (None when the batch was already sorted).

Every re-layout here (packing, padding, unpacking) is one row gather, built on the host from
the lengths, so it is differentiable with one scatter-add backward on any device instead of
one slice per time step.
"""
from __future__ import annotations

from typing import Any, Iterable, NamedTuple

import numpy as np

from ...core.ops.creation import full, tensor
from ...core.ops.join import cat
from ...core.tensor import Tensor
from ...core.dtypes import int64

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


class _PackedSequenceBase(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceBase):
    """A packed batch of variable-length sequences. Build one with
    :func:`pack_padded_sequence` or :func:`pack_sequence`, not by hand."""

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> "PackedSequence":
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # torch also accepts PackedSequence((data, batch_sizes))
            if not isinstance(data, (list, tuple)) or len(data) != 2:
                raise TypeError("PackedSequence: give data and batch_sizes (or a (data, "
                                "batch_sizes) pair)")
            data, batch_sizes = data
        if not isinstance(batch_sizes, Tensor) or batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be a CPU tensor. Instances of PackedSequence "
                "should never be created manually. They should be instantiated by functions "
                "like pack_sequence and pack_padded_sequence in nn.utils.rnn.")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with(self, data: Tensor) -> "PackedSequence":
        """The same packing around new ``data`` (indices follow its device)."""
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def to(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        """``data.to(...)``; the index tensors follow data's device, batch_sizes stays on
        the CPU."""
        return self._with(self.data.to(*args, **kwargs))

    def cpu(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        return self._with(self.data.cpu(*args, **kwargs))

    def cuda(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        return self._with(self.data.cuda(*args, **kwargs))

    def double(self) -> "PackedSequence":
        return self._with(self.data.double())

    def float(self) -> "PackedSequence":
        return self._with(self.data.float())

    def half(self) -> "PackedSequence":
        return self._with(self.data.half())

    def long(self) -> "PackedSequence":
        return self._with(self.data.long())

    def int(self) -> "PackedSequence":
        return self._with(self.data.int())

    def short(self) -> "PackedSequence":
        return self._with(self.data.short())

    def char(self) -> "PackedSequence":
        return self._with(self.data.char())

    def byte(self) -> "PackedSequence":
        return self._with(self.data.byte())

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"

    def is_pinned(self) -> bool:
        return bool(getattr(self.data, "is_pinned", lambda: False)())


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation tensor (None stays None)."""
    if permutation is None:
        return None
    p = _host_ints(permutation, "permutation")
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size)
    return tensor(inv, dtype=int64, device=permutation.device)


def _host_ints(values: Any, what: str) -> np.ndarray:
    """Integer values (a tensor on any device, a sequence, a NumPy array) as a 1-D
    NumPy int64 array."""
    if isinstance(values, Tensor):
        if values.dtype.kind not in "iu":
            raise TypeError(f"{what} must hold integers, got a {values.dtype} tensor")
        arr = np.asarray(values.detach().cpu().numpy())
    else:
        arr = np.asarray(values)
        if arr.size and arr.dtype.kind not in "iu":
            if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
                arr = arr.astype(np.int64)
            else:
                raise TypeError(f"{what} must hold integers, got {values!r}")
    if arr.ndim != 1:
        raise ValueError(f"{what} must be 1-D, got shape {arr.shape}")
    return arr.astype(np.int64)


def _gather_rows(rows: Tensor, index: np.ndarray, padding_value: float | None,
                 shape: tuple) -> Tensor:
    """``rows[index]`` reshaped to ``shape``; index ``len(rows)`` picks a padding row."""
    if padding_value is not None:
        pad = full((1,) + tuple(rows.shape[1:]), padding_value, dtype=rows.dtype,
                   device=rows.device)
        rows = cat([rows, pad], 0)
    out = rows.index_select(0, tensor(index, dtype=int64, device=rows.device))
    return out.reshape(shape)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) whose
    sequences have the given ``lengths``. With ``enforce_sorted`` the lengths must be
    decreasing; otherwise the batch is sorted here and ``sorted_indices`` records how."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pack_padded_sequence: input must be a Tensor, got "
                        f"{type(input).__name__}")
    if input.ndim < 2:
        raise ValueError(f"pack_padded_sequence: input must have at least 2 dims (time and "
                         f"batch), got shape {tuple(input.shape)}")
    lens = _host_ints(lengths, "lengths")
    t_dim, b_dim = (1, 0) if batch_first else (0, 1)
    steps, batch = input.shape[t_dim], input.shape[b_dim]
    if lens.size != batch:
        raise ValueError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                         f"{lens.size} (batch_size={batch})")
    if enforce_sorted:
        if np.any(lens[:-1] < lens[1:]):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` "
                "is True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        order, sorted_indices = np.arange(batch), None
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices = tensor(order, dtype=int64, device=input.device)
    if lens.size and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if lens.size and lens.max() > steps:
        raise ValueError(f"pack_padded_sequence: a length ({int(lens.max())}) exceeds the "
                         f"padded sequence length ({steps})")
    slens = lens[order]
    running = slens[None, :] > np.arange(int(slens[0]) if slens.size else 0)[:, None]
    t_idx, j_idx = np.nonzero(running)  # row-major: time-major packed order
    rows = order[j_idx]
    flat = rows * steps + t_idx if batch_first else t_idx * batch + rows
    rest = tuple(input.shape[2:])
    data = _gather_rows(input.reshape((steps * batch,) + rest), flat, None,
                        (flat.size,) + rest)
    batch_sizes = tensor(running.sum(axis=1).astype(np.int64), dtype=int64, device="cpu")
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Undo :func:`pack_padded_sequence`: the padded batch ``(T, B, *)`` (``(B, T, *)`` with
    ``batch_first``) in the caller's batch order, and the lengths (a CPU int64 tensor).
    ``total_length`` pads to that many steps (at least the longest sequence)."""
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence: expected a PackedSequence, got "
                        f"{type(sequence).__name__}")
    data, batch_sizes, _sorted, unsorted = sequence
    bs = _host_ints(batch_sizes, "batch_sizes")
    max_len, batch = bs.size, int(bs[0])
    steps = max_len
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(f"Expected total_length to be at least the length of the "
                             f"longest sequence in input, but got total_length="
                             f"{total_length} and max sequence length being {max_len}")
        steps = total_length
    offsets = np.concatenate([[0], np.cumsum(bs)[:-1]])
    slens = (bs[None, :] > np.arange(batch)[:, None]).sum(axis=1)  # per sorted position
    pos = np.arange(batch) if unsorted is None else _host_ints(unsorted, "unsorted_indices")
    t = np.arange(steps)
    # idx[b, t]: the packed row of step t of (caller's) sequence b, else the padding row
    idx = np.where(t[None, :] < slens[pos][:, None],
                   offsets[np.minimum(t, max_len - 1)][None, :] + pos[:, None],
                   data.shape[0])
    if not batch_first:
        idx = idx.T
    rest = tuple(data.shape[1:])
    padded = _gather_rows(data, idx.reshape(-1), padding_value, idx.shape + rest)
    return padded, tensor(slens[pos].astype(np.int64), dtype=int64, device="cpu")


def _as_list(sequences: Any, what: str) -> list:
    if isinstance(sequences, Tensor):
        return list(sequences.unbind(0))
    if not isinstance(sequences, Iterable):
        raise TypeError(f"{what}: expected a list of Tensors, got {type(sequences).__name__}")
    seqs = list(sequences)
    for s in seqs:
        if not isinstance(s, Tensor):
            raise TypeError(f"{what}: expected a list of Tensors, got an element of type "
                            f"{type(s).__name__}")
    return seqs


def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors of shape ``(L_i, *)`` into ``(L_max, B, *)`` (``(B, L_max, *)`` with
    ``batch_first``), padding with ``padding_value`` on ``padding_side``."""
    seqs = _as_list(sequences, "pad_sequence")
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    if not seqs:
        raise ValueError("pad_sequence: received an empty list of sequences")
    trailing = tuple(seqs[0].shape[1:])
    for i, s in enumerate(seqs):
        if s.ndim == 0:
            raise ValueError(f"pad_sequence: sequence {i} is 0-d; sequences must be at least "
                             f"1-D (length first)")
        if tuple(s.shape[1:]) != trailing:
            raise ValueError(f"pad_sequence: sequence {i} has trailing shape "
                             f"{tuple(s.shape[1:])}, sequence 0 has {trailing}; all must match")
    lens = np.array([s.shape[0] for s in seqs], dtype=np.int64)
    steps = int(lens.max())
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    t = np.arange(steps)[None, :]
    shift = (steps - lens)[:, None] if padding_side == "left" else 0
    src = t - shift  # position inside sequence b of padded step t
    idx = np.where((src >= 0) & (src < lens[:, None]), starts[:, None] + src, lens.sum())
    if not batch_first:
        idx = idx.T
    return _gather_rows(cat(seqs, 0), idx.reshape(-1), padding_value, idx.shape + trailing)


def unpad_sequence(padded_sequences: Tensor, lengths: Any,
                   batch_first: bool = False) -> list[Tensor]:
    """Split a padded batch back into its sequences (the inverse of :func:`pad_sequence`
    with right padding)."""
    lens = _host_ints(lengths, "lengths")
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    if lens.size != x.shape[0]:
        raise ValueError(f"unpad_sequence: got {lens.size} lengths for a batch of "
                         f"{x.shape[0]}")
    return [x[i, :int(n)] for i, n in enumerate(lens)]


def pack_sequence(sequences: Any, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors ``(L_i, *)`` (decreasing lengths unless
    ``enforce_sorted=False``)."""
    seqs = _as_list(sequences, "pack_sequence")
    lengths = [s.shape[0] for s in seqs]
    return pack_padded_sequence(pad_sequence(seqs), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a :class:`PackedSequence` holds (inverse of
    :func:`pack_sequence`)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
