"""torch's public names against omnitensor's (``tools/api_surface.py``): every public name
of the installed torch in the modules a torch program uses exists in omnitensor at the same
path with torch's parameter names, or ``docs/unsupported.md`` lists it with a reason; and no
module's coverage falls below the floor recorded here (raise a floor when you close gaps).
"""
from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import pytest

from omnitensor import torch_face

torch = pytest.importorskip("torch")

TOOL = Path(__file__).resolve().parents[2] / "tools" / "api_surface.py"

#: coverage (% of torch's public names matching) per module, as measured; only ever raise
FLOORS = {
    "torch": 89.2, "Tensor": 99.5, "nn": 100.0, "nn.functional": 97.1, "nn.init": 100.0,
    "optim": 100.0, "optim.lr_scheduler": 100.0, "autograd": 94.1, "func": 100.0,
    "linalg": 100.0, "fft": 100.0, "special": 100.0, "distributions": 100.0,
    "utils.data": 100.0, "distributed": 96.0, "amp": 100.0, "profiler": 90.0,
}
OVERALL_FLOOR = 95.0


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("api_surface", TOOL)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["api_surface"] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def surveyed(tool):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecated aliases warn when read
        return tool.survey(torch, torch_face)


def test_every_name_is_present_or_listed(tool, surveyed):
    entries = tool.read_unsupported()
    gaps = tool.unlisted(surveyed, entries)
    assert not gaps, (
        f"{len(gaps)} torch names are neither in omnitensor (with torch's parameter names) "
        f"nor listed in docs/unsupported.md:\n" +
        "\n".join(f"  {g.path}: {g.status} {g.detail}" for g in gaps[:50]) +
        "\nadd them, or list them with a reason (python tools/api_surface.py --markdown)")


def test_coverage_does_not_fall(tool, surveyed):
    print("\n" + tool.report(surveyed, tool.read_unsupported()))
    low = {mod: tool.coverage(rows) for mod, rows in surveyed.items()
           if tool.coverage(rows) < FLOORS.get(mod, 0.0)}
    assert not low, f"coverage fell below the recorded floor: {low} (floors: {FLOORS})"
    everything = [r for rows in surveyed.values() for r in rows]
    assert tool.coverage(everything) >= OVERALL_FLOOR


def test_entries_are_well_formed(tool):
    entries = tool.read_unsupported()
    assert entries, "docs/unsupported.md has no entries"
    text = tool.UNSUPPORTED.read_text(encoding="utf-8")
    items = [ln for ln in text.splitlines() if ln.lstrip().startswith(("- `", "* `"))]
    assert len(items) == len(entries), "an entry lacks its ': reason', or is listed twice"


def test_stale_entries_are_reported(tool, surveyed):
    """A listed name that now matches should leave the list: reported, not failed, so one
    engineer's new name does not break another's run."""
    old = tool.stale(surveyed, tool.read_unsupported())
    if old:
        warnings.warn(f"docs/unsupported.md lists names that now match; delete: "
                      f"{', '.join(old)}", stacklevel=1)


def test_parameter_names_are_compared(tool):
    def theirs(input, dim, *, keepdim=False):  # torch's names
        return input

    def ours(input, dim):
        return input

    def ours_kwargs(input, **kwargs):
        return input

    assert tool.missing_parameters(theirs, ours) == ["keepdim"]
    assert tool.missing_parameters(theirs, ours_kwargs) == []
    assert tool.missing_parameters(torch.add, ours) == []  # a builtin without a signature
