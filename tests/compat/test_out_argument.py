"""torch's ``out=`` on the torch face: every function torch gives ``out=`` takes it (from
torch's own schemas, omnitensor/aten/out_arguments.txt), and the result lands in ``out``
as in torch (resized, same object returned, tuples for tuple results) on every device."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import omnitensor.torch_face as ot
import omnitensor.torch_linalg as ot_linalg
from omnitensor.torch_face_out import out_functions

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("module,face", [("torch", ot), ("torch.linalg", ot_linalg)])
def test_every_function_torch_gives_out_takes_it(module, face):
    missing = []
    for name in out_functions(module):
        fn = getattr(face, name, None)
        if fn is None:
            continue  # not there at all: docs/unsupported.md lists it
        if "out" not in inspect.signature(fn).parameters:
            missing.append(name)
    assert not missing, f"{module}: no out= on {missing}"


def _x(m, dev):
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    return m.tensor(x, device=dev) if m is ot else m.tensor(x)


CALLS = {  # name: (call with out=, the out tensors to pass)
    "exp": (lambda m, x, o: m.exp(x, out=o), lambda m: m.empty(0)),
    "add_alpha": (lambda m, x, o: m.add(x, x, alpha=2, out=o), lambda m: m.empty(3, 4)),
    "sum_dim": (lambda m, x, o: m.sum(x, 1, out=o), lambda m: m.empty(7)),
    "mean_dim": (lambda m, x, o: m.mean(x, 0, keepdim=True, out=o), lambda m: m.empty(1, 4)),
    "matmul": (lambda m, x, o: m.matmul(x, x.T, out=o), lambda m: m.empty(3, 3)),
    "cat": (lambda m, x, o: m.cat([x, x], 0, out=o), lambda m: m.empty(2)),
    "clamp": (lambda m, x, o: m.clamp(x, -0.5, 0.5, out=o), lambda m: m.empty(3, 4)),
    "where": (lambda m, x, o: m.where(x > 0, x, m.zeros_like(x), out=o),
              lambda m: m.empty(3, 4)),
    "sort": (lambda m, x, o: m.sort(x, 1, out=o),
             lambda m: (m.empty(3, 4), m.empty(3, 4, dtype=m.int64))),
    "max_dim": (lambda m, x, o: m.max(x, 1, out=o),
                lambda m: (m.empty(3), m.empty(3, dtype=m.int64))),
    "topk": (lambda m, x, o: m.topk(x, 2, out=o),
             lambda m: (m.empty(3, 2), m.empty(3, 2, dtype=m.int64))),
    "cumsum": (lambda m, x, o: m.cumsum(x, 1, out=o), lambda m: m.empty(3, 4)),
    "linalg_inv": (lambda m, x, o: m.linalg.inv(m.matmul(x, x.T) + m.eye(3, device=x.device),
                                               out=o), lambda m: m.empty(3, 3)),
    "linspace": (lambda m, x, o: m.linspace(0, 1, 5, device=x.device, out=o),
                 lambda m: m.empty(5)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_out_receives_the_result_as_in_torch(device, name):
    call, make_out = CALLS[name]
    torch_out = make_out(torch)
    want = call(torch, _x(torch, "cpu"), torch_out)
    out = make_out(ot)
    out = tuple(t.to(device) for t in out) if isinstance(out, tuple) else out.to(device)
    got = call(ot, _x(ot, device), out)
    pairs = zip(torch_out if isinstance(torch_out, tuple) else (torch_out,),
                out if isinstance(out, tuple) else (out,),
                got if isinstance(got, tuple) else (got,),
                want if isinstance(want, tuple) else (want,))
    for w_out, o, g, w in pairs:
        assert g is o and w is w_out  # the out tensor itself comes back, in both
        assert tuple(o.shape) == tuple(w.shape) and str(o.dtype).split(".")[-1] == \
            str(w.dtype).split(".")[-1]
        np.testing.assert_allclose(o.cpu().numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def test_out_of_another_dtype_or_device_is_refused():
    x = ot.ones(3)
    with pytest.raises(Exception, match="dtype"):
        ot.exp(x, out=ot.empty(3, dtype=ot.int64))
    with pytest.raises(TypeError, match="out"):
        ot.sort(x, out=ot.empty(3))
