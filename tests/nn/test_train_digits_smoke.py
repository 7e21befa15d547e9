"""End to end: the digits job trains on every device (a short run of the MLP), and the
``omnitensor train-digits`` command reaches it."""
import pytest

pytest.importorskip("sklearn")


def _example():
    from omnitensor.demos import train_digits
    return train_digits


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
