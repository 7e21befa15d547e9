"""``torch.ops.aten``: ATen's operators by name, as torch's dispatcher exposes them.

``torch.ops.aten.<name>`` is an :class:`OpOverloadPacket` and ``.<overload>`` (``.default``,
``.Tensor``, ``.dim_IntList``...) an :class:`OpOverload`; the names are torch's
(``overloads.txt``, written from torch's schemas by tools/gen_aten_overloads.py). One rule
finds what runs, so there is no list of public ops to keep:

* a kernel of :mod:`omnitensor.aten.kernels`, ``norms``, ``resample`` or ``common``
  (ATen's private kernels, ``slice.Tensor``, ``_softmax_backward_data``,
  ``_native_batch_norm_legit``, the ``upsample_*`` family, ``_to_copy``... written over
  omnitensor's public differentiable ops, with the schema's arguments);
* else the torch face's function of that name (``aten.add.Tensor`` is ``torch.add``,
  ``aten.linalg_vector_norm`` is ``torch.linalg.vector_norm``), a Tensor method
  (``aten.view(self, size)``, ``aten.add_``), or ``torch.nn.functional``'s.

An ATen overload's arguments are its public function's (ATen's schemas are what torch's
Python functions bind to), so every overload of a name calls the same function, which tells
overloads apart by its arguments as torch's Python binding does. A name omnitensor has no
counterpart for raises AttributeError naming it.
"""
from __future__ import annotations

import functools
import pathlib
from typing import Any, Callable

__all__ = ["OpOverloadPacket", "OpOverload", "namespace", "overload_names", "torch_attribute"]


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, tuple[str, ...]]:
    text = (pathlib.Path(__file__).with_name("overloads.txt")).read_text()
    rows = (line.split() for line in text.splitlines() if line and not line.startswith("#"))
    return {row[0]: tuple(row[1:]) for row in rows}


def overload_names(name: str) -> tuple[str, ...]:
    """torch's overload names of ``aten::name`` (``("Tensor", "Scalar", "out", ...)``); the
    kernels' own where torch's table lacks the name."""
    found = _table().get(name)
    if found is not None:
        return found
    return tuple(ov for (n, ov) in _kernels() if n == name and ov)


def _kernels() -> dict[tuple[str, str], Callable[..., Any]]:
    from . import activations, common, norms, resample  # noqa: F401,RUF100 - they register kernels
    from .kernels import KERNELS
    return KERNELS


#: ATen's spelling of torch's submodules' functions: ``linalg_vector_norm`` is
#: ``torch.linalg.vector_norm``
_SUBMODULES = ("linalg", "special", "fft")


def _face_callable(name: str) -> Callable[..., Any] | None:
    """The torch face's function, Tensor method or nn.functional function called ``name``
    (``linalg_x``, ``special_x``, ``fft_x``: the function ``x`` of that submodule)."""
    import types

    from .. import torch_face
    from ..core.tensor import Tensor
    from ..nn import functional
    roots: list[Any] = [torch_face, Tensor, functional]
    prefix, _, rest = name.partition("_")
    if prefix in _SUBMODULES and rest:
        roots, name = [getattr(torch_face, prefix)], rest
    for root in roots:
        try:
            obj = getattr(root, name)
        except AttributeError:
            continue
        if callable(obj) and not isinstance(obj, (type, types.ModuleType)):
            return obj
    return None


def _implementation(name: str, overload: str) -> Callable[..., Any] | None:
    """What ``aten::name.overload`` runs (``overload`` "" for the packet's own call)."""
    kernels = _kernels()
    found = kernels.get((name, overload))
    if found is not None:
        return found
    if any(n == name for (n, _) in kernels):  # a kernel name: only its own overloads
        return None
    return _face_callable(name)


