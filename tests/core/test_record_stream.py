"""Tensor.record_stream: torch's side-stream idiom (work on another stream, record it,
free the tensor) keeps every value right on each device, since a device's streams are its
one in-order queue; a cpu tensor (as in torch) and a stream of another device are refused."""
import numpy as np
import pytest
import torch

import omnitensor as ot
from omnitensor.streams import Stream


def test_side_stream_idiom_keeps_values(device):
    if device == "cpu":
        with pytest.raises(NotImplementedError, match="cpu tensors have no streams"):
            ot.ones(2).record_stream(Stream("cpu"))
        with pytest.raises(NotImplementedError):  # torch refuses a cpu tensor too
            torch.ones(2).record_stream(torch.Stream(device="cpu"))
        return
    side = Stream(device)
    a = ot.arange(1000, dtype=ot.float32, device=device)
    with side:  # torch's ``with torch.cuda.stream(side)``
        b = (a * 2).sum()
    a.record_stream(side)
    del a  # its memory may be reused now; b was computed from it first
    c = ot.zeros(1000, device=device) + 1  # likely the freed block
    assert b.item() == pytest.approx(float(np.arange(1000).sum() * 2))
    assert c.sum().item() == 1000


def test_stream_of_another_device_or_no_stream_is_refused(device):
    if device == "cpu":
        pytest.skip("cpu tensors refuse every stream (above)")
    x = ot.ones(2, device=device)
    with pytest.raises(RuntimeError, match="expected a Stream"):
        x.record_stream(3)
    other = next((d for d in ot.devices() if str(d) != device and str(d) != "cpu"), None)
    if other is None:
        pytest.skip("one device besides cpu")
    with pytest.raises(RuntimeError, match="record a stream of the tensor's device"):
        x.record_stream(Stream(str(other)))
