"""omnitensor.compile's surface: torch's signature and argument checks, decorator forms,
modules, disable/is_compiling/reset."""
from __future__ import annotations

import pytest

import omnitensor as ot
from omnitensor import compiler, nn


def test_decorator_forms(device):
    @ot.compile
    def f(x):
        return x * 2

    @ot.compile(fullgraph=True, dynamic=False)
    def g(x):
        return x + 1
    x = ot.ones(2, device=device)
    for _ in range(3):
        assert f(x).tolist() == [2.0, 2.0] and g(x).tolist() == [2.0, 2.0]
    assert f.cache_info()["replays"] == 2 and g.cache_info()["traces"] == 1
    assert ot.compiler.is_compiling() is False
    assert ot.compile is compiler.compile


def test_is_compiling_inside_the_trace():
    @ot.compile
    def f(x):
        return x + (1 if compiler.is_compiling() else 100)
    assert f(ot.ones(2)).tolist() == [2.0, 2.0]
    assert f(ot.ones(2)).tolist() == [2.0, 2.0]     # the replay of the traced call
    assert f.cache_info()["replays"] == 1


def test_python_side_effects_keep_the_call_eager():
    seen = []

    @ot.compile
    def f(x):
        seen.append(1)               # a replay could not repeat this: eager, never stale
        return x + 1
    with pytest.warns(UserWarning, match="closure.seen"):
        f(ot.ones(2))
    f(ot.ones(2))
    assert len(seen) == 2


def test_compiled_module_forwards_attributes(device):
    model = nn.Linear(4, 2).to(device)
    compiled = ot.compile(model)
    assert compiled._orig_mod is model and compiled.weight is model.weight
    x = ot.randn(3, 4, device=device)
    with ot.no_grad():
        for _ in range(3):
            assert ot.equal(compiled(x), model(x)).all()
    assert compiled._compiled.cache_info()["replays"] == 2


def test_disable_and_reset():
    @compiler.disable
    def helper(x):
        return x * 3

    @ot.compile
    def f(x):
        return helper(x) + 1
    with pytest.warns(UserWarning, match="compiler.disable"):
        assert f(ot.ones(2)).tolist() == [4.0, 4.0]
    assert f(ot.ones(2)).tolist() == [4.0, 4.0]
    assert f.cache_info()["replayable"] == 0      # the disabled call keeps the key eager
    compiler.reset()
    assert f.cache_info()["traces"] == 0
    assert ot.compile(f, disable=True) is f


@pytest.mark.parametrize("kwargs, match", [
    ({"mode": "fastest"}, "unknown mode"),
    ({"backend": "tensorrt"}, "unknown backend"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ot.compile(lambda x: x, **kwargs)
    with pytest.raises(TypeError, match="function or an nn.Module"):
        ot.compile(42)
