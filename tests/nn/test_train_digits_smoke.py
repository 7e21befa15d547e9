"""End to end: the digits example trains on every device (a short run of the MLP), and the
``omnitensor train-digits`` command reaches it."""
import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("sklearn")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


def _example():
    spec = importlib.util.spec_from_file_location("train_digits_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_mlp_learns_on_device(device):
    td = _example()
    data = td.load_digits_split(0)
    r = td.train(device, "mlp", data, epochs=2, batch_size=64, seed=0, progress=False)
    assert r["accuracy"] > 0.85 and r["loss"] < 1.5


def test_cli_subcommand_help(capsys):
    from omnitensor.cli import main
    with pytest.raises(SystemExit) as e:
        main(["train-digits", "--help"])
    assert e.value.code == 0
    assert "--epochs-mlp" in capsys.readouterr().out
