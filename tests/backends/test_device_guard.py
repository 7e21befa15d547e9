"""``backends/device_guard.py``: the wrapper that runs a multi-device backend's ops with
their operands' device current (used by the cuda backend on machines with several GPUs;
exercised here with NumPy arrays tagged with a device and a real current-device state)."""
import contextlib

import numpy as np

from omnitensor.backends.device_guard import first_device, guard_backend


class Tagged(np.ndarray):
    """A NumPy array that says which device it lives on."""


def on(dev, values):
    a = np.asarray(values).view(Tagged)
    a.dev = dev
    return a


class State:
    current = 0
    seen: list = []


@contextlib.contextmanager
def use(dev):
    prev, State.current = State.current, dev
    try:
        yield
    finally:
        State.current = prev


class ToyBackend:
    name = "toy"

    def add(self, a, b):
        State.seen.append(State.current)
        return a + b

    def concat(self, arrays, axis=0):
        State.seen.append(State.current)
        return np.concatenate(arrays, axis)

    def full(self, shape, value, dtype, index):
        State.seen.append(State.current)
        return np.full(shape, value, dtype)

    @property
    def busy(self):
        return False


def test_ops_run_on_their_operands_device_and_restore_it():
    be = ToyBackend()
    wrapped = guard_backend(be, Tagged, lambda a: a.dev, lambda: State.current, use)
    assert wrapped == 3 and be.busy is False          # properties are left alone
    State.seen.clear()
    be.add(on(1, [1, 2]), on(1, [3, 4]))
    be.concat([on(2, [1]), on(2, [2])])
    be.add(on(0, [1]), 1)
    be.full((2,), 0, np.float32, 1)                   # no array operand: as it was
    assert State.seen == [1, 2, 0, 0] and State.current == 0
    assert first_device((1, [2, on(3, [0])]), Tagged, lambda a: a.dev) == 3
    assert first_device((1, "x"), Tagged, lambda a: a.dev) is None
    assert be.add.__name__ == "add" and be.add.__wrapped__ is not None
