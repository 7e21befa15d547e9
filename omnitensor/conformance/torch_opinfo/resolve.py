"""From an OpInfo to the omnitensor callable that answers for it.

An OpInfo's ``op`` is either a public torch object (``torch.addmm``,
``torch.nn.functional.conv2d``, ``torch.Tensor.__radd__``) or a small lambda written in
torch's test module (``lambda x, n: torch.polygamma(n, x)``, ``lambda x: x.mT``):

* a public object is found at its public path in torch (``addmm``, ``linalg.det``,
  ``Tensor.__radd__``: the same object, so the same signature) and that path is looked up
  in the face;
* a lambda is rebuilt with the face in place of its global ``torch``: the same code,
  calling the face's functions and the operands' methods.

Everything goes through :func:`face`: today plain ``omnitensor``; when the torch face
(``import torch`` under as_torch, with torch's semantics where the Array API differs) lands,
that one line changes.
"""
from __future__ import annotations

import dis
import functools
import types
from typing import Any, Callable, Iterator

from .oracle import torch


def face() -> Any:
    """The namespace the ops are resolved in: what ``import torch`` is to a torch script
    (omnitensor's torch face, with torch's semantics where the Array API differs)."""
    from ... import torch_face
    return torch_face


def lookup(root: Any, path: str) -> Any:
    """``root.a.b.c`` for ``"a.b.c"``, or None when a part is missing."""
    obj = root
    for part in path.split("."):
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 - a lazy module that fails to load is absent too
            return None
    return obj


def _is_test_code(fn: Any) -> bool:
    """A function written in torch's test modules (not a public torch object)."""
    code = getattr(fn, "__code__", None)
    return code is not None and "testing" in code.co_filename.replace("\\", "/")


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _codes(c)


def referenced_paths(fn: Any) -> list[str]:
    """The names a test lambda uses: ``torch.a.b`` chains as ``a.b`` and attributes of its
    arguments (methods, ``.mT``) as ``Tensor.x``, read from its bytecode."""
    paths: list[str] = []
    for code in _codes(fn.__code__):
        chain: list[str] | None = None
        for ins in dis.get_instructions(code):
            is_attr = ins.opname in ("LOAD_ATTR", "LOAD_METHOD")
            if chain is not None and is_attr:
                chain.append(str(ins.argval))
                continue
            if chain:
                paths.append(".".join(chain))
            chain = None
            if ins.opname == "LOAD_GLOBAL" and ins.argval == "torch":
                chain = []
            elif ins.opname in ("LOAD_FAST", "LOAD_DEREF"):
                chain = ["Tensor"]
        if chain:
            paths.append(".".join(chain))
    return [p for p in paths if p and p != "Tensor"]


def _known_prefix(path: str) -> str:
    """The longest prefix of ``path`` that exists in torch (``Tensor.item`` for
    ``Tensor.item.__name__``-like chains, ``nn.functional.embedding`` for a call)."""
    parts = path.split(".")
    for n in range(len(parts), 0, -1):
        if lookup(torch(), ".".join(parts[:n])) is not None:
            return ".".join(parts[:n])
    return path


def _seeded(ns: Any) -> Callable[..., Any]:
    """torch's ``wrapper_set_seed`` for the face: seed, then call."""
    def wrapper_set_seed(op: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        ns.manual_seed(42)
        return op(*args, **kwargs)
    return wrapper_set_seed


_GLOBALS: dict[tuple[int, int], dict[str, Any]] = {}


def _face_globals(glb: dict[str, Any], ns: Any) -> dict[str, Any]:
    """A copy of a test module's globals with ``torch`` meaning ``ns`` (one per module)."""
    key = (id(glb), id(ns))
    if key not in _GLOBALS:
        _GLOBALS[key] = dict(glb, torch=ns, wrapper_set_seed=_seeded(ns))
    return _GLOBALS[key]


def rebind(fn: Any, ns: Any) -> Callable[..., Any]:
    """``fn`` (a function of torch's test modules) with ``torch`` meaning ``ns``."""
    if fn.__name__ == "wrapper_set_seed":
        return _seeded(ns)
    glb = _face_globals(fn.__globals__, ns)
    out = types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, fn.__closure__)
    out.__kwdefaults__ = fn.__kwdefaults__
    return out


def _candidates(op: Any) -> Iterator[str]:
    yield op.name
    for alias in op.aliases:
        yield alias.name
    name = getattr(op.op, "__name__", "")
    if name:
        yield name
        yield "Tensor." + name
        yield "nn.functional." + name
    method = getattr(op.method_variant, "__name__", None)
    if isinstance(method, str) and method:
        yield "Tensor." + method


