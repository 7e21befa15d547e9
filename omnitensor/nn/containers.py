"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``,
``ParameterDict`` (torch semantics)."""
from __future__ import annotations

import operator
from collections import OrderedDict
from typing import Any, Iterable, Iterator, Mapping

from .module import Module, _addindent
from .parameter import Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _index(idx: Any, n: int, what: str) -> int:
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range for a {what} of length {n}")
    return idx % n


class Sequential(Module):
    """Modules called in order, each on the previous one's output.
    ``Sequential(a, b)`` names children ``"0"``, ``"1"``; ``Sequential(OrderedDict(...))``
    uses the given names."""

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def forward(self, input: Any) -> Any:  # noqa: A002
        out = input
        for module in self._modules.values():
            out = module(out)
        return out

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        keys = list(self._modules)
        return self._modules[keys[_index(idx, len(keys), "Sequential")]]

    def __setitem__(self, idx: int, module: Module) -> None:
        keys = list(self._modules)
        setattr(self, keys[_index(idx, len(keys), "Sequential")], module)

    def __delitem__(self, idx: Any) -> None:
        keys = list(self._modules)
        if isinstance(idx, slice):
            for k in keys[idx]:
                del self._modules[k]
        else:
            del self._modules[keys[_index(idx, len(keys), "Sequential")]]
        # keep the string-index naming contiguous, as torch does
        items = list(self._modules.values())
        if all(k.isdigit() for k in self._modules):
            self._modules.clear()
            for i, m in enumerate(items):
                self._modules[str(i)] = m

    def append(self, module: Module) -> "Sequential":
        """Add a module at the end."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "Sequential":
        """Add modules at the end."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> "Sequential":
        """Insert a module before ``index``."""
        items = list(self._modules.values())
        n = len(items)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        items.insert(index % (n + 1) if index < 0 else index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)
        return self

    def __add__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            return NotImplemented
        return Sequential(*self, *other)


class ModuleList(Module):
    """A list of modules, registered as children (indexable, iterable; no forward)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx: Any) -> None:
        keys = list(self._modules)
        if isinstance(idx, slice):
            for k in keys[idx]:
                del self._modules[k]
        else:
            del self._modules[keys[_index(idx, len(keys), "ModuleList")]]
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        return ModuleList(list(self) + list(other))

    def append(self, module: Module) -> "ModuleList":
        """Add a module at the end."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        """Add modules at the end."""
        if isinstance(modules, Module) and not isinstance(modules, (ModuleList, Sequential)):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert a module before ``index``."""
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def pop(self, idx: int = -1) -> Module:
        """Remove and return an entry."""
        m = self[idx]
        del self[idx]
        return m

    def __repr__(self) -> str:
        # runs of identical children print once, as "(0-3): 4 x Layer(...)" (torch)
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        blocks: list[list] = []
        for i, r in enumerate(reprs):
            if blocks and blocks[-1][2] == r:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, r])
        lines = []
        for start, end, r in blocks:
            head = f"({start}): " if start == end else f"({start}-{end}): {end - start + 1} x "
            lines.append(_addindent(head + r, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class _KeyedContainer(Module):
    """The dict API shared by ``ModuleDict`` and ``ParameterDict``: entries live in one of
    Module's registries (``_store``), so they are registered children/parameters."""

    _store_name = ""  # "_modules" or "_parameters"

    def __init__(self, entries: Any = None) -> None:
        super().__init__()
        if entries is not None:
            self.update(entries)

    def _store(self) -> dict:
        return getattr(self, self._store_name)

    def __getitem__(self, key: str) -> Any:
        return self._store()[key]

    def __delitem__(self, key: str) -> None:
        del self._store()[key]

    def __len__(self) -> int:
        return len(self._store())

    def __iter__(self) -> Iterator[str]:
        return iter(self._store())

    def __contains__(self, key: object) -> bool:
        return key in self._store()

    def clear(self) -> None:
        """Remove every entry."""
        self._store().clear()

    def pop(self, key: str) -> Any:
        """Remove and return an entry."""
        m = self[key]
        del self[key]
        return m

    def keys(self) -> Iterable[str]:
        """The keys, in insertion order."""
        return self._store().keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        """``(key, value)`` pairs, in insertion order."""
        return self._store().items()

    def values(self) -> Iterable[Any]:
        """The values, in insertion order."""
        return self._store().values()

    def update(self, entries: Any) -> None:
        """Add or replace entries from a mapping, another ModuleDict/ParameterDict (not
        Mappings, but read as ones, as torch's) or ``(key, value)`` pairs."""
        if isinstance(entries, (Mapping, _KeyedContainer)):
            for key, value in entries.items():
                self[key] = value
            return
        for j, item in enumerate(entries):
            if len(item) != 2:
                raise ValueError(f"{type(self).__name__} update sequence element #{j} has "
                                 f"length {len(item)}; 2 is required")
            key, value = item
            self[key] = value


class ModuleDict(_KeyedContainer):
    """An ordered dict of modules, registered as children."""

    _store_name = "_modules"

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None
                 ) -> None:
        super().__init__(modules)

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)


class ParameterList(Module):
    """A list of parameters, registered (names ``"0"``, ``"1"``...)."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, idx: int) -> Parameter:
        return getattr(self, str(_index(idx, self._size, "ParameterList")))

    def __setitem__(self, idx: int, param: Any) -> None:
        setattr(self, str(_index(idx, self._size, "ParameterList")), _as_param(param))

    def __iter__(self) -> Iterator[Parameter]:
        return (self[i] for i in range(self._size))

    def append(self, value: Any) -> "ParameterList":
        """Add a module at the end."""
        self._size += 1
        setattr(self, str(self._size - 1), _as_param(value))
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        """Add modules at the end."""
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"({i}): Parameter containing: [{p.dtype.name} of size "
                         f"{tuple(p.shape)} on {p.device}]" for i, p in enumerate(self))


class ParameterDict(_KeyedContainer):
    """An ordered dict of parameters, registered under their keys."""

    _store_name = "_parameters"

    def __init__(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None
                 ) -> None:
        super().__init__(parameters)

    def __setitem__(self, key: str, value: Any) -> None:
        self.register_parameter(key, _as_param(value))


def _as_param(value: Any) -> Any:
    from ..core.tensor import Tensor
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value
