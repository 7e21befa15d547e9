"""benchmarks/chart.py draws the PNG of docs/benchmarks.md from the benchmarks' --json
files (the files' layout is the one overhead.py and compile.py write)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_chart_draws_both_panels_from_benchmark_json(tmp_path):
    pytest.importorskip("matplotlib")
    overhead = {"benchmark": "overhead", "date": "2026-12-02", "quick": True, "load": 1.0,
                "rows": [{"what": "tiny add (8 el.)", "numpy": 1e-6, "omnitensor": 3e-6,
                          "torch": 4e-6},
                         {"what": "16M float32 add", "numpy": 2e-2, "omnitensor": 1e-2}]}
    comp = {"benchmark": "compile", "date": "2026-12-02", "quick": True, "load": 1.0,
            "mlp_step_seconds": {"ot eager cpu": 1.6e-3, "compiled cpu": 1.1e-3,
                                 "torch eager cpu": 1.4e-3}}
    paths = []
    for name, res in (("overhead", overhead), ("compile", comp)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(res))
    out = tmp_path / "chart.png"
    p = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "chart.py"), "--overhead",
                        str(paths[0]), "--compile", str(paths[1]), "--note", "test machine",
                        "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(data[16:20], "big")
    assert width > 1000  # two panels side by side


def test_chart_without_inputs_is_one_line():
    pytest.importorskip("matplotlib")
    p = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "chart.py")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--overhead" in p.stderr
