"""The primitive table (``omnitensor/kernels/primitives.py``) is complete, and its consumers
derive from it.

Every row has each field (or, for ONNX, an explicit reason it is not exported); every
consumer (the backend contract, the C and numba renderers, the complex helpers, the fusion
table, the ONNX mapping, the jit loader's rules, autocast, core's op rows) covers every row;
and no consumer keeps a list of primitive names of its own.
"""
from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import numpy as np
import pytest

import omnitensor
from omnitensor.backends import base
from omnitensor.compiler.fusion import table as fusion
from omnitensor.core import autocast_state
from omnitensor.core.ops import elementwise as core_ew
from omnitensor.jit import _primitive_rules as jit_rules
from omnitensor.kernels import ops, primitives as P, scalar
from omnitensor.kernels.dialect import CUDA_C, OPENCL_C
from omnitensor.onnx import _prims as onnx_prims

ROWS = P.PRIMITIVES
IDS = [p.name for p in ROWS]
BY_NAME = {p.name: p for p in ROWS}
#: one dtype of each kind
KIND_DTYPE = {"b": "bool", "i": "int32", "u": "uint32", "f": "float32", "c": "complex64"}
_FIELDS = {"T", "W", "K", "V", "RS"}


def _operands(p: P.Primitive) -> tuple[str, ...]:
    return ("x0", "x1")[:p.arity]


@pytest.mark.parametrize("p", ROWS, ids=IDS)
def test_every_row_is_complete(p):
    assert p.name.isidentifier() and p.arity in (1, 2)
    assert p.family in P.FAMILIES
    assert p.c and set(p.kinds) <= set("biufc"), "C templates per dtype kind"
    names = {"x"} if p.arity == 1 else {"a", "b"}
    for kind, tmpl in p.c.items():
        fields = {f for _, f, _, _ in string.Formatter().parse(tmpl) if f is not None}
        assert fields <= _FIELDS, f"{kind}: unknown template fields {fields - _FIELDS}"
        used = set(re.findall(r"(?<![.\w])([a-z])\b", tmpl.replace("{", " ").replace("}", " ")))
        assert used <= names, f"{kind}: {tmpl!r} reads {used - names}"
    assert p.numba, "the numba template"
    assert p.numba_kinds and set(p.numba_kinds) <= set(p.kinds) - {"c"}
    assert p.onnx[:1].isupper() or p.onnx in (P.DECOMPOSED, P.ALIAS) or (
        p.onnx.startswith("none: ") and len(p.onnx) > 20), "an ONNX op, or why not"
    assert p.fuse in P.FUSION_CLASSES or p.fuse == P.NOT_FUSED
    assert p.autocast in ("", P.FP32)
    assert p.out in P.OUTS
    assert not (p.out == "real" and "c" not in p.kinds)
    assert BY_NAME[p.name] is p


def test_the_backend_contract_is_the_table():
    assert set(base.UNARY) == {p.name for p in ROWS if p.arity == 1 and not p.hook}
    assert set(base.BINARY) == {p.name for p in ROWS if p.arity == 2 and not p.hook}
    assert base.PREDICATES == {p.name for p in ROWS if p.out == "bool" and not p.hook}
    assert {p.name for p in ROWS if p.hook} <= base.OPTIONAL_HOOKS
    for dev in omnitensor.devices():
        be = omnitensor.device(dev).backend
        assert [p.name for p in ROWS if not callable(getattr(be, p.name, None))
                and not p.hook] == [], dev


@pytest.mark.parametrize("p", ROWS, ids=IDS)
def test_every_dialect_renders_every_kind_of_the_row(p):
    for kind, dt in KIND_DTYPE.items():
        for d in (OPENCL_C, CUDA_C):
            e = scalar.expr(p.name, np.dtype(dt), _operands(p), d)
            assert (e is not None) == (kind in p.kinds), (kind, d.name)
        e = scalar.expr(p.name, np.dtype(dt), _operands(p), scalar.NUMBA)
        assert (e is not None) == (kind in p.numba_kinds), (kind, "numba")
        if e is not None:
            compile(e, p.name, "eval")  # valid Python for numba
    assert ops.FAMILY[p.name] == p.family


