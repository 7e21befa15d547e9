"""The layer contracts (``.importlinter`` at the repository root) hold for the package.

Layers, top to bottom: compat faces and tools, libraries (data > distributed > nn | optim),
autograd and the public op faces (linalg, fft), core, backends, errors. A failure prints
import-linter's report: which module imports which, by which chain and line.
"""
from __future__ import annotations

import configparser
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

importlinter = pytest.importorskip(
    "importlinter", reason="import-linter is not installed (pip install import-linter)")

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / ".importlinter"


def _lint(cwd: Path, config: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    # a subprocess: import-linter imports the package it checks, and the check must see the
    # files on disk as they are, not modules this test session imported earlier
    code = ("import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename={str(config)!r}, no_cache=True, "
            "no_logo=True))")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_layer_contracts_hold() -> None:
    res = _lint(ROOT, CONFIG)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 broken" in res.stdout, res.stdout


def test_contracts_reject_core_importing_a_library(tmp_path: Path) -> None:
    """The same contract file fails on a package where core imports nn (so a kept contract
    means something)."""
    pkg = tmp_path / "omnitensor"
    parser = configparser.ConfigParser()
    parser.read(CONFIG)
    layers = parser["importlinter:contract:layers"]["layers"].split()
    _skeleton(pkg, parser, layers)
    (pkg / "core" / "tensor.py").write_text(textwrap.dedent("""
        def softmax(x):
            from ..nn import functional  # an upward import, hidden in a function
            return functional
    """))
    (pkg / "nn" / "functional.py").write_text("from ..core import tensor\n")
    # the package's own ignored imports do not occur in this small one
    config = tmp_path / ".importlinter"
    config.write_text(CONFIG.read_text().replace(
        "\nexhaustive = ", "\nunmatched_ignore_imports_alerting = none\nexhaustive = "))
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    res = _lint(tmp_path, config, env)
    assert res.returncode != 0, res.stdout + res.stderr
    assert "omnitensor.core.tensor -> omnitensor.nn.functional" in res.stdout, res.stdout


def _skeleton(pkg: Path, parser: configparser.ConfigParser, layers: list[str]) -> None:
    """An empty package with every layer and every module a contract names."""
    for name in {n for n in layers if n not in ":|"}:  # every layer must exist
        (pkg / name).mkdir(parents=True)
        (pkg / name / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    for sec in parser.sections():
        for key in ("source_modules", "forbidden_modules"):
            for mod in parser[sec].get(key, "").split():
                parts = mod.split(".")
                if parts[0] != "omnitensor" or len(parts) < 3:
                    continue
                path = pkg.joinpath(*parts[1:-1])
                path.mkdir(parents=True, exist_ok=True)
                (path / f"{parts[-1]}.py").write_text("")
    for sec in parser.sections():  # the inner layers contracts (core.ops): their modules
        if sec == "importlinter:contract:layers" or parser[sec].get("type") != "layers":
            continue
        for container in parser[sec]["containers"].split():
            path = pkg.joinpath(*container.split(".")[1:])
            path.mkdir(parents=True, exist_ok=True)
            (path / "__init__.py").write_text("")
            for name in {n for n in parser[sec]["layers"].split() if n not in ":|"}:
                (path / f"{name}.py").write_text("")


def test_contracts_reject_the_compiler_importing_a_vendor_library(tmp_path: Path) -> None:
    """The compiler may not import a vendor runtime (pyopencl) nor a backend's internals
    (``backends.opencl``): fused kernels reach them through the ``fused_kernels`` hook."""
    pkg = tmp_path / "omnitensor"
    parser = configparser.ConfigParser()
    parser.read(CONFIG)
    _skeleton(pkg, parser, parser["importlinter:contract:layers"]["layers"].split())
    (pkg / "compiler" / "launch.py").write_text("import pyopencl\n")
    (pkg / "compiler" / "fused.py").write_text("from ..backends import opencl\n")
    config = tmp_path / ".importlinter"
    config.write_text(CONFIG.read_text().replace(
        "\nexhaustive = ", "\nunmatched_ignore_imports_alerting = none\nexhaustive = "))
    res = _lint(tmp_path, config, dict(os.environ, PYTHONPATH=str(tmp_path)))
    assert res.returncode != 0, res.stdout + res.stderr
    assert "omnitensor.compiler is not allowed to import pyopencl" in res.stdout, res.stdout
    assert "omnitensor.compiler.fused -> omnitensor.backends.opencl" in res.stdout, res.stdout


def test_contracts_reject_an_elementwise_op_importing_a_reduction(tmp_path: Path) -> None:
    """Inside core.ops the bands hold too: the elementwise family sits below the reductions
    built on it, so an import of reduction from elementwise (even in a function) fails."""
    pkg = tmp_path / "omnitensor"
    parser = configparser.ConfigParser()
    parser.read(CONFIG)
    _skeleton(pkg, parser, parser["importlinter:contract:layers"]["layers"].split())
    (pkg / "core" / "ops" / "elementwise.py").write_text(textwrap.dedent("""
        def add(x):
            from .reduction import sum  # an upward import, hidden in a function
            return sum
    """))
    config = tmp_path / ".importlinter"
    config.write_text(CONFIG.read_text().replace(
        "\nexhaustive = ", "\nunmatched_ignore_imports_alerting = none\nexhaustive = "))
    res = _lint(tmp_path, config, dict(os.environ, PYTHONPATH=str(tmp_path)))
    assert res.returncode != 0, res.stdout + res.stderr
    assert "omnitensor.core.ops.elementwise -> omnitensor.core.ops.reduction" in res.stdout, \
        res.stdout
