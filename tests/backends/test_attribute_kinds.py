"""Every public attribute of every backend has one declared kind (``backends/base.py``).

The one interposer (``backends/interpose.py``: capture, segmented replay, the profiler, the
device guard) decides what to do with a backend attribute from its kind alone; an
attribute without one would be run unrecorded, untimed or on the wrong device. A new
backend attribute must be declared in ``base.ATTRIBUTE_KINDS`` or this test fails.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from omnitensor.backends import base, registry


def _unclassified(be: object) -> list[str]:
    return sorted(n for n in dir(be) if base.attribute_kind(n) is None)


def _misclassified(be: object) -> list[str]:
    """Attributes whose value contradicts their kind (data that is callable, an op that
    is not)."""
    bad = []
    cls = type(be)
    for n in dir(be):
        kind = base.attribute_kind(n)
        if kind is None or n.startswith("_"):
            continue
        v = getattr(be, n)
        if kind == base.DATA:
            ok = isinstance(getattr(cls, n, None), property) or not callable(v) \
                or isinstance(v, type)
        elif n in base.OPTIONAL_HOOKS:
            ok = v is None or callable(v)
        else:
            ok = callable(v)
        if not ok:
            bad.append(f"{n} ({kind}: {type(v).__name__})")
    return bad


def test_the_declared_sets_do_not_overlap() -> None:
    groups = [set(base.UNARY + base.BINARY + base.REDUCTIONS), set(base.PRIMITIVES),
              set(base.HOST_READS), set(base.OPTIONAL_HOOKS - base.QUERIES),
              {"hook", "synchronize"}, set(base.QUERIES), set(base.DATA_ATTRIBUTES)]
    seen: set[str] = set()
    for g in groups:
        assert not (g & seen), sorted(g & seen)
        seen |= g
    assert seen == set(base.ATTRIBUTE_KINDS)


def test_every_attribute_of_the_base_class_is_classified() -> None:
    assert _unclassified(base.Backend()) == []
    assert _misclassified(base.Backend()) == []


@pytest.mark.parametrize("device_type", ["cpu", "opencl", "sycl"])
def test_every_attribute_of_a_real_backend_is_classified(device_type: str) -> None:
    be, why = registry.try_backend(device_type)
    if be is None:
        pytest.skip(f"{device_type}: {why}")
    assert _unclassified(be) == [], "declare these in backends/base.py ATTRIBUTE_KINDS"
    assert _misclassified(be) == []


def _cuda_declared_names() -> set[str]:
    """The public names the CuPy backend defines (class body, methods, ``self.x = ``),
    read from its source: it imports only where CuPy is installed."""
    tree = ast.parse((Path(base.__file__).parent / "cuda" / "backend.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "CupyBackend")
    names: set[str] = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    for node in ast.walk(cls):
        targets = node.targets if isinstance(node, ast.Assign) else []
        for t in targets:
            for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) \
                        and e.value.id == "self":
                    names.add(e.attr)
    return {n for n in names if not n.startswith("_")}


def test_every_attribute_of_the_cuda_backend_is_classified() -> None:
    try:
        from omnitensor.backends.cuda.backend import CupyBackend
    except ImportError:
        names = _cuda_declared_names()
        assert {"to_numpy", "transfer_from", "is_rocm", "memory_reserved"} <= names
    else:
        names = {n for n in dir(CupyBackend) if not n.startswith("_")}
        names |= _cuda_declared_names()
    assert sorted(n for n in names if base.attribute_kind(n) is None) == []


def test_an_undeclared_attribute_is_reported() -> None:
    class Grown(base.Backend):
        name = "grown"

        def frobnicate(self, x):  # a new primitive nobody declared
            return x

    assert _unclassified(Grown()) == ["frobnicate"]
