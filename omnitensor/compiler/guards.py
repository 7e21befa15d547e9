"""What a compiled call reads, and the guard key that says when a captured graph applies.

:func:`discover` walks what a call can reach (its arguments, the compiled module, the
function's ``self``, closure cells and the globals its code names) and finds, duck-typed
(``compiler`` imports neither ``nn`` nor ``optim``):

* **tensors**, by stable names (``args[0]``, ``fc1.weight``, ``fc1.weight.grad``,
  ``opt.state[0].exp_avg``, ``globals.mask``): the sources a capture resolves its inputs
  from, and what a replay reads its inputs from (the *current* tensor of each name);
* **slots**, the Python places that hold tensors (``p.grad``, optimizer state entries,
  a module's parameter and buffer dicts), so a capture can see which ones a call rebinds
  (``zero_grad`` then ``backward`` makes new ``.grad`` tensors) and a replay rebind them;
* the **guard key**: shapes, strides, dtypes, devices and ``requires_grad`` of tensor
  arguments, the values of scalar arguments, grad and inference mode, autocast's state,
  every submodule's ``training`` flag, parameter and buffer identities and metadata (not
  their versions: a replay reads each tensor's current storage, so in-place updates
  outside a compiled call need no retrace), which gradients exist, the optimizer state's
  structure and hyperparameters (``lr``, ``momentum``, ...), scalar closure and global
  values, and which of all these tensors share memory (``aliasing.py``). The storage
  offset is not a guard: a replay reads each input's current view, offset included, and
  nothing eager computes depends on it except aliasing;
* **scalars**: Python-visible state a call could change (hyperparameters, scalar optimizer
  state, ``training`` flags, scalar globals). A call that changes one cannot be replayed.
"""
from __future__ import annotations

import types
from typing import Any, Callable, Iterator

from ..core import autocast_state as _autocast
from ..core.grad_mode import is_grad_enabled, is_inference_mode_enabled
from ..core.tensor import Tensor
from . import aliasing

__all__ = ["Discovery", "Slot", "discover", "global_names", "tensor_meta"]

_SCALARS = (bool, int, float, complex, str, type(None))
_GRAD_PATH = (("attr", "grad"),)


def tensor_meta(t: Tensor) -> tuple:
    """What a capture specialises a tensor on: shape, strides (``contiguous()``,
    ``is_contiguous()`` branches, ``view`` versus ``reshape`` follow them), dtype, device,
    ``requires_grad``."""
    data = t._data
    return (data.shape, t._device.backend.strides(data), t._dtype, t._device,
            t.requires_grad)


def _is_module(o: Any) -> bool:
    return hasattr(o, "named_parameters") and hasattr(o, "named_buffers") and \
        hasattr(o, "training") and hasattr(o, "modules")


def _is_optimizer(o: Any) -> bool:
    return hasattr(o, "param_groups") and hasattr(o, "state") and \
        isinstance(getattr(o, "param_groups", None), list)


class Slot:
    """A Python place holding a tensor: ``root`` then ``path`` steps (``("attr", name)`` or
    ``("item", key)``)."""

    __slots__ = ("root", "path", "name")

    def __init__(self, root: Any, path: tuple, name: str) -> None:
        self.root, self.path, self.name = root, path, name

    def get(self) -> Any:
        o = self.root
        for kind, k in self.path:
            if kind == "attr":
                o = getattr(o, k, None)
            else:
                try:
                    o = o[k] if o is not None else None
                except (KeyError, IndexError, TypeError):
                    return None
            if o is None:
                return None
        return o

    def set(self, value: Any) -> None:
        o = self.root
        for kind, k in self.path[:-1]:
            o = getattr(o, k) if kind == "attr" else o[k]
        kind, k = self.path[-1]
        if kind == "attr":
            setattr(o, k, value)
        elif value is None:
            o.pop(k, None)
        else:
            o[k] = value