@functools.lru_cache(maxsize=None)
def _torch_paths(key: str) -> tuple[str, ...]:
    from .oracle import ops_by_key
    op = ops_by_key()[key]
    if type(op.op).__module__ == "torch._ops":  # an OpOverload(Packet): torch.ops.aten.x.y
        return ("ops." + str(op.op),)
    if _is_test_code(op.op):
        return tuple(dict.fromkeys(_known_prefix(p) for p in referenced_paths(op.op)))
    for path in _candidates(op):
        if lookup(torch(), path) is op.op:
            return (path,)
    return ()


def counterpart_paths(op: Any) -> tuple[str, ...]:
    """The torch paths ``op`` stands for (``("addmm",)``, ``("Tensor.mT",)``,
    ``("ops.aten.slice.Tensor",)``); empty when its callable is no torch object the face can
    have (jiterator, test helpers)."""
    from .oracle import opinfo_key
    return _torch_paths(opinfo_key(op))


def missing_paths(op: Any) -> list[str]:
    """The paths of :func:`counterpart_paths` the face lacks."""
    ns = face()
    return [p for p in counterpart_paths(op) if lookup(ns, p) is None]


#: why an OpInfo can have no counterpart, by the kind of object it tests: torch's CUDA-only
#: run-time compiler, and those of ATen's private kernels (``torch.ops.aten.*`` overloads,
#: ``torch._x`` entry points) omnitensor does not have (``torch.ops.aten`` holds ATen's
#: public operators and the private kernels of omnitensor/aten/kernels.py; the others, such
#: as ``_flash_attention_forward`` or ``_scaled_mm``, are fused or vendor kernels behind
#: public ops)
JITERATOR = ("torch.cuda.jiterator: CUDA-only in torch (it compiles CUDA C source at run "
             "time), so the oracle, torch on the CPU, cannot run it: there is no reference "
             "result to compare with, and no device-neutral API to implement")
PRIVATE_ATEN = ("a private ATen kernel ({path}): no part of torch's public API, which is "
                "what omnitensor implements (its torch.ops.aten holds ATen's public "
                "operators and the private kernels omnitensor/aten writes over them, not "
                "this one)")


def _is_private(path: str) -> bool:
    """``ops.aten.x.default``, ``_chunk_cat``, ``torch._scaled_mm``: a path into ATen's
    private kernels (a part named with a leading underscore, or through ``torch.ops``)."""
    parts = path.split(".")
    return parts[0] == "ops" or any(p.startswith("_") and not p.startswith("__")
                                    for p in parts)


def no_counterpart_reason(op: Any) -> str | None:
    """Why ``op`` cannot have a counterpart (see :data:`JITERATOR`, :data:`PRIVATE_ATEN`),
    or None when it is a torch op the face may have (public, or a private kernel the face
    has)."""
    if type(op.op).__module__.startswith("torch.cuda.jiterator"):
        return JITERATOR
    ns = face()
    private = [p for p in counterpart_paths(op) if _is_private(p) and lookup(ns, p) is None]
    if private:
        return PRIVATE_ATEN.format(path=", ".join(
            "torch." + p.removeprefix("torch.") for p in private))
    return None


def why_missing(op: Any) -> str:
    """The reason a check of ``op`` reports when :func:`resolve` finds nothing: why it can
    have no counterpart, or the names the face lacks."""
    reason = no_counterpart_reason(op)
    if reason is not None:
        return "no counterpart by design: " + reason
    missing = missing_paths(op)
    if missing:
        return "omnitensor has no " + ", ".join(missing)
    other = {p: lookup(face(), p) for p in counterpart_paths(op)[:1]}
    for p, obj in other.items():
        if not callable(obj):  # torch.dist (a function) vs omnitensor.dist (distributed)
            name = getattr(obj, "__name__", type(obj).__name__)
            return f"the face's {p} is {name}, not torch's callable {p}"
    return "omnitensor has no (no public torch path)"


def resolve(op: Any) -> Callable[..., Any] | None:
    """The face's callable for OpInfo ``op``, called as ``op.op`` is (same arguments), or
    None when the face has no counterpart (a path of :func:`counterpart_paths` is missing,
    or ``op`` has no public torch path)."""
    paths = counterpart_paths(op)
    ns = face()
    if not paths or no_counterpart_reason(op) is not None or any(lookup(ns, p) is None for p in paths):
        return None
    if _is_test_code(op.op):
        return rebind(op.op, ns)
    found = lookup(ns, paths[0])
    return found if callable(found) else None


def for_face(fn: Any) -> Callable[..., Any]:
    """A helper of torch's tests (a sample's ``output_process_fn_grad``, an OpInfo's
    ``gradcheck_wrapper``) working on the face's tensors."""
    return rebind(fn, face()) if _is_test_code(fn) else fn
