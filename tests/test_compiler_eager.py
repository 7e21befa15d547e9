"""omnitensor.compile runs eagerly (capture is not built): same object, same results, one
clear warning, torch's argument checks."""
from __future__ import annotations

import warnings

import pytest

import omnitensor as ot
from omnitensor import compiler, nn


def test_compile_returns_the_model_and_warns_once(device):
    compiler._WARNED = False
    model = nn.Linear(4, 2).to(device)
    with pytest.warns(UserWarning, match="runs eagerly"):
        compiled = ot.compile(model)
    assert compiled is model
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ot.compile(model, mode="reduce-overhead") is model   # no second warning
    x = ot.randn(3, 4, device=device)
    assert ot.equal(compiled(x), model(x)).all()


def test_decorator_forms():
    @ot.compile
    def f(x):
        return x * 2

    @ot.compile(fullgraph=True, dynamic=False)
    def g(x):
        return x + 1
    assert f(ot.ones(2)).tolist() == [2.0, 2.0] and g(ot.ones(2)).tolist() == [2.0, 2.0]
    assert ot.compiler.is_compiling() is False
    assert ot.compiler.disable(f) is f


@pytest.mark.parametrize("kwargs, match", [
    ({"mode": "fastest"}, "unknown mode"),
    ({"backend": "tensorrt"}, "unknown backend"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ot.compile(lambda x: x, **kwargs)
    with pytest.raises(TypeError, match="function or an nn.Module"):
        ot.compile(42)
