"""The recurrence behind ``nn.RNN``/``LSTM``/``GRU`` and their cells (what torch's
``_VF.rnn_tanh``/``lstm``/``gru`` compute): one formula per cell, one time loop for every
layer, direction and packing, written with Tensor ops so autograd and every device come free.

Speed: the input projection ``x W_ih^T + b_ih`` of a layer does not depend on the
recurrence, so it is one matmul over all time steps; the loop then issues only the hidden
projection and the gate arithmetic per step. The per-step pieces of that projection come
from :func:`split`, whose backward is a single ``cat`` (one slice per step would
scatter each step's gradient into a zero tensor of the full size: quadratic in the sequence
length); the gate blocks of each step are split the same way.

Data layout: a batch of sequences is a 2-D tensor of rows, time-major, ``batch_sizes[t]``
rows for step ``t`` with decreasing batch sizes (a PackedSequence's layout; a padded batch
is the case of equal sizes). Sequences that end leave the batch from its end, which is how
torch packs, so the results (and gradients) are torch's.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..autograd.function import Function
from ..core.capture_hooks import composite
from ..core.ops.creation import zeros
from ..core.ops.join import cat, stack
from ..core.tensor import Tensor
from . import functional as F

__all__ = ["GATES", "CELLS", "split", "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell",
           "cell_forward", "rnn_forward"]

#: gate blocks stacked in weight_ih/weight_hh per mode (torch's order: LSTM i, f, g, o;
#: GRU r, z, n)
GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}

State = tuple  # (h,) for RNN/GRU, (h, c) for LSTM; every entry (batch, features)


# --------------------------------------------------------------------------- the cells
# Each takes ``gi``, the input projection of this step (bias included), the state, and the
# recurrent weights, and returns the new state. ``b_hh`` may be None when the caller folded
# it into ``gi`` (exact for RNN/LSTM, where both biases are simply added).
def rnn_tanh_cell(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None,
                  w_hr: Tensor | None = None) -> State:
    """``h' = tanh(gi + h W_hh^T + b_hh)``."""
    return ((gi + F.linear(state[0], w_hh, b_hh)).tanh(),)


def rnn_relu_cell(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None,
                  w_hr: Tensor | None = None) -> State:
    """``h' = relu(gi + h W_hh^T + b_hh)``."""
    return ((gi + F.linear(state[0], w_hh, b_hh)).relu(),)