class Discovery:
    """One walk of what a call reaches (see the module docstring)."""

    def __init__(self) -> None:
        self.tensors: dict[str, Tensor] = {}
        self.kinds: dict[str, str] = {}
        self.slots: dict[str, tuple] = {}    # name -> (root, path) of a Slot
        amp = _autocast.state
        self.key: list = [is_grad_enabled(), is_inference_mode_enabled(),
                          amp.active and tuple(sorted((k, v.name) for k, v in amp.on.items()))]
        self.scalars: dict[str, Any] = {}
        self._seen: set[int] = set()
        self.functions: list[types.FunctionType] = []   # user code whose globals count
        #: two of the tensors are different arrays over shared memory (see aliasing.py)
        self.overlapping = False

    def add_tensor(self, name: str, t: Tensor, kind: str) -> None:
        if name not in self.tensors:
            self.tensors[name] = t
            self.kinds[name] = kind

    def iter_slots(self) -> Iterator[tuple[str, Slot]]:
        """(name, :class:`Slot`) of every slot found (built on demand: captures only)."""
        for name, (root, path) in self.slots.items():
            yield name, Slot(root, path, name)

    def sources(self) -> dict[int, tuple[str, str, Tensor]]:
        """``id(array) -> (kind, name, tensor)`` for a capture (first name wins)."""
        src: dict[int, tuple[str, str, Tensor]] = {}
        for name, t in self.tensors.items():
            src.setdefault(id(t._data), (self.kinds[name], name, t))
        return src

    # ------------------------------------------------------------------ walkers
    def arg(self, name: str, o: Any, depth: int = 0) -> None:
        key = self.key
        if isinstance(o, Tensor):
            if o.requires_grad and o.grad_fn is None and id(o) not in self._seen:
                self.param(name, o, kind="arg")   # a leaf: its .grad too
            else:
                self.add_tensor(name, o, "arg")
                key.append(tensor_meta(o))
        elif isinstance(o, _SCALARS):
            key.append((o.__class__, o))
        elif isinstance(o, (tuple, list)) and depth < 3:
            key.append((o.__class__, len(o)))
            for i, x in enumerate(o):
                self.arg(f"{name}[{i}]", x, depth + 1)
        elif isinstance(o, dict) and depth < 3:
            key.append((dict, tuple(o)))
            for k, x in o.items():
                self.arg(f"{name}[{k!r}]", x, depth + 1)
        else:
            key.append((o.__class__, id(o)))
            self.obj(name, o)

    def obj(self, name: str, o: Any, depth: int = 0) -> None:
        """A closure/global/self object: modules, optimizers, tensors, scalars,
        containers of them."""
        if id(o) in self._seen:
            return
        if isinstance(o, Tensor):
            if o.requires_grad and o.grad_fn is None:
                self.param(name, o)            # a leaf (a parameter): its .grad too
                return
            self._seen.add(id(o))
            self.add_tensor(name, o, "state")
            self.key.append((name, tensor_meta(o)))
        elif isinstance(o, _SCALARS):
            self.key.append((name, o))
            self.scalars[name] = o
        elif _is_module(o):
            self._seen.add(id(o))
            self.module(name, o)
        elif _is_optimizer(o):
            self._seen.add(id(o))
            self.optimizer(name, o)
        elif _is_optimizer(getattr(o, "optimizer", None)):   # an LR scheduler
            self._seen.add(id(o))
            for k, v in vars(o).items():    # last_epoch, _step_count: a step inside the
                if v.__class__ in _SCALARS:  # call changes them, which replays cannot
                    self.key.append(v)
                    self.scalars[f"{name}.{k}"] = v
            self.obj(name + ".optimizer", o.optimizer, depth)
        elif isinstance(o, (tuple, list)) and depth < 2:
            self._seen.add(id(o))
            for i, x in enumerate(o[:64]):
                self.obj(f"{name}[{i}]", x, depth + 1)
        elif isinstance(o, dict) and depth < 2 and len(o) <= 64:
            self._seen.add(id(o))
            for k, x in o.items():
                if isinstance(k, (str, int)):
                    self.obj(f"{name}[{k!r}]", x, depth + 1)

    def module(self, name: str, m: Any) -> None:
        prefix = "" if name == "self" else name + "."
        key = self.key
        for mname, sub in m.named_modules() if hasattr(m, "named_modules") else ():
            flag = bool(sub.training)
            key.append(flag)
            self.scalars[f"{prefix}{mname}.training"] = flag
            mp = f"{prefix}{mname}." if mname else prefix
            for pname, p in sub._parameters.items():
                full = mp + pname
                self.slots[full] = (sub, (("attr", "_parameters"), ("item", pname)))
                if p is None:
                    key.append(None)
                    continue
                self.param(full, p)
            for bname, b in sub._buffers.items():
                full = mp + bname
                self.slots[full] = (sub, (("attr", "_buffers"), ("item", bname)))
                if b is None:
                    key.append(None)
                    continue
                if id(b) not in self._seen:
                    self._seen.add(id(b))
                    self.add_tensor(full, b, "buffer")
                key.append((id(b),) + tensor_meta(b))
            for aname, a in sub.__dict__.items():   # plain tensor and scalar attributes
                if isinstance(a, Tensor):
                    if id(a) not in self._seen:
                        self._seen.add(id(a))
                        self.add_tensor(mp + aname, a, "buffer")
                        key.append((aname,) + tensor_meta(a))
                elif a.__class__ in _SCALARS and aname[0] != "_":   # Dropout.p, eps, ...
                    key.append(a)
                    self.scalars[mp + aname] = a
            cls = sub.__class__
            if not cls.__module__.startswith("omnitensor"):
                fwd = getattr(cls, "forward", None)
                if isinstance(fwd, types.FunctionType):
                    self.functions.append(fwd)   # a user's forward: its globals too

    def param(self, name: str, p: Tensor, kind: str = "param") -> None:
        if id(p) in self._seen:
            self.key.append(id(p))
            return
        self._seen.add(id(p))
        self.add_tensor(name, p, kind)
        g = p.grad
        gname = name + ".grad"
        self.slots[gname] = (p, _GRAD_PATH)
        if g is None:
            self.key.append((id(p),) + tensor_meta(p))
        else:
            self.add_tensor(gname, g, "state")
            self.key.append((id(p),) + tensor_meta(p) + tensor_meta(g))

    def optimizer(self, name: str, opt: Any) -> None:
        key = self.key
        names: dict[int, str] = {}
        for gi, group in enumerate(opt.param_groups):
            for k, v in group.items():
                if k != "params":
                    hv = v if isinstance(v, _SCALARS) else (
                        tuple(v) if isinstance(v, (tuple, list)) else type(v).__name__)
                    key.append((k, hv))
                    self.scalars[f"{name}.param_groups[{gi}].{k}"] = hv
            for pi, p in enumerate(group["params"]):
                pname = f"{name}.params[{gi}][{pi}]"
                names[id(p)] = pname
                self.param(pname, p)
        for p, st in list(opt.state.items()):
            pname = names.get(id(p), f"{name}.state[?{id(p)}]")
            if not isinstance(st, dict):
                continue
            key.append((pname, tuple(st)))
            for k, v in st.items():
                full = f"{name}.state[{pname}].{k}"
                self.slots[full] = (opt, (("attr", "state"), ("item", p), ("item", k)))
                if isinstance(v, Tensor):
                    self.add_tensor(full, v, "state")
                    key.append(tensor_meta(v))
                elif isinstance(v, _SCALARS):
                    key.append((k, v))
                    self.scalars[full] = v


