"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and ``RNNCell``, ``LSTMCell``, ``GRUCell``
(torch's ``torch.nn.modules.rnn``: same arguments, parameter names, initialization, state
dict layout, input/output shapes, PackedSequence support and error messages). The math is
in :mod:`._rnn`."""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from ..core.ops.creation import empty, zeros
from ..core.tensor import Tensor
from . import _rnn
from . import init
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


class RNNBase(Module):
    """The shared body of RNN, LSTM and GRU (``mode`` is ``'RNN_TANH'``, ``'RNN_RELU'``,
    ``'LSTM'`` or ``'GRU'``). Parameters per layer ``k`` and direction (suffix ``_reverse``
    for the backward one): ``weight_ih_lk`` ``(gates*H, in)``, ``weight_hh_lk``
    ``(gates*H, H_out)``, ``bias_ih_lk``/``bias_hh_lk`` ``(gates*H,)`` when ``bias``,
    ``weight_hr_lk`` ``(proj_size, H)`` when ``proj_size > 0``; all U(-1/sqrt(H), 1/sqrt(H))."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if mode not in _rnn.GATES:
            raise ValueError("Unrecognized RNN mode: " + str(mode))
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or \
                not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, "
                          "so non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        for what, flag in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(flag, bool):
                raise TypeError(f"{what} should be of type bool, got: {type(flag).__name__}")
        for what, size in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(size, int) or isinstance(size, bool):
                raise TypeError(f"{what} should be of type int, got: {type(size).__name__}")
            if size <= 0:
                raise ValueError(f"{what} must be greater than zero")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, \
            proj_size
        gate_size = _rnn.GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        dirs = 2 if bidirectional else 1
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(dirs):
                layer_in = input_size if layer == 0 else real_hidden * dirs
                shapes: list[tuple[str, tuple[int, ...]]] = [
                    ("weight_ih", (gate_size, layer_in)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(empty(shape, **kw)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    # ----------------------------------------------------------------- torch's accessors
    @property
    def _flat_weights(self) -> list:
        """The parameters in torch's flat order (read live, so replaced or loaded
        parameters are always the ones used)."""
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """Per layer and direction, the list of its parameters (torch's ``all_weights``)."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op, as in torch off cuDNN. torch uses it to copy the weights into the one
        contiguous buffer cuDNN's fused kernel reads; omnitensor's recurrence runs matmuls
        on each parameter directly, so there is no flat buffer to refresh (and scripts
        that call it after ``.to(device)`` or ``DataParallel`` keep working)."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ------------------------------------------------------------------- argument checks
    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:  # noqa: A002
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                             f"model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.ndim != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.ndim}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _state_sizes(self, batch: int) -> list[tuple]:
        """Expected shapes of the initial states: h (and c for LSTM)."""
        n = self.num_layers * (2 if self.bidirectional else 1)
        h_out = self.proj_size if self.proj_size > 0 else self.hidden_size
        sizes = [(n, batch, h_out)]
        if self.mode == "LSTM":
            sizes.append((n, batch, self.hidden_size))
        return sizes

    def get_expected_hidden_size(self, input: Tensor,  # noqa: A002
                                 batch_sizes: Tensor | None) -> tuple[int, int, int]:
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.shape[0] if self.batch_first else input.shape[1]
        return self._state_sizes(batch)[0]

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        """Reorder the batch dim of the state(s) ``hx`` by ``permutation``."""
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(h.index_select(1, permutation) for h in hx)
        return hx.index_select(1, permutation)

    # ------------------------------------------------------------------------- forward
    def _run(self, input: Any, hx: tuple | None) -> tuple[Any, tuple]:  # noqa: A002
        """The shared forward: ``hx`` is a tuple of states (h,) or (h, c), or None."""
        name = type(self).__name__
        if isinstance(input, PackedSequence):
            x, batch_sizes_t, sorted_idx, unsorted_idx = input
            self.check_input(x, batch_sizes_t)
            batch_sizes = [int(b) for b in batch_sizes_t.tolist()]
            batch, is_batched, steps = batch_sizes[0], True, None
        else:
            if not isinstance(input, Tensor):
                raise TypeError(f"{name}: input must be a Tensor or a PackedSequence, got "
                                f"{type(input).__name__}")
            if input.ndim not in (2, 3):
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D "
                                 f"instead")
            is_batched = input.ndim == 3
            batch_dim = 0 if self.batch_first else 1
            x = input if is_batched else input.unsqueeze(batch_dim)
            self.check_input(x, None)
            if self.batch_first:
                x = x.transpose(0, 1)
            steps, batch = x.shape[0], x.shape[1]
            if steps == 0 or batch == 0:
                raise ValueError(f"{name}: input has {steps} time steps and batch size "
                                 f"{batch}; both must be positive")
            x = x.reshape(steps * batch, self.input_size)
            batch_sizes, sorted_idx, unsorted_idx = [batch] * steps, None, None
        expected = self._state_sizes(batch)
        if hx is None:
            hx = tuple(zeros(s, dtype=x.dtype, device=x.device) for s in expected)
        else:
            want = 3 if is_batched else 2
            if any(not isinstance(h, Tensor) for h in hx):
                raise TypeError(f"{name}: the initial state must be Tensor(s)")
            if any(h.ndim != want for h in hx):
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                dims = ", ".join(f"{h.ndim}-D" for h in hx)
                what = "hx and cx" if len(hx) == 2 else "hx"
                raise RuntimeError(f"For {kind} input, {what} should also be {want}-D but "
                                   f"got ({dims}) tensor" + ("s" if len(hx) == 2 else ""))
            if not is_batched:
                hx = tuple(h.unsqueeze(1) for h in hx)
            for i, (h, shape) in enumerate(zip(hx, expected)):
                if tuple(h.shape) != shape:
                    msg = "Expected hidden size {}, got {}" if len(hx) == 1 else \
                        f"Expected hidden[{i}] size " + "{}, got {}"
                    raise RuntimeError(msg.format(shape, list(h.shape)))
                if h.dtype != x.dtype:
                    raise ValueError(f"{name}: initial state dtype ({h.dtype}) does not "
                                     f"match input dtype ({x.dtype})")
            hx = self.permute_hidden(tuple(hx), sorted_idx)
        weights = []
        for names in self._all_weights:
            p = {n.split("_l")[0]: getattr(self, n) for n in names}
            weights.append((p["weight_ih"], p["weight_hh"], p.get("bias_ih"),
                            p.get("bias_hh"), p.get("weight_hr")))
        out, state = _rnn.rnn_forward(self.mode, x, batch_sizes, hx, weights,
                                      self.num_layers, self.dropout, self.training,
                                      self.bidirectional)
        state = self.permute_hidden(state, unsorted_idx)
        if isinstance(input, PackedSequence):
            return PackedSequence(out, batch_sizes_t, sorted_idx, unsorted_idx), state
        out = out.reshape(steps, batch, out.shape[-1])
        if self.batch_first:
            out = out.transpose(0, 1)
        if not is_batched:
            out = out.squeeze(batch_dim)
            state = tuple(s.squeeze(1) for s in state)
        return out, state

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:  # noqa: A002
        """``(output, h_n)``: output ``(T, B, D*H_out)`` (``(B, T, ...)`` with
        ``batch_first``, ``(T, D*H_out)`` unbatched, or a PackedSequence for a packed
        input) and the final hidden state ``(num_layers*D, B, H_out)``."""
        out, state = self._run(input, None if hx is None else (hx,))
        return out, state[0]


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ``relu``
    with ``nonlinearity='relu'``). Arguments as torch's: ``input_size, hidden_size,
    num_layers=1, nonlinearity='tanh', bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from "
                             f"'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory: gates ``i, f, g, o`` (stacked in that order in the weights),
    ``c_t = f c_{t-1} + i g``, ``h_t = o tanh(c_t)``; with ``proj_size > 0`` the hidden
    state is projected, ``h_t W_hr^T``. Returns ``(output, (h_n, c_n))``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor,  # noqa: A002
                               batch_sizes: Tensor | None) -> tuple[int, int, int]:
        batch = self.get_expected_hidden_size(input, batch_sizes)[1]
        return self._state_sizes(batch)[1]

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:  # noqa: A002
        """``(output, (h_n, c_n))``; ``hx`` is ``(h_0, c_0)`` or None (zeros)."""
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError("LSTM: hx must be a tuple (h_0, c_0) of two Tensors")
        out, state = self._run(input, None if hx is None else tuple(hx))
        return out, state


class GRU(RNNBase):
    """Gated recurrent unit: gates ``r, z, n`` (that order in the weights),
    ``n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn))``, ``h_t = (1 - z) n + z h_{t-1}``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ----------------------------------------------------------------------------- cells
class RNNCellBase(Module):
    """Shared body of the cells: ``weight_ih`` ``(chunks*H, in)``, ``weight_hh``
    ``(chunks*H, H)``, ``bias_ih``/``bias_hh`` ``(chunks*H,)``; U(-1/sqrt(H), 1/sqrt(H))."""

    _mode = ""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _step(self, input: Tensor, hx: tuple | None, n_state: int) -> tuple:  # noqa: A002
        """Check shapes, add/remove the batch dim of unbatched input, run one step."""
        name = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D "
                             f"instead")
        if hx is not None:
            for i, h in enumerate(hx):
                if not isinstance(h, Tensor) or h.ndim not in (1, 2):
                    what = "hidden" if n_state == 1 else f"hx[{i}]"
                    got = f"{h.ndim}D" if isinstance(h, Tensor) else type(h).__name__
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {got} "
                                     f"instead")
        is_batched = input.ndim == 2
        x = input if is_batched else input.unsqueeze(0)
        if x.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {x.shape[1]} "
                               f"expected {self.input_size}")
        if x.dtype != self.weight_ih.dtype:
            raise ValueError(f"{name}: input dtype ({x.dtype}) does not match weight "
                             f"dtype ({self.weight_ih.dtype})")
        if hx is None:
            z = zeros((x.shape[0], self.hidden_size), dtype=x.dtype, device=x.device)
            hx = (z,) * n_state
        else:
            hx = tuple(hx) if is_batched else tuple(h.unsqueeze(0) for h in hx)
            for i, h in enumerate(hx):
                if h.shape[0] != x.shape[0]:
                    raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match "
                                       f"hidden{i} batch size {h.shape[0]}")
                if h.shape[1] != self.hidden_size:
                    raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got "
                                       f"{h.shape[1]}, expected {self.hidden_size}")
        state = _rnn.cell_forward(self._mode, x, hx, self.weight_ih, self.weight_hh,
                                  self.bias_ih, self.bias_hh)
        return state if is_batched else tuple(s.squeeze(0) for s in state)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or
    ``relu``)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        return self._step(input, None if hx is None else (hx,), 1)[0]


class LSTMCell(RNNCellBase):
    """One LSTM step: returns ``(h', c')``; ``hx`` is ``(h, c)`` or None (zeros)."""

    _mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple:  # noqa: A002
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError("LSTMCell: hx must be a tuple (h, c) of two Tensors")
        return self._step(input, hx, 2)


class GRUCell(RNNCellBase):
    """One GRU step: ``h'`` from gates ``r, z, n``."""

    _mode = "GRU"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        return self._step(input, None if hx is None else (hx,), 1)[0]
