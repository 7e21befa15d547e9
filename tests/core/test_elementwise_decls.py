"""The type-checker declarations of the generated elementwise functions follow the op table.

``core/ops/elementwise.py`` makes ``exp``, ``maximum``... from its table rows at import time,
which type checkers do not run; its ``if TYPE_CHECKING:`` block declares each of them so that
``from .elementwise import maximum`` type-checks. When this fails after a row was added or
renamed, paste the lines the message prints into that block.
"""
from __future__ import annotations

import ast
import builtins
import inspect
from pathlib import Path

from omnitensor.core.ops import elementwise as E

SRC = Path(E.__file__)


def _declared() -> dict[str, int]:
    """Name -> number of positional-only parameters, for each def in the TYPE_CHECKING block."""
    tree = ast.parse(SRC.read_text())
    blocks = [n for n in tree.body if isinstance(n, ast.If)
              and isinstance(n.test, ast.Name) and n.test.id == "TYPE_CHECKING"]
    assert len(blocks) == 1, "expected one module-level `if TYPE_CHECKING:` block"
    return {f.name: len(f.args.posonlyargs) for f in blocks[0].body
            if isinstance(f, ast.FunctionDef)}


def _explicit() -> set[str]:
    """Table ops that the module defines with a real ``def`` (add/subtract with alpha)."""
    tree = ast.parse(SRC.read_text())
    return {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}


def _line(name: str, arity: int) -> str:
    params = "x: Tensor, /" if arity == 1 else "x1: Any, x2: Any, /"
    noqa = "  # noqa: A001" if hasattr(builtins, name) else ""
    return f"    def {name}({params}) -> Tensor: ...{noqa}"


def test_every_generated_function_is_declared_with_its_arity() -> None:
    expected = {n: 1 for n in E.UNARY_OPS} | {n: 2 for n in E.BINARY_OPS}
    for n in _explicit():
        expected.pop(n, None)
    declared = _declared()
    missing = [_line(n, a) for n, a in expected.items() if declared.get(n) != a]
    extra = sorted(set(declared) - set(expected))
    assert not missing, "add to the TYPE_CHECKING block of elementwise.py:\n" + "\n".join(missing)
    assert not extra, f"declared but not generated from the table: {extra}"


def test_declared_names_exist_at_runtime_with_those_parameters() -> None:
    for name, arity in _declared().items():
        fn = getattr(E, name)
        params = list(inspect.signature(fn).parameters.values())
        assert len(params) == arity, name
        assert all(p.kind is p.POSITIONAL_ONLY for p in params), name
