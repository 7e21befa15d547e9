"""Small models and a torch-style training step shared by the compile tests."""
from __future__ import annotations

from typing import Any, Callable

import omnitensor as ot
from omnitensor import nn
from omnitensor.nn import functional as F


class MLP(nn.Module):
    def __init__(self, sizes: tuple[int, ...] = (16, 32, 32, 4), dropout: float = 0.0) -> None:
        super().__init__()
        layers: list = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
            if dropout:
                layers.append(nn.Dropout(dropout))
        self.net = nn.Sequential(*layers[:-2 if dropout else -1])

    def forward(self, x: Any) -> Any:
        return self.net(x)


class CNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x: Any) -> Any:
        return self.fc(self.pool(F.relu(self.bn(self.conv(x)))).flatten(1))


class LSTMNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(5, 8, num_layers=2, batch_first=True)
        self.fc = nn.Linear(8, 3)

    def forward(self, x: Any) -> Any:
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


class Encoder(nn.Module):
    def __init__(self, dropout: float = 0.1) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=dropout, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.fc = nn.Linear(16, 3)

    def forward(self, x: Any) -> Any:
        return self.fc(self.enc(x).mean(1))


#: name -> (model class, input shape, number of classes)
MODELS: dict[str, tuple[Callable[[], Any], tuple[int, ...], int]] = {
    "mlp": (lambda: MLP(dropout=0.2), (8, 16), 4),
    "cnn": (CNN, (4, 1, 8, 8), 3),
    "lstm": (LSTMNet, (4, 6, 5), 3),
    "encoder": (Encoder, (4, 6, 16), 3),
}

OPTIMIZERS: dict[str, Callable[[Any], Any]] = {
    "sgd_momentum": lambda ps: ot.optim.SGD(ps, lr=0.05, momentum=0.9),
    "adam": lambda ps: ot.optim.Adam(ps, lr=0.01),
    "adamw_amsgrad": lambda ps: ot.optim.AdamW(ps, lr=0.01, amsgrad=True),
}


def train_step(model: Any, opt: Any, x: Any, y: Any) -> Any:
    """One torch-style training step: forward, loss, backward, update."""
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.detach()


def make(name: str, opt_name: str, device: Any, seed: int = 0) -> tuple[Any, Any]:
    ot.manual_seed(seed)
    model = MODELS[name][0]().to(device)
    return model, OPTIMIZERS[opt_name](model.parameters())


def batches(name: str, device: Any, n: int, seed: int = 1) -> list[tuple[Any, Any]]:
    _cls, shape, classes = MODELS[name]
    ot.manual_seed(seed)
    return [(ot.rand(*shape, device=device), ot.randint(0, classes, (shape[0],), device=device))
            for _ in range(n)]


def sgd_steps(model: Any, device: Any, compiled: bool, steps: int = 4) -> tuple:
    """``steps`` SGD-momentum steps of ``model`` (64 features in, 10 classes) on one fixed
    batch, eager or compiled: (losses, parameters, gradients, the step function)."""
    import numpy as np
    opt = ot.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    rng = np.random.default_rng(0)
    X = ot.tensor(rng.standard_normal((64, 64)).astype(np.float32), device=device)
    Y = ot.tensor(rng.integers(0, 10, 64), device=device)

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    f = ot.compile(step) if compiled else step
    losses = [float(f(X, Y)) for _ in range(steps)]
    return (losses, [p.detach().cpu().numpy() for p in model.parameters()],
            [p.grad.cpu().numpy() for p in model.parameters()], f)


def trace_graph(fn: Callable[..., Any], args: tuple) -> tuple:
    """(eager result, graph, the arrays of graph.inputs as the capture saw them)."""
    from omnitensor.compiler import capture
    rec = capture.Recorder(capture.graph_device(args, {}), capture.default_sources(fn, args, {}))
    with capture.recording(rec):
        res = fn(*args)
    outs = list(res) if isinstance(res, tuple) else [res]
    g = rec.graph([rec.value_of(t._data) for t in outs], [])
    return res, g, list(rec.input_arrays)


#: declarations that let a host C++ compiler check the syntax of generated CUDA C (the
#: kernels' prelude includes cuda_fp16.h, written empty next to the source)
CUDA_SYNTAX_SHIM = (
    "#include <cmath>\n#define __global__\n#define __device__\nstruct D { long x; };\n"
    "static D blockIdx, blockDim, threadIdx;\nusing std::isnan;\n"
    "struct float2 { float x, y; };\nstruct double2 { double x, y; };\n"
    "struct __half { unsigned short b; };\nfloat __half2float(__half);\n"
    "__half __ushort_as_half(unsigned short);\n"
    "unsigned short __half_as_ushort(__half);\n__half __float2half_rn(float);\n"
    "float __int_as_float(int);\n")
