"""torch.func.rearrange / functorch.einops.rearrange, jvp(strict=True) and functorch's
submodules, against real torch."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.func as of
import omnitensor.functorch.compile
import omnitensor.functorch.einops
import omnitensor.functorch.experimental
from omnitensor import functorch as oft

torch = pytest.importorskip("torch")
pytest.importorskip("einops")
PATTERNS = [("a b c -> c (a b)", {}), ("a (b c) d -> a b c d", {"b": 2}),
            ("a ... -> ... a", {}), ("a b c -> a () b c", {}), ("a b 1 -> b a", {})]


@pytest.mark.parametrize("pattern,sizes", PATTERNS)
def test_rearrange_equals_torch_values_and_gradients(pattern, sizes, device):
    shape = (2, 4, 1) if "1" in pattern.split("->")[0] else (2, 4, 3)
    x = np.random.default_rng(0).standard_normal(shape)
    tx = torch.tensor(x, requires_grad=True)
    ox = ot.tensor(x, device=device, requires_grad=True)
    ty = torch.func.rearrange(tx, pattern, **sizes)
    oy = of.rearrange(ox, pattern, **sizes)
    np.testing.assert_allclose(oy.detach().cpu().numpy(), ty.detach().numpy())
    w = np.arange(ty.numel(), dtype=np.float64).reshape(tuple(ty.shape))
    (ty * torch.tensor(w)).sum().backward()
    (oy * ot.tensor(w, device=device)).sum().backward()
    np.testing.assert_allclose(ox.grad.cpu().numpy(), tx.grad.numpy())
    assert oft.einops.rearrange is not None


def test_bad_pattern_is_a_value_error():
    with pytest.raises(ValueError):
        of.rearrange(ot.zeros(2, 3), "a b -> a c")


def test_jvp_strict_refuses_an_independent_output():
    def f(x):
        return ot.ones(3)
    with pytest.raises(RuntimeError):
        of.jvp(f, (ot.ones(3),), (ot.ones(3),), strict=True)
    out, tangent = of.jvp(f, (ot.ones(3),), (ot.ones(3),))
    assert float(tangent.abs().sum()) == 0.0
    with pytest.raises(RuntimeError):
        torch.func.jvp(lambda x: torch.ones(3), (torch.ones(3),), (torch.ones(3),), strict=True)


def test_functorch_submodules():
    x = ot.randn(6, 4)

    def f(v):
        return (v ** 2).sum(-1)
    assert ot.allclose(oft.experimental.chunk_vmap(f, chunks=2)(x), f(x))
    m = ot.nn.Linear(3, 2)
    xi = ot.randn(5, 3)
    assert ot.allclose(oft.compile.memory_efficient_fusion(m)(xi), m(xi), atol=1e-6)
    with pytest.raises(NotImplementedError):
        oft.compile.aot_function(f, None)
    assert not hasattr(oft, "linearize")  # torch.func has it, functorch does not
