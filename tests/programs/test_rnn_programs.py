"""Recurrent models written the way torch scripts write them, trained for a few dozen steps
on every device; each asserts that its loss falls below a threshold.

* a character-level LSTM language model in the shape of pytorch/examples'
  word_language_model (Embedding -> multi-layer LSTM with dropout -> Linear, batchify,
  bptt windows, hidden state detached between batches, gradient clipping);
* a sequence-to-one GRU classifier over variable-length token sequences fed as a
  PackedSequence (pack_padded_sequence with unsorted lengths, the final hidden state
  classified);
* a two-layer LSTMCell loop predicting a sine wave one step ahead and then
  free-running, in the shape of pytorch/examples' time_sequence_prediction.
"""
import math

import numpy as np
import pytest

import omnitensor as ot
from omnitensor import nn, optim
from omnitensor.nn.utils.rnn import pack_padded_sequence

TEXT = ("the quick brown fox jumps over the lazy dog. "
        "a stitch in time saves nine. ") * 12


# ------------------------------------------------------------- char-level language model
class RNNModel(nn.Module):
    """Encoder, recurrent module and decoder (word_language_model's RNNModel)."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.2):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers
        self.init_weights()

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def batchify(data, bsz, device):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous().to(device)


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].reshape(-1)
    return data, target


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, ot.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def test_char_lstm_language_model_trains(device):
    ot.manual_seed(1111)
    chars = sorted(set(TEXT))
    ids = ot.tensor([chars.index(c) for c in TEXT], dtype=ot.int64)
    batch_size, bptt, clip = 8, 12, 0.5
    train_data = batchify(ids, batch_size, device)
    model = RNNModel("LSTM", len(chars), 24, 48, 2, dropout=0.1).to(device)
    criterion = nn.NLLLoss()
    optimizer = optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _epoch in range(6):
        model.train()
        hidden = model.init_hidden(batch_size)
        for i in range(0, train_data.size(0) - 1, bptt):
            data, targets = get_batch(train_data, i, bptt)
            hidden = repackage_hidden(hidden)
            model.zero_grad()
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
            losses.append(loss.item())
    assert len(losses) >= 60
    assert losses[0] > math.log(len(chars)) - 0.3  # starts near uniform
    last_epoch = float(np.mean(losses[-10:]))
    assert last_epoch < 1.5, losses[::5]
    # evaluation mode: deterministic, and the trained model predicts the text well
    model.eval()
    with ot.no_grad():
        hidden = model.init_hidden(batch_size)
        data, targets = get_batch(train_data, 0, bptt)
        out1, _ = model(data, hidden)
        out2, _ = model(data, hidden)
    np.testing.assert_array_equal(out1.cpu().numpy(), out2.cpu().numpy())
    assert nn.functional.nll_loss(out1, targets).item() < 1.8


# -------------------------------------------------------- packed-sequence GRU classifier
class SeqClassifier(nn.Module):
    def __init__(self, vocab, emb, hidden, classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=0)
        self.gru = nn.GRU(emb, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embedding(tokens), lengths, batch_first=True,
                                      enforce_sorted=False)
        _, h_n = self.gru(packed)
        return self.fc(h_n[-1])


def _token_batches(rng, n_batches, batch, vocab, max_len):
    """Padded token sequences (0 = padding) and a label that depends on each sequence's
    last real token, so reading padding as data would hide the answer."""
    for _ in range(n_batches):
        lengths = rng.integers(2, max_len + 1, size=batch)
        tokens = np.zeros((batch, max_len), dtype=np.int64)
        for b, n in enumerate(lengths):
            tokens[b, :n] = rng.integers(1, vocab, size=n)
        labels = tokens[np.arange(batch), lengths - 1] % 3
        yield tokens, lengths, labels


def test_packed_gru_classifier_trains(device):
    ot.manual_seed(0)
    rng = np.random.default_rng(0)
    vocab, max_len = 7, 9
    model = SeqClassifier(vocab, 8, 24, 3).to(device)
    optimizer = optim.Adam(model.parameters(), lr=0.02)
    criterion = nn.CrossEntropyLoss()
    losses = []
    for tokens, lengths, labels in _token_batches(rng, 60, 32, vocab, max_len):
        x = ot.tensor(tokens, device=device)
        y = ot.tensor(labels, device=device)
        optimizer.zero_grad()
        loss = criterion(model(x, ot.tensor(lengths)), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[0] > 0.9
    assert np.mean(losses[-5:]) < 0.35, losses[::6]
    model.eval()
    tokens, lengths, labels = next(_token_batches(np.random.default_rng(99), 1, 200, vocab,
                                                  max_len))
    with ot.no_grad():
        pred = model(ot.tensor(tokens, device=device), lengths).argmax(1).cpu().numpy()
    assert (pred == labels).mean() > 0.9


# ------------------------------------------------------------ LSTMCell sine prediction
class Sequence(nn.Module):
    def __init__(self, hidden=24):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, input, future=0):
        outputs = []
        n = input.size(0)
        h_t = ot.zeros(n, self.hidden, dtype=input.dtype, device=input.device)
        c_t = ot.zeros(n, self.hidden, dtype=input.dtype, device=input.device)
        h_t2 = ot.zeros(n, self.hidden, dtype=input.dtype, device=input.device)
        c_t2 = ot.zeros(n, self.hidden, dtype=input.dtype, device=input.device)
        output = None
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _ in range(future):  # predict the future from its own outputs
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return ot.cat(outputs, dim=1)


def test_lstmcell_sine_prediction_trains(device):
    ot.manual_seed(0)
    rng = np.random.default_rng(2)
    length, n = 16, 16
    phase = rng.uniform(0, 2 * math.pi, size=(n, 1))
    wave = np.sin(np.arange(length + 1)[None, :] * 0.4 + phase).astype(np.float32)
    inp = ot.tensor(wave[:, :-1], device=device)
    target = ot.tensor(wave[:, 1:], device=device)
    seq = Sequence().to(device)
    criterion = nn.MSELoss()
    optimizer = optim.Adam(seq.parameters(), lr=0.02)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = criterion(seq(inp), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[0] > 0.2
    assert losses[-1] < 0.035, losses[::5]
    with ot.no_grad():
        pred = seq(inp[:, :12], future=4)
    assert tuple(pred.shape) == (n, 16)
    assert np.isfinite(pred.cpu().numpy()).all()


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-q"])
