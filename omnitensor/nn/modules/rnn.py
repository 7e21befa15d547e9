"""``omnitensor.nn.modules.rnn``: torch's import path for these layers (they live in
:mod:`omnitensor.nn`)."""
from ._reexport import reexport

__all__, __getattr__ = reexport(__name__, [
    "RNNBase",
    "RNN",
    "LSTM",
    "GRU",
    "RNNCellBase",
    "RNNCell",
    "LSTMCell",
    "GRUCell",
])