@pytest.mark.parametrize("p", [p for p in ROWS if "c" in p.kinds],
                         ids=[p.name for p in ROWS if "c" in p.kinds])
def test_complex_rows_have_their_helpers(p):
    for dt, key in (("complex64", "c64"), ("complex128", "c128")):
        e = scalar.expr(p.name, np.dtype(dt), _operands(p), OPENCL_C)
        text = scalar.helpers(np.dtype(dt), OPENCL_C)
        for fn in re.findall(rf"\b({key}_\w+)\(", e or ""):
            assert f" {fn}(" in text, f"{fn} is not among {dt}'s helpers"


@pytest.mark.parametrize("p", ROWS, ids=IDS)
def test_fusion_follows_the_row(p):
    dtypes = ["bool", "int32", "float32", "float64"]
    fused = {(i, o) for i in dtypes for o in dtypes if fusion.supports(p.name, i, o)}
    if p.fuse == P.NOT_FUSED:
        assert fused == set()
    elif p.fuse in (P.MATH, P.PREDICATE):
        out = "bool" if p.fuse == P.PREDICATE else "float32"
        assert ("float32", out) in fused
    else:
        assert ("bool", "bool") in fused


@pytest.mark.parametrize("p", ROWS, ids=IDS)
def test_onnx_and_jit_cover_the_row(p):
    if p.onnx == P.ALIAS:
        assert p.name in onnx_prims.ALIASES
    elif p.onnx.startswith("none: "):
        assert p.name not in onnx_prims.PRIMS and p.name not in onnx_prims.ALIASES
    else:
        assert p.name in onnx_prims.PRIMS
    if not p.hook:
        assert p.name in jit_rules.RULES
        assert p.name in jit_rules.OUT_OK


@pytest.mark.parametrize("p", ROWS, ids=IDS)
def test_core_has_a_row_with_its_gradient(p):
    table = core_ew.UNARY_OPS if p.arity == 1 else core_ew.BINARY_OPS
    assert p.name in table, f"core/ops/elementwise.py has no row for {p.name}"
    assert (p.name in autocast_state.FP32_GPU) == (p.autocast == P.FP32)


def test_core_rows_outside_the_table_are_composites():
    """A core elementwise row that names no primitive (relu) computes through a forward of
    its own, never a backend attribute of that name."""
    rows = {**core_ew.UNARY_OPS, **core_ew.BINARY_OPS}
    extra = [op for name, op in rows.items() if name not in BY_NAME]
    assert all(op.forward is not None for op in extra), [op.name for op in extra]


#: the consumers that derive from the table (backends/base.py included: its optional hooks
#: name two rows, sigmoid and rsqrt)
CONSUMERS = ["kernels/ops.py", "kernels/numba_dialect.py", "kernels/scalar.py",
             "kernels/exprs.py", "kernels/elementwise.py", "backends/base.py",
             "backends/opencl/backend.py", "compiler/fusion/table.py",
             "jit/_primitive_rules.py", "onnx/_prims.py", "core/autocast_state.py"]


@pytest.mark.parametrize("path", CONSUMERS)
def test_no_consumer_keeps_its_own_list_of_primitives(path):
    """A literal tuple, list, set or dict holding three or more primitive names would be a
    second list to keep in step with the table."""
    root = Path(omnitensor.__file__).parent
    tree = ast.parse((root / path).read_text())
    for node in ast.walk(tree):
        elts = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if not isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)) or not elts:
            continue
        listed = [e.value for e in elts if isinstance(e, ast.Constant) and e.value in BY_NAME]
        assert len(listed) < 3, f"{path}:{node.lineno} lists {listed}"