class OpOverload:
    """One overload of an ATen operator (``torch.ops.aten.add.Tensor``): called with the
    schema's arguments (``self=`` may be given by name, as ATen names it)."""

    def __init__(self, packet: "OpOverloadPacket", overload: str,
                 fn: Callable[..., Any]) -> None:
        self.overloadpacket, self._overloadname, self.op = packet, overload, fn
        self.namespace, self._opname = "aten", packet._opname
        self.__name__ = f"{packet._opname}.{overload}"
        self.__qualname__ = self.__name__

    def name(self) -> str:
        """``aten::add.Tensor``, ``aten::mm`` for a default (torch's ``OpOverload.name()``)."""
        if self._overloadname == "default":
            return f"aten::{self._opname}"
        return f"aten::{self.__name__}"

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        if "self" in kwargs:  # ATen's first argument is `self`; the Python functions' `input`
            args = (kwargs.pop("self"), *args)
        return self.op(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<OpOverload(op='aten.{self._opname}', overload='{self._overloadname}')>"

    def __str__(self) -> str:
        return f"aten.{self.__name__}"

    def __hash__(self) -> int:
        return hash((self._opname, self._overloadname))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OpOverload) and \
            (other._opname, other._overloadname) == (self._opname, self._overloadname)


class OpOverloadPacket:
    """An ATen operator with all its overloads (``torch.ops.aten.add``); calling it calls
    the operator (the overload its arguments pick)."""

    def __init__(self, name: str) -> None:
        self._opname = self.__name__ = name
        self._qualified_op_name = f"aten::{name}"
        self._overloads: dict[str, OpOverload] = {}

    def overloads(self) -> list[str]:
        """torch's overload names of this operator (``default`` for the unnamed one)."""
        return list(overload_names(self._opname))

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        found = self._overloads.get(overload)
        if found is not None:
            return found
        # torch answers `.default` for every operator; other names are the schema's
        if overload != "default" and overload not in overload_names(self._opname):
            raise AttributeError(f"The underlying op of 'aten.{self._opname}' has no "
                                 f"overload name '{overload}'")
        fn = _implementation(self._opname, overload)
        if fn is None:
            raise AttributeError(f"omnitensor has no implementation of "
                                 f"aten::{self._opname}.{overload}")
        op = self._overloads[overload] = OpOverload(self, overload, fn)
        return op

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        """The operator: a kernel's own dispatch between overloads, else its only overload
        or the public function every overload calls."""
        fn = _implementation(self._opname, "")
        for ov in ("default", *overload_names(self._opname)):
            fn = fn or _implementation(self._opname, ov)
        if fn is None:  # the namespace hands out only packets with an implementation
            raise AttributeError(f"omnitensor has no implementation of aten::{self._opname}")
        if "self" in kwargs:
            args = (kwargs.pop("self"), *args)
        return fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='aten.{self._opname}')>"

    def __str__(self) -> str:
        return f"aten.{self._opname}"


class _AtenNamespace:
    """``torch.ops.aten``: an :class:`OpOverloadPacket` per ATen operator omnitensor has."""

    name = "aten"

    def __init__(self) -> None:
        self._packets: dict[str, OpOverloadPacket] = {}

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        found = self._packets.get(name)
        if found is not None:
            return found
        known = bool(overload_names(name))
        if not known or not any(_implementation(name, ov) for ov in
                                ("default", *overload_names(name))):
            why = "no ATen operator" if not known else "omnitensor has no implementation of"
            raise AttributeError(f"'_OpNamespace' 'aten' object has no attribute '{name}' "
                                 f"({why} aten::{name})")
        packet = self._packets[name] = OpOverloadPacket(name)
        return packet

    def __dir__(self) -> list[str]:
        return sorted(self._packets)


namespace = _AtenNamespace()


def torch_attribute(name: str) -> OpOverloadPacket | None:
    """The operator torch exposes at its top level as ``name`` (``torch._chunk_cat``,
    ``torch.segment_reduce``), or None."""
    from .kernels import TORCH_NAMES
    _kernels()
    aten_name = TORCH_NAMES.get(name)
    return None if aten_name is None else getattr(namespace, aten_name)
