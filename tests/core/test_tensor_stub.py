"""The committed Tensor stub (``omnitensor/core/tensor.pyi``) is current and complete.

Tensor's methods are bound at import time, so editors and type checkers see them only
through the generated stub. When this fails, run ``python tools/gen_tensor_stub.py`` and
commit the new stub with the method you added or changed.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import omnitensor as ot

ROOT = Path(__file__).resolve().parents[2]
STUB = ROOT / "omnitensor" / "core" / "tensor.pyi"


def test_stub_is_current() -> None:
    # a fresh interpreter: the stub describes the class as `import omnitensor` builds it
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_tensor_stub.py"), "--check"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, (res.stdout + res.stderr +
                                 "\nrun: python tools/gen_tensor_stub.py")


def _stub_class_members() -> set[str]:
    tree = ast.parse(STUB.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    names = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_stub_names_every_public_tensor_attribute() -> None:
    public = {n for n in dir(ot.Tensor) if not n.startswith("_")}
    missing = public - _stub_class_members()
    assert not missing, f"missing from tensor.pyi: {sorted(missing)}"
    assert len(public) > 400  # the op table's methods, not just the class body


def test_stub_signatures_follow_the_functions() -> None:
    tree = ast.parse(STUB.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    fns = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    args = [a.arg for a in fns["sum"].args.posonlyargs + fns["sum"].args.args]
    assert args[0] == "self" and "dim" in args and "keepdim" in args
    assert ast.unparse(fns["exp"].returns) == "Tensor"
    assert ast.unparse(fns["__add__"].returns) == "Tensor"


def test_package_is_marked_typed() -> None:
    assert (ROOT / "omnitensor" / "py.typed").is_file()