def lstm_cell(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None,
              w_hr: Tensor | None = None) -> State:
    """``i, f, g, o`` gates; ``c' = f c + i g``, ``h' = o tanh(c')`` (then ``h' W_hr^T``
    with a projection)."""
    h, c = state
    i, f, g, o = split(gi + F.linear(h, w_hh, b_hh), [c.shape[1]] * 4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def gru_cell(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None,
             w_hr: Tensor | None = None) -> State:
    """``r, z = sigmoid(gi_rz + gh_rz)``, ``n = tanh(gi_n + r gh_n)`` with
    ``gh = h W_hh^T + b_hh`` (b_hn stays inside the reset gate, as in torch),
    ``h' = (1 - z) n + z h``."""
    h = state[0]
    hid = h.shape[1]
    gi_rz, gi_n = split(gi, [2 * hid, hid], 1)
    gh_rz, gh_n = split(F.linear(h, w_hh, b_hh), [2 * hid, hid], 1)
    r, z = split((gi_rz + gh_rz).sigmoid(), [hid, hid], 1)
    n = (gi_n + r * gh_n).tanh()
    return (n + z * (h - n),)


CELLS: dict[str, Callable[..., State]] = {"RNN_TANH": rnn_tanh_cell,
                                          "RNN_RELU": rnn_relu_cell, "LSTM": lstm_cell,
                                          "GRU": gru_cell}


def cell_forward(mode: str, x: Tensor, state: State, w_ih: Tensor, w_hh: Tensor,
                 b_ih: Tensor | None, b_hh: Tensor | None) -> State:
    """One step of a cell module on a 2-D batch ``x``."""
    return CELLS[mode](F.linear(x, w_ih, b_ih), state, w_hh, b_hh)


# ------------------------------------------------------------------------- the time loop
class _Split(Function):
    """``x.split(sizes, dim)`` with a backward that is one ``cat`` of the pieces'
    gradients (a slice per piece would scatter each gradient into a zero tensor of the
    full size, then add them all up)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, sizes: list, dim: int) -> tuple:
        ctx.sizes, ctx.dim, ctx.shape = sizes, dim, tuple(x.shape)
        return tuple(x.split(sizes, dim))

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        like = next(g for g in grads if g is not None)
        parts = []
        for g, n in zip(grads, ctx.sizes):
            if g is None:
                shape = list(ctx.shape)
                shape[ctx.dim] = n
                g = zeros(tuple(shape), dtype=like.dtype, device=like.device)
            parts.append(g)
        return cat(parts, ctx.dim), None, None


def split(x: Tensor, sizes: list, dim: int = 0) -> tuple:
    """Pieces of ``x`` along ``dim`` (views), differentiable with a one-``cat`` backward."""
    if len(sizes) == 1:
        return (x,)
    return _Split.apply(x, sizes, dim)


def _direction(cell: Callable[..., State], gi: Tensor, batch_sizes: list, state0: State,
               w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None,
               reverse: bool) -> tuple[Tensor, State]:
    """Run one direction of one layer: the output rows (same layout as ``gi``) and the
    final state (full batch, sorted order)."""
    steps = split(gi, batch_sizes, 0)
    outs = []
    if not reverse:
        state, done = state0, []
        for t, bs in enumerate(batch_sizes):
            if bs < state[0].shape[0]:  # sequences that ended: keep their final state
                done.append(tuple(s[bs:] for s in state))
                state = tuple(s[:bs] for s in state)
            state = cell(steps[t], state, w_hh, b_hh, w_hr)
            outs.append(state[0])
        if done:
            parts = [state] + done[::-1]
            state = tuple(cat([p[k] for p in parts], 0) for k in range(len(state)))
    else:
        last = batch_sizes[-1]
        state = state0 if last == state0[0].shape[0] else tuple(s[:last] for s in state0)
        for t in range(len(batch_sizes) - 1, -1, -1):
            bs, have = batch_sizes[t], state[0].shape[0]
            if bs > have:  # longer sequences join, starting from their initial state
                state = tuple(cat([s, s0[have:bs]], 0) for s, s0 in zip(state, state0))
            state = cell(steps[t], state, w_hh, b_hh, w_hr)
            outs.append(state[0])
        outs.reverse()
    return (outs[0] if len(outs) == 1 else cat(outs, 0)), state


@composite("rnn")
def rnn_forward(mode: str, x: Tensor, batch_sizes: Sequence[int], hx: State,
                weights: Sequence[tuple], num_layers: int, dropout: float, training: bool,
                bidirectional: bool) -> tuple[Tensor, State]:
    """A multi-layer (bi)directional recurrence over rows ``x`` ``(sum(batch_sizes), I)``.

    ``hx`` holds the initial states, each ``(num_layers * num_directions, B, *)``;
    ``weights`` one ``(w_ih, w_hh, b_ih, b_hh, w_hr)`` tuple per layer and direction (None
    for absent ones). Dropout ``p`` applies to the outputs of every layer but the last when
    training. Returns the last layer's output rows ``(N, num_directions * H_out)`` and the
    final states stacked like ``hx``.
    """
    cell = CELLS[mode]
    sizes = [int(b) for b in batch_sizes]
    dirs = 2 if bidirectional else 1
    initial = [h.unbind(0) for h in hx]
    finals: list[State] = []
    layer_in = x
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w_ih, w_hh, b_ih, b_hh, w_hr = weights[k]
            if mode != "GRU" and b_hh is not None:  # both biases are plain addends: fold
                b_ih = b_hh if b_ih is None else b_ih + b_hh
                b_hh = None
            gi = F.linear(layer_in, w_ih, b_ih)
            out, state = _direction(cell, gi, sizes, tuple(h[k] for h in initial), w_hh,
                                    b_hh, w_hr, reverse=d == 1)
            outs.append(out)
            finals.append(state)
        layer_in = outs[0] if dirs == 1 else cat(outs, 1)
        if dropout > 0 and training and layer < num_layers - 1:
            layer_in = F.dropout(layer_in, dropout, True)
    n_state = len(hx)
    return layer_in, tuple(stack([f[i] for f in finals], 0) for i in range(n_state))