_NAMES: dict[int, tuple[Any, tuple[str, ...]]] = {}


def global_names(fn: Callable | None) -> tuple[str, ...]:
    """The global names ``fn``'s code (and the code nested in it) reads (cached)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ()
    hit = _NAMES.get(id(code))
    if hit is not None and hit[0] is code:
        return hit[1]
    out: list[str] = []

    def walk(c: types.CodeType) -> None:
        out.extend(c.co_names)
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                walk(k)
    walk(code)
    names = tuple(dict.fromkeys(out))
    _NAMES[id(code)] = (code, names)
    return names


def _user_function(o: Any) -> bool:
    return isinstance(o, types.FunctionType) and not \
        (getattr(o, "__module__", None) or "").startswith("omnitensor")


def _roots(fn: Any) -> Iterator[tuple[str, Any]]:
    if _is_module(fn):
        yield "self", fn
        return
    target = fn
    if isinstance(fn, types.MethodType):
        yield "self", fn.__self__
        target = fn.__func__
    code = getattr(target, "__code__", None)
    if code is None:
        return
    for cname, cell in zip(code.co_freevars, target.__closure__ or ()):
        try:
            yield f"closure.{cname}", cell.cell_contents
        except ValueError:   # an empty cell
            pass


def discover(fn: Any, args: tuple, kwargs: dict) -> Discovery:
    """Walk everything a call of ``fn`` reaches (see the module docstring): arguments,
    ``self`` and closure cells, then the globals that ``fn`` and the user functions it
    reaches (helpers it names, the ``forward`` of user-defined modules) read."""
    d = Discovery()
    for i, a in enumerate(args):
        d.arg(f"args[{i}]", a)
    for k, a in kwargs.items():
        d.key.append(k)
        d.arg(f"kwargs[{k!r}]", a)
    for name, o in _roots(fn):
        d.obj(name, o)
    target = getattr(fn, "__func__", fn)
    if _is_module(fn):
        target = getattr(type(fn), "forward", None)
    work = [target] + d.functions
    done: set[int] = set()
    while work and len(done) < 32:
        f = work.pop()
        if id(f) in done or not isinstance(f, types.FunctionType):
            continue
        done.add(id(f))
        g = f.__globals__
        for name in global_names(f):
            if name not in g:
                continue
            o = g[name]
            if _user_function(o):
                work.append(o)
                for cname, cell in zip(o.__code__.co_freevars, o.__closure__ or ()):
                    try:
                        d.obj(f"{o.__name__}.closure.{cname}", cell.cell_contents)
                    except ValueError:
                        pass
            elif not isinstance(o, (types.ModuleType, types.FunctionType, type,
                                    types.BuiltinFunctionType)):
                d.obj(f"globals.{name}", o)
        work += [f for f in d.functions if id(f) not in done]
    alias = aliasing.pattern(list(d.tensors.values()))
    if alias:   # which of them share memory is part of the key (aliasing.py)
        d.key.append(("aliasing", alias))
        d.overlapping = not all(same for _i, _j, same in alias)
    return d
