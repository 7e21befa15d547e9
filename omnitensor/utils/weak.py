"""``omnitensor.utils.weak``: torch.utils.weak's identity-keyed weak containers.

Tensors compare elementwise (``a == b`` is a tensor) and so cannot key a
``weakref.WeakKeyDictionary``; these key by object identity instead, and drop an entry
when its key is garbage collected.
"""
from __future__ import annotations

import weakref
from collections.abc import MutableMapping
from typing import Any, Iterator

__all__ = ["WeakIdRef", "WeakIdKeyDictionary", "WeakTensorKeyDictionary", "TensorWeakRef"]


class WeakIdRef(weakref.ref):
    """A weak reference hashed and compared by the identity of its referent (equal to
    another only while both refer to the same live object)."""

    __slots__ = ["_id"]

    def __init__(self, key: Any, callback: Any = None) -> None:
        self._id = id(key)
        super().__init__(key, callback)  # type: ignore[call-arg]

    def __call__(self) -> Any:
        return super().__call__()

    def __hash__(self) -> int:
        return self._id

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WeakIdRef):
            return NotImplemented
        a, b = self(), other()
        if a is not None and b is not None:
            return a is b
        return self is other


class WeakIdKeyDictionary(MutableMapping):
    """A dict whose keys are held weakly and compared by identity."""

    def __init__(self, data: Any = None) -> None:
        self.data: dict[WeakIdRef, Any] = {}
        me = weakref.ref(self)

        def remove(ref: WeakIdRef) -> None:
            d = me()
            if d is not None:
                d.data.pop(ref, None)
        self._remove = remove
        if data is not None:
            self.update(data)

    def __getitem__(self, key: Any) -> Any:
        return self.data[WeakIdRef(key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.data[WeakIdRef(key, self._remove)] = value

    def __delitem__(self, key: Any) -> None:
        del self.data[WeakIdRef(key)]

    def __contains__(self, key: object) -> bool:
        try:
            return WeakIdRef(key) in self.data
        except TypeError:  # an object that takes no weak reference is never a key
            return False

    def __iter__(self) -> Iterator[Any]:
        for ref in list(self.data):
            obj = ref()
            if obj is not None:
                yield obj

    def __len__(self) -> int:
        return sum(1 for ref in list(self.data) if ref() is not None)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} with {len(self)} entries>"


#: torch's name for the same container keyed by tensors
WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a tensor (``ref()`` gives it, or None once it is freed)."""

    __slots__ = ["ref"]

    def __init__(self, tensor: Any) -> None:
        from ..core.tensor import Tensor
        if not isinstance(tensor, Tensor):
            raise TypeError(f"TensorWeakRef: expected a Tensor, got {type(tensor).__name__}")
        self.ref = weakref.ref(tensor)

    def __call__(self) -> Any:
        return self.ref()
