"""SummaryWriter writes real event files: read back with tensorboard's own EventAccumulator
(the reader behind TensorBoard's UI), values logged from tensors on every device."""
from __future__ import annotations

import glob
import os
import struct
import zlib

import numpy as np
import pytest

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import omnitensor as ot
from omnitensor.utils.tensorboard import SummaryWriter

GUIDANCE = {"scalars": 0, "histograms": 0, "images": 0, "tensors": 0}


def _read(path: str) -> EventAccumulator:
    acc = EventAccumulator(path, size_guidance=GUIDANCE)
    acc.Reload()
    return acc


def test_scalars_histogram_image_text_round_trip(device, tmp_path):
    ot.manual_seed(0)
    w = ot.randn(1000, device=device)
    img = ot.rand(3, 8, 5, device=device)
    with SummaryWriter(log_dir=str(tmp_path)) as writer:
        for step in range(5):
            loss = (w * (step + 1)).abs().mean()          # a 0-d device tensor
            writer.add_scalar("train/loss", loss, step)
            writer.add_scalar("lr", 0.1 / (step + 1), global_step=step)
        writer.add_histogram("weights", w, 3)
        writer.add_image("sample", img, 0)
        writer.add_image("gray", ot.ones(4, 6, device=device), 1, dataformats="HW")
        writer.add_text("note", "hello **tensorboard**", 2)
    acc = _read(str(tmp_path))
    tags = acc.Tags()
    assert {"train/loss", "lr"} <= set(tags["scalars"])
    losses = acc.Scalars("train/loss")
    assert [e.step for e in losses] == list(range(5))
    expect = [float((w * (s + 1)).abs().mean()) for s in range(5)]
    np.testing.assert_allclose([e.value for e in losses], expect, rtol=1e-6)
    assert acc.Scalars("lr")[2].value == pytest.approx(0.1 / 3)
    (h,) = acc.Histograms("weights")
    wn = w.cpu().numpy().astype(np.float64)
    assert h.step == 3 and h.histogram_value.num == 1000
    assert h.histogram_value.min == pytest.approx(wn.min())
    assert h.histogram_value.max == pytest.approx(wn.max())
    assert h.histogram_value.sum == pytest.approx(wn.sum(), rel=1e-6)
    assert sum(h.histogram_value.bucket) == 1000
    (im,) = acc.Images("sample")
    assert (im.width, im.height) == (5, 8)
    png = im.encoded_image_string
    assert png.startswith(b"\x89PNG")
    # decode our PNG by hand: IHDR then one zlib IDAT of filter-0 scanlines
    idat = png[png.index(b"IDAT") + 4:png.index(b"IEND") - 8]
    rows = zlib.decompress(idat)
    pix = np.frombuffer(rows, np.uint8).reshape(8, 1 + 5 * 3)[:, 1:].reshape(8, 5, 3)
    want = np.clip(img.cpu().numpy().transpose(1, 2, 0) * 255, 0, 255).round().astype(np.uint8)
    assert np.array_equal(pix, want)
    assert struct.unpack(">II", png[16:24]) == (5, 8)
    assert acc.Images("gray")[0].width == 6
    (t,) = acc.Tensors("note/text_summary")
    assert t.tensor_proto.string_val[0] == b"hello **tensorboard**"


def test_add_scalars_writes_one_run_per_curve(tmp_path):
    with SummaryWriter(str(tmp_path)) as writer:
        for step in range(3):
            writer.add_scalars("loss", {"train": 1.0 / (step + 1), "val": 2.0 - step}, step)
    for name, values in (("loss_train", [1.0, 0.5, 1 / 3]), ("loss_val", [2.0, 1.0, 0.0])):
        acc = _read(os.path.join(str(tmp_path), name))
        np.testing.assert_allclose([e.value for e in acc.Scalars("loss")], values, rtol=1e-6)


def test_add_hparams_is_read_by_the_hparams_plugin(tmp_path):
    from tensorboard.plugins.hparams import plugin_data_pb2
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_hparams({"lr": 0.01, "bs": 64, "opt": "adam", "nesterov": True},
                           {"hparam/accuracy": 0.975}, run_name="run0")
    acc = _read(os.path.join(str(tmp_path), "run0"))
    assert acc.Scalars("hparam/accuracy")[0].value == pytest.approx(0.975)
    content = acc.SummaryMetadata("_hparams_/session_start_info").plugin_data.content
    start = plugin_data_pb2.HParamsPluginData.FromString(content).session_start_info
    assert start.hparams["lr"].number_value == pytest.approx(0.01)
    assert start.hparams["opt"].string_value == "adam"
    assert start.hparams["nesterov"].bool_value is True


def test_default_log_dir_and_flush(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    writer = SummaryWriter(comment="_exp")
    writer.add_scalar("x", 1.5, 0)
    writer.flush()
    assert writer.get_logdir().startswith("runs") and writer.get_logdir().endswith("_exp")
    assert glob.glob(os.path.join(writer.get_logdir(), "events.out.tfevents.*"))
    writer.close()
    with pytest.raises(RuntimeError, match="after close"):
        writer.add_scalar("x", 2.0, 1)


@pytest.mark.parametrize("call, match", [
    (lambda w: w.add_scalar("s", ot.ones(3)), "one value"),
    (lambda w: w.add_image("i", ot.ones(2, 4, 4)), "1, 3 or 4 channels"),
    (lambda w: w.add_image("i", ot.ones(3, 4, 4), dataformats="NCHW"), "dataformats"),
    (lambda w: w.add_histogram("h", ot.tensor([1.0, float("nan")])), "NaN"),
    (lambda w: w.add_hparams([1], {}), "dicts"),
])
def test_bad_values_name_the_problem(tmp_path, call, match):
    with SummaryWriter(str(tmp_path)) as writer, pytest.raises((ValueError, TypeError),
                                                               match=match):
        call(writer)


def test_torch_path_and_lazy_import():
    import omnitensor.utils.tensorboard as tb
    from omnitensor.utils.tensorboard.writer import SummaryWriter as W
    assert tb.SummaryWriter is W


def test_train_digits_logdir_writes_a_run_per_device(device, tmp_path):
    from omnitensor.demos.train_digits import load_digits_split, train
    dev = str(ot.device(device))
    row = train(dev, "mlp", load_digits_split(0), epochs=2, batch_size=64, seed=0,
                progress=False, logdir=str(tmp_path))
    acc = _read(os.path.join(str(tmp_path), f"{dev.replace(':', '')}_mlp"))
    assert [e.step for e in acc.Scalars("train/loss")] == [0, 1]
    assert acc.Scalars("test/accuracy")[0].value == pytest.approx(row["accuracy"])
    assert acc.Histograms("weights/first_layer")[0].histogram_value.num == 64 * 256
