"""How tensors cross process boundaries (torch's ``torch.multiprocessing.reductions``).

Tensors refuse ordinary pickling (``pickle.dumps`` of a tensor raises: a pickle can run code
when loaded). Only multiprocessing's own pickler (``ForkingPickler``: Queue, Pipe, Pool tasks,
``Process`` arguments under ``spawn``/``forkserver``) gets the reducers registered here, as
torch registers its own:

* a **cpu** tensor travels as a handle to shared memory (``core/shared_memory.py``). A
  tensor owning its storage that is not shared yet is moved into shared memory first, in
  place, as torch does, so sender and receiver then see each other's writes; a view of
  unshared storage travels as a shared copy of its elements (torch would share the whole
  storage). The receiver maps the same memory: no copy.
* a **device** tensor (opencl, sycl, cuda) travels by value: its values, dtype and device;
  the receiver puts them on the same device. Writes in one process are not seen by the
  other (these backends give no inter-process handle to device memory; torch's CUDA IPC
  would share).

A leaf's ``requires_grad`` and the ``nn.Parameter`` class survive; a non-leaf that
requires grad is refused, as torch refuses it (autograd does not cross processes).
"""
from __future__ import annotations

from multiprocessing import reduction
from typing import Any

import numpy as np

from ..core import shared_memory as shm
from ..core.device import resolve_device
from ..core.dtypes import as_dtype
from ..core.tensor import Tensor, _make, host_array

__all__ = ["init_reductions", "reduce_tensor", "rebuild_shared_tensor",
           "rebuild_from_values"]


def _wrap(t: Tensor, cls: type, requires_grad: bool) -> Tensor:
    if cls is not Tensor:
        from ..nn.parameter import Parameter
        if issubclass(cls, Parameter):
            return Parameter(t, requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _fd_handle(seg: shm.Segment) -> Any:
    """A picklable duplicate of the block's descriptor: multiprocessing passes it to the
    child being started, or serves it from this process to the receiver of a queue."""
    return reduction.DupFd(seg.fd)


def reduce_tensor(t: Tensor) -> tuple:
    """``ForkingPickler``'s reducer for omnitensor tensors (see the module docstring)."""
    if t.requires_grad and t.grad_fn is not None:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
            "autograd does not support crossing process boundaries.  If you just want to "
            "transfer the data, call detach() on the tensor before serializing (e.g., "
            "putting it on the queue).")
    cls, rg, dt = type(t), bool(t.requires_grad), t._dtype.name
    by_value = rebuild_from_values, (host_array(t), str(t._device), dt, cls, rg)
    if t._device.type != "cpu" or not isinstance(t._data, np.ndarray):
        return by_value
    found = shm.segment_of(t._data)
    if found is None:
        if t._base is not None:
            return by_value
        shm.share_memory_(t)  # torch moves the storage to shared memory in place
        found = shm.segment_of(t._data)
    assert found is not None
    arr = t._data
    seg, flat = found
    offset = arr.__array_interface__["data"][0] - flat.__array_interface__["data"][0]
    if seg.strategy == "file_descriptor":
        handle = _fd_handle(seg)
    else:
        shm.add_message_ref(seg)
        handle = seg.name
    return rebuild_shared_tensor, (seg.strategy, handle, seg.size, dt, arr.shape,
                                   arr.strides, offset, cls, rg)


def rebuild_shared_tensor(strategy: str, handle: Any, size: int, dtype: str, shape: tuple,
                          strides: tuple, offset: int, cls: type,
                          requires_grad: bool) -> Tensor:
    """The receiving side of a cpu tensor: map its shared block, view it."""
    if strategy == "file_descriptor":
        try:
            fd = handle.detach()
        except (OSError, EOFError) as e:
            raise RuntimeError(
                f"could not receive a shared tensor's memory from the sending process "
                f"({type(e).__name__}: {e}). With the 'file_descriptor' sharing strategy "
                f"the sender must still be running when the receiver unpickles the tensor "
                f"(as in torch): keep the sending process alive until the tensor is "
                f"received (an Event, or join after get())") from None
        flat = shm.attach_fd(fd, size)
    else:
        flat = shm.attach_name(handle, size)
    d = as_dtype(dtype)
    arr = shm.array_over(flat, d.np, tuple(shape), tuple(strides), offset)
    return _wrap(_make(arr, resolve_device("cpu"), d), cls, requires_grad)


def rebuild_from_values(values: np.ndarray, device: str, dtype: str, cls: type,
                        requires_grad: bool) -> Tensor:
    """The receiving side of a tensor sent by value: its values on the same device."""
    from ..core.ops.creation import from_host
    t = from_host(values, resolve_device(device), as_dtype(dtype))
    return _wrap(t, cls, requires_grad)


def init_reductions() -> None:
    """Register the reducers with multiprocessing's pickler (idempotent; done on import of
    ``omnitensor.multiprocessing``)."""
    from ..nn.parameter import Parameter
    for cls in (Tensor, Parameter):
        reduction.ForkingPickler.register(cls, reduce_tensor)
