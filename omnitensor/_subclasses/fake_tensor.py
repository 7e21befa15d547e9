"""``torch._subclasses.fake_tensor``: omnitensor has no fake (data-less) tensors, so
``is_fake`` is False for every value and the mode that would make them refuses."""
from __future__ import annotations

from typing import Any

__all__ = ["is_fake", "FakeTensor", "FakeTensorMode", "UnsupportedFakeTensorException"]


class UnsupportedFakeTensorException(RuntimeError):
    pass


class FakeTensor:
    """The class of fake tensors; no omnitensor value is one."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise UnsupportedFakeTensorException(
            "omnitensor has no fake tensors (torch._subclasses.FakeTensor): every tensor "
            "holds its data; trace shapes with omnitensor.compile or jit.trace instead")


class FakeTensorMode:
    """torch's mode that makes new tensors fake: refused on entry."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __enter__(self) -> "FakeTensorMode":
        raise UnsupportedFakeTensorException(
            "omnitensor has no fake tensors (FakeTensorMode): every tensor holds its data")

    def __exit__(self, *exc: Any) -> None:
        return None


def is_fake(x: Any) -> bool:
    """Whether ``x`` is a fake tensor: never, here."""
    return False
