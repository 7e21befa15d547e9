"""Backend's type-checker declarations of its elementwise primitives follow the name tuples.

Backends set ``add``, ``exp``... as plain attributes, so ``backends/base.py`` declares them
for type checkers in an ``if TYPE_CHECKING:`` block of the class. When a name is added to
``UNARY``, ``BINARY`` or ``REDUCTIONS``, add its declaration there too.
"""
from __future__ import annotations

import ast
from pathlib import Path

from omnitensor.backends import base


def _declared() -> list[str]:
    tree = ast.parse(Path(base.__file__).read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Backend")
    blocks = [n for n in cls.body if isinstance(n, ast.If) and isinstance(n.test, ast.Name)
              and n.test.id == "TYPE_CHECKING"]
    assert len(blocks) == 1, "expected one `if TYPE_CHECKING:` block in class Backend"
    return [a.target.id for a in blocks[0].body
            if isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name)]


def test_primitive_declarations_equal_the_name_tuples() -> None:
    declared = _declared()
    expected = list(base.UNARY + base.BINARY + base.REDUCTIONS)
    assert sorted(set(expected) - set(declared)) == [], "declare these in Backend"
    assert sorted(set(declared) - set(expected)) == [], "declared but not a primitive"
    assert len(declared) == len(set(declared))


def test_every_loaded_backend_provides_the_declared_primitives() -> None:
    import omnitensor as ot
    for dev in ot.devices():
        be = ot.device(dev).backend
        missing = [n for n in _declared() if not callable(getattr(be, n, None))]
        assert not missing, f"{dev}: {missing}"
