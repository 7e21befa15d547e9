"""Shared by the quickstarts: deterministic inputs and weights from NumPy (omnitensor's
generator is not torch's, so neither may draw them), the device from the `cuda` line, and
one JSON line of results that the test compares between real torch and omnitensor."""
import json
import sys

import numpy as np
import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
RNG = np.random.default_rng(0)


def arr(*shape, scale=1.0, dtype=np.float32):
    """A deterministic float array as a torch tensor on the host."""
    return torch.from_numpy(np.asarray(RNG.standard_normal(shape) * scale, dtype=dtype))


def ints(high, *shape):
    return torch.from_numpy(RNG.integers(0, high, size=shape).astype(np.int64))


def seed_module(module, scale=0.1):
    """Overwrite every parameter and floating buffer, in registration order."""
    with torch.no_grad():
        for p in list(module.parameters()) + [b for b in module.buffers()
                                               if b.is_floating_point()]:
            p.copy_(arr(*p.shape, scale=scale).to(p.device))
    return module


def num(t):
    """A JSON-able summary of a tensor (or a number): float values, rounded."""
    if isinstance(t, torch.Tensor):
        t = t.detach().cpu().double()
        return {"shape": list(t.shape), "values": [round(float(v), 6) for v in t.flatten()[:64]],
                "sum": float(t.sum())}
    return float(t)


def report(**results):
    print("RESULT " + json.dumps(results, default=num))
    sys.stdout.flush()
