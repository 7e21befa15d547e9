"""``Tensor.pin_memory()`` / ``is_pinned()``: a cpu tensor comes back as a copy with its
values (pinned where the accelerator's backend pins, see ``core/pinned.py``; no backend on
this machine does, so ordinary contiguous host memory), device tensors are refused as torch
refuses non-CPU tensors, and ``DataLoader(pin_memory=True)`` yields the same batches."""
import numpy as np
import pytest
import torch

import omnitensor as ot
from omnitensor.core.pinned import pinned_allocator
from omnitensor.utils.data import DataLoader, TensorDataset


def test_pin_memory_copies_a_cpu_tensor(device):
    w = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    x = ot.tensor(w).t()  # not contiguous
    p = x.pin_memory()
    assert p is not x and p.device == ot.device("cpu") and p.is_contiguous()
    np.testing.assert_array_equal(p.numpy(), w.T)
    p[0, 0] = -1.0  # a copy: the input keeps its values
    assert x[0, 0].item() == 0.0
    pins = pinned_allocator() is not None
    assert p.is_pinned() is pins and x.is_pinned() is False
    assert p.untyped_storage().is_pinned() is pins
    assert (p.pin_memory() is p) is pins  # torch: an already pinned tensor is returned
    if device != "cpu":  # torch refuses to pin a tensor that is not on the host
        with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
            ot.ones(2, device=device).pin_memory()


def test_pin_memory_is_differentiable_as_a_copy():
    x = ot.tensor([1.0, 2.0, 3.0], requires_grad=True)
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x.pin_memory() * ot.tensor([2.0, 3.0, 4.0])).sum().backward()
    (tx.clone() * torch.tensor([2.0, 3.0, 4.0])).sum().backward()  # torch's pin: a copy
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_no_backend_here_pins():
    # NumPy, OpenCL and SYCL copy from ordinary host memory (only CUDA has the hook)
    for d in ot.devices():
        assert d.backend.hook("pinned_empty") is None


def test_dataloader_pin_memory_yields_the_same_batches():
    data = ot.tensor(np.arange(40.0, dtype=np.float32).reshape(4, 10)).t()
    labels = ot.arange(10)
    ds = TensorDataset(data, labels)
    plain = list(DataLoader(ds, batch_size=3))
    pinned = list(DataLoader(ds, batch_size=3, pin_memory=True, pin_memory_device="cpu"))
    assert len(plain) == len(pinned)
    for (a, b), (pa, pb) in zip(plain, pinned):
        np.testing.assert_array_equal(a.numpy(), pa.numpy())
        np.testing.assert_array_equal(b.numpy(), pb.numpy())
        assert pa.device == ot.device("cpu") and pa.is_contiguous()
