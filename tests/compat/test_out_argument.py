"""torch's ``out=`` on the torch-face functions that define their own torch signature:
the result lands in ``out`` (the same object returned, tuples for tuple results), as in
torch, on every device (sort, max, min, var, std, nonzero and linspace took ``out=`` and
ignored it: ``torch.sort(x, out=(v, i))`` left ``v`` and ``i`` unwritten)."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor.torch_face as ot

torch = pytest.importorskip("torch")

CALLS = {  # name: (call with out=, the out tensors to pass)
    "sort": (lambda m, x, o: m.sort(x, 1, out=o),
             lambda m: (m.empty(3, 4), m.empty(3, 4, dtype=m.int64))),
    "max_dim": (lambda m, x, o: m.max(x, 1, out=o),
                lambda m: (m.empty(3), m.empty(3, dtype=m.int64))),
    "min_dim": (lambda m, x, o: m.min(x, 0, keepdim=True, out=o),
                lambda m: (m.empty(0), m.empty(0, dtype=m.int64))),
    "max_all": (lambda m, x, o: m.max(x, out=o), lambda m: m.empty(())),
    "var": (lambda m, x, o: m.var(x, 1, out=o), lambda m: m.empty(3)),
    "std": (lambda m, x, o: m.std(x, out=o), lambda m: m.empty(())),
    "nonzero": (lambda m, x, o: m.nonzero(x > 0, out=o), lambda m: m.empty(0, dtype=m.int64)),
    "linspace": (lambda m, x, o: m.linspace(0, 1, 5, device=x.device, out=o),
                 lambda m: m.empty(5)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_out_receives_the_result_as_in_torch(device, name):
    call, make_out = CALLS[name]
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    torch_out = make_out(torch)
    want = call(torch, torch.tensor(x), torch_out)
    out = make_out(ot)
    out = tuple(t.to(device) for t in out) if isinstance(out, tuple) else out.to(device)
    got = call(ot, ot.tensor(x, device=device), out)
    pairs = zip(torch_out if isinstance(torch_out, tuple) else (torch_out,),
                out if isinstance(out, tuple) else (out,),
                got if isinstance(got, tuple) else (got,),
                want if isinstance(want, tuple) else (want,))
    for w_out, o, g, w in pairs:
        assert g is o and w is w_out  # the out tensor itself comes back, in both
        assert tuple(o.shape) == tuple(w.shape)
        np.testing.assert_allclose(o.cpu().numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
