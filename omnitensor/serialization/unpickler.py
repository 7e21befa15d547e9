"""The allow-list unpickler: torch's ``weights_only=True`` semantics, written for
omnitensor.

A pickle is a program for a small stack machine; most of its instructions only build data
(numbers, strings, tuples, lists, dicts). Four can run code: ``GLOBAL``/``STACK_GLOBAL``
(import a name), ``REDUCE`` (call it), ``NEWOBJ`` (``cls.__new__``) and ``BUILD``
(``__setstate__``). Here a global is looked up in the allow-list (:mod:`.torch_names`,
then the user's ``add_safe_globals``) and nowhere else: nothing is imported, and a name
outside both is refused with :class:`WeightsOnlyError` (a ``pickle.UnpicklingError``)
naming it and ``add_safe_globals``. ``REDUCE`` calls only allow-listed callables,
``NEWOBJ`` builds ``Parameter`` or allow-listed classes, ``BUILD`` applies state to an
``OrderedDict``, a checked NumPy array or an instance of an allow-listed class.
Instructions that build objects by other routes (``INST``, ``OBJ``, the copyreg
extension registry ``EXT1/2/4``, out-of-band buffers) are refused outright.

A truncated or malformed pickle raises :class:`CheckpointError`; the result may nest at
most :data:`.files.MAX_DEPTH` containers deep.
"""
from __future__ import annotations

import _compat_pickle
import pickle
import struct
from collections import Counter, OrderedDict, defaultdict
from typing import Any, Callable, NoReturn

from .objects import (WeightsOnlyError, rebuild_object, refusal, user_allowed,
                                  weights_only_error)
from .files import MAX_DEPTH, CheckpointError
from .rebuild import LoadContext
from .torch_names import CALL, allowed_globals, build_numpy, unsupported_global

__all__ = ["SafeUnpickler", "check_depth", "BLOCKED_MODULES"]

#: modules never allowed, even when allowlisted (torch's blocklist)
BLOCKED_MODULES = ("sys", "os", "posix", "nt", "subprocess", "builtins.eval", "builtins.exec")
_DICTS = (dict, OrderedDict, Counter, defaultdict)
_REFUSED = {pickle.INST: "INST", pickle.OBJ: "OBJ", pickle.EXT1: "EXT1",
            pickle.EXT2: "EXT2", pickle.EXT4: "EXT4", pickle.NEXT_BUFFER: "NEXT_BUFFER",
            pickle.READONLY_BUFFER: "READONLY_BUFFER", pickle.PERSID: "PERSID"}
_MARK = object()


class SafeUnpickler:
    """Reads pickles from ``data`` starting at ``pos`` (``load`` may be called again for
    the next pickle in the same buffer, as torch's legacy format needs)."""

    def __init__(self, data: Any, ctx: LoadContext,
                 persistent_load: Callable[[Any], Any] | None = None, pos: int = 0) -> None:
        self.data, self.pos, self.ctx = memoryview(data), pos, ctx
        self.persistent_load = persistent_load
        self.table = allowed_globals(ctx)
        self.callables: set[int] = set()  # ids of what REDUCE may call
        self.classes: set[int] = set()    # ids of allowlisted classes (NEWOBJ, BUILD)
        self.built: set[int] = set()      # ids of objects NEWOBJ made (depth check)
        self.keep: list[Any] = []         # keeps those alive so their ids stay unique
        self.ops = {code[0]: getattr(self, "_op_" + name) for name, code in _OPCODES.items()}

    # --------------------------------------------------------------- reading
    def _read(self, n: int) -> memoryview:
        end = self.pos + n
        if n < 0 or end > len(self.data):
            raise self.ctx.fail("the pickle is truncated")
        out = self.data[self.pos:end]
        self.pos = end
        return out

    def _unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self._read(struct.calcsize(fmt)))[0]

    def _line(self) -> bytes:
        rest = bytes(self.data[self.pos:self.pos + 4096])
        cut = rest.find(b"\n")
        if cut < 0:
            raise self.ctx.fail("the pickle is truncated (an unterminated name)")
        self.pos += cut + 1
        return rest[:cut]

    def load(self) -> Any:
        """The next object in the buffer."""
        result = self.run()
        check_depth(result, self.built, self.ctx)
        return result

    def run(self) -> Any:
        """Execute the next pickle in the buffer (the instructions up to STOP)."""
        self.stack: list[Any] = []
        self.marks: list[int] = []
        self.memo: dict[int, Any] = {}
        self.proto = 0
        while True:
            code = self._read(1)[0]
            if code == pickle.STOP[0]:
                break
            op = self.ops.get(code)
            if op is None:
                self._unknown(code)
            try:
                op()
            except (CheckpointError, WeightsOnlyError, RuntimeError, MemoryError):
                raise
            except (IndexError, KeyError, TypeError, ValueError, OverflowError,
                    struct.error, UnicodeDecodeError) as e:
                raise self.ctx.fail(f"malformed pickle ({type(e).__name__}: {e} at byte "
                                    f"{self.pos})") from None
        if len(self.stack) != 1 or self.marks:
            raise self.ctx.fail("malformed pickle (STOP with an unbalanced stack)")
        return self.stack.pop()

    def _unknown(self, code: int) -> NoReturn:
        name = _REFUSED.get(bytes([code]))
        if name is not None:
            raise weights_only_error(
                f"the pickle uses the {name} instruction, which builds objects by calling "
                f"what the file names; omnitensor.load(weights_only=True) never runs it.")
        raise self.ctx.fail(f"unknown or unsupported pickle opcode {bytes([code])!r} at byte "
                            f"{self.pos - 1} (protocol 0/1 text instructions are not read; "
                            f"torch writes protocol 2)")

    def _pop_mark(self) -> list[Any]:
        start = self.marks.pop()
        items = self.stack[start:]
        del self.stack[start:]
        return items

    # --------------------------------------------------------------- policy
    def _path(self, module: str, name: str) -> tuple[str, str]:
        """The Python 3 name of a global (``__builtin__``, ``copy_reg`` in protocol 2
        pickles, as pickle maps them)."""
        if self.proto < 3:
            if (module, name) in _compat_pickle.NAME_MAPPING:
                return _compat_pickle.NAME_MAPPING[(module, name)]
            if module in _compat_pickle.IMPORT_MAPPING:
                return _compat_pickle.IMPORT_MAPPING[module], name
        return module, name

    def _global(self, module: str, name: str) -> Any:
        module, name = self._path(module, name)
        path = f"{module}.{name}"
        if module.split(".")[0] in BLOCKED_MODULES or path in BLOCKED_MODULES:
            raise weights_only_error(f"the pickle names {path}, from a module that is never "
                                     f"allowed (it could run commands).")
        entry = self.table.get(path)
        if entry is not None:
            kind, obj = entry
            if kind == CALL:
                self.callables.add(id(obj))
            return obj
        obj = user_allowed(path)
        if obj is not None:
            self.callables.add(id(obj))
            if isinstance(obj, type):
                self.classes.add(id(obj))
            return obj
        error = unsupported_global(path, self.ctx.name)
        if error is not None:
            raise error
        raise refusal(path, "class or function")

    def _op_GLOBAL(self) -> None:
        module = self._line().decode("utf-8")
        name = self._line().decode("utf-8")
        self.stack.append(self._global(module, name))

    def _op_STACK_GLOBAL(self) -> None:
        name, module = self.stack.pop(), self.stack.pop()
        if not isinstance(module, str) or not isinstance(name, str):
            raise self.ctx.fail("STACK_GLOBAL with non-string names")
        self.stack.append(self._global(module, name))

    def _op_REDUCE(self) -> None:
        args = self.stack.pop()
        func = self.stack[-1]
        if id(func) not in self.callables:
            raise weights_only_error(f"the pickle calls {func!r}, which is not an allowed "
                                     f"function (REDUCE).")
        if not isinstance(args, tuple):
            raise self.ctx.fail("REDUCE with arguments that are not a tuple")
        self.stack[-1] = self._call(func, args)

    def _call(self, func: Any, args: tuple, kwargs: dict | None = None) -> Any:
        try:
            return func(*args, **(kwargs or {}))
        except (CheckpointError, WeightsOnlyError, RuntimeError):
            raise
        except (TypeError, ValueError, OverflowError) as e:
            what = getattr(func, "__qualname__", repr(func))
            raise self.ctx.fail(f"calling {what} with the file's arguments failed "
                                f"({type(e).__name__}: {e})") from None

    def _newobj(self, cls: Any, args: Any, kwargs: dict | None = None) -> None:
        from ..nn.parameter import Parameter
        if not isinstance(args, tuple):
            raise self.ctx.fail("NEWOBJ with arguments that are not a tuple")
        if cls is Parameter:
            self.stack.append(self._call(Parameter, args))
            return
        if id(cls) not in self.classes:
            raise weights_only_error(f"the pickle creates an instance of {cls!r} (NEWOBJ); "
                                     f"only Parameter and classes allowlisted with "
                                     f"add_safe_globals are created.")
        obj = self._call(cls.__new__, (cls,) + args, kwargs)
        self.built.add(id(obj))
        self.keep.append(obj)
        self.stack.append(obj)

    def _op_NEWOBJ(self) -> None:
        args = self.stack.pop()
        self._newobj(self.stack.pop(), args)

    def _op_NEWOBJ_EX(self) -> None:
        kwargs, args = self.stack.pop(), self.stack.pop()
        if not isinstance(kwargs, dict):
            raise self.ctx.fail("NEWOBJ_EX with keyword arguments that are not a dict")
        self._newobj(self.stack.pop(), args, kwargs)

    def _op_BUILD(self) -> None:
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is OrderedDict:  # a state_dict's ``_metadata``
            if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
                raise self.ctx.fail("BUILD on an OrderedDict with a state that is not a dict")
            inst.__dict__.update(state)
            return
        if build_numpy(inst, state, self.ctx):
            return
        if id(type(inst)) not in self.classes:
            raise weights_only_error(f"the pickle sets the state of a {type(inst).__name__} "
                                     f"(BUILD); only OrderedDict, NumPy arrays and classes "
                                     f"allowlisted with add_safe_globals get state.")
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        rebuild_object(type(inst), state, into=inst)
        for k, v in (slots or {}).items():
            setattr(inst, k, v)

    def _op_BINPERSID(self) -> None:
        pid = self.stack.pop()
        if self.persistent_load is None:
            raise self.ctx.fail("a persistent id where none is expected")
        self.stack.append(self.persistent_load(pid))

    # --------------------------------------------------------------- data only
    def _op_PROTO(self) -> None:
        self.proto = self._read(1)[0]
        if self.proto > pickle.HIGHEST_PROTOCOL:
            raise self.ctx.fail(f"unsupported pickle protocol {self.proto}")

    def _op_FRAME(self) -> None:
        self._read(8)  # a frame length: the data follows inline

    def _op_MARK(self) -> None:
        self.marks.append(len(self.stack))

    def _op_POP(self) -> None:
        if self.marks and self.marks[-1] == len(self.stack):
            self.marks.pop()
        else:
            self.stack.pop()

    def _op_POP_MARK(self) -> None:
        self._pop_mark()

    def _op_DUP(self) -> None:
        self.stack.append(self.stack[-1])

    def _op_NONE(self) -> None:
        self.stack.append(None)

    def _op_NEWTRUE(self) -> None:
        self.stack.append(True)

    def _op_NEWFALSE(self) -> None:
        self.stack.append(False)

    def _op_BININT(self) -> None:
        self.stack.append(self._unpack("<i"))

    def _op_BININT1(self) -> None:
        self.stack.append(self._read(1)[0])

    def _op_BININT2(self) -> None:
        self.stack.append(self._unpack("<H"))

    def _op_LONG1(self) -> None:
        self.stack.append(pickle.decode_long(bytes(self._read(self._read(1)[0]))))

    def _op_LONG4(self) -> None:
        n = self._unpack("<i")
        if n > 1 << 16:  # a 500k-digit int costs seconds to print: no checkpoint has one
            raise self.ctx.fail(f"an integer of {n} bytes")
        self.stack.append(pickle.decode_long(bytes(self._read(n))))

    def _op_BINFLOAT(self) -> None:
        self.stack.append(self._unpack(">d"))

    def _text(self, n: int) -> None:
        self.stack.append(str(self._read(n), "utf-8", "surrogatepass"))

    def _op_BINUNICODE(self) -> None:
        self._text(self._unpack("<I"))

    def _op_SHORT_BINUNICODE(self) -> None:
        self._text(self._read(1)[0])

    def _op_BINUNICODE8(self) -> None:
        self._text(self._unpack("<Q"))

    def _op_SHORT_BINSTRING(self) -> None:
        self._py2_string(self._read(1)[0])

    def _op_BINSTRING(self) -> None:
        self._py2_string(self._unpack("<i"))

    def _py2_string(self, n: int) -> None:
        raw = bytes(self._read(n))  # a Python 2 str: text if it decodes (torch's utf-8)
        try:
            self.stack.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            self.stack.append(raw)

    def _op_SHORT_BINBYTES(self) -> None:
        self.stack.append(bytes(self._read(self._read(1)[0])))

    def _op_BINBYTES(self) -> None:
        self.stack.append(bytes(self._read(self._unpack("<I"))))

    def _op_BINBYTES8(self) -> None:
        self.stack.append(bytes(self._read(self._unpack("<Q"))))

    def _op_BYTEARRAY8(self) -> None:
        self.stack.append(bytearray(self._read(self._unpack("<Q"))))

    def _op_EMPTY_TUPLE(self) -> None:
        self.stack.append(())

    def _op_TUPLE(self) -> None:
        self.stack.append(tuple(self._pop_mark()))

    def _op_TUPLE1(self) -> None:
        self._tuple_of(1)

    def _tuple_of(self, n: int) -> None:
        if len(self.stack) - (self.marks[-1] if self.marks else 0) < n:
            raise IndexError(f"a {n}-tuple from a shorter stack")
        self.stack[-n:] = [tuple(self.stack[-n:])]

    def _op_TUPLE2(self) -> None:
        self._tuple_of(2)

    def _op_TUPLE3(self) -> None:
        self._tuple_of(3)

    def _op_EMPTY_LIST(self) -> None:
        self.stack.append([])

    def _op_LIST(self) -> None:
        self.stack.append(self._pop_mark())

    def _list_target(self) -> list:
        target = self.stack[-1]
        if type(target) is not list:
            raise self.ctx.fail(f"APPEND onto a {type(target).__name__}, not a list")
        return target

    def _op_APPEND(self) -> None:
        item = self.stack.pop()
        self._list_target().append(item)

    def _op_APPENDS(self) -> None:
        items = self._pop_mark()
        self._list_target().extend(items)

    def _op_EMPTY_DICT(self) -> None:
        self.stack.append({})

    def _op_DICT(self) -> None:
        items = self._pop_mark()
        self.stack.append(self._set_items({}, items))

    def _set_items(self, target: Any, items: list[Any]) -> Any:
        if type(target) not in _DICTS or len(items) % 2:
            raise self.ctx.fail(f"SETITEMS on a {type(target).__name__}, not a dict")
        try:
            for i in range(0, len(items), 2):
                target[items[i]] = items[i + 1]
        except TypeError:
            raise self.ctx.fail("a dict key is not hashable") from None
        return target

    def _op_SETITEM(self) -> None:
        value, key = self.stack.pop(), self.stack.pop()
        self._set_items(self.stack[-1], [key, value])

    def _op_SETITEMS(self) -> None:
        items = self._pop_mark()
        self._set_items(self.stack[-1], items)

    def _op_EMPTY_SET(self) -> None:
        self.stack.append(set())

    def _op_ADDITEMS(self) -> None:
        items = self._pop_mark()
        target = self.stack[-1]
        if type(target) is not set:
            raise self.ctx.fail(f"ADDITEMS onto a {type(target).__name__}, not a set")
        try:
            target.update(items)
        except TypeError:
            raise self.ctx.fail("a set item is not hashable") from None

    def _op_FROZENSET(self) -> None:
        try:
            self.stack.append(frozenset(self._pop_mark()))
        except TypeError:
            raise self.ctx.fail("a set item is not hashable") from None

    def _op_BINGET(self) -> None:
        self.stack.append(self.memo[self._read(1)[0]])

    def _op_LONG_BINGET(self) -> None:
        self.stack.append(self.memo[self._unpack("<I")])

    def _op_BINPUT(self) -> None:
        self.memo[self._read(1)[0]] = self.stack[-1]

    def _op_LONG_BINPUT(self) -> None:
        self.memo[self._unpack("<I")] = self.stack[-1]

    def _op_MEMOIZE(self) -> None:
        self.memo[len(self.memo)] = self.stack[-1]


_OPCODES = {name[4:]: getattr(pickle, name[4:]) for name in vars(SafeUnpickler)
            if name.startswith("_op_")}


def _children(obj: Any, built: set[int]) -> list[Any]:
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list(obj)
    if isinstance(obj, dict):
        return [*obj.keys(), *obj.values()]
    if id(obj) in built:
        return list(getattr(obj, "__dict__", {}).values())
    return []


def check_depth(root: Any, built: set[int], ctx: LoadContext) -> None:
    """Refuse a result nested more than :data:`MAX_DEPTH` containers deep (the longest
    chain, each object counted once; a cycle ends a chain). Iterative: a hostile depth
    never reaches Python's recursion limit here."""
    depth: dict[int, int] = {}
    on_path: set[int] = set()
    todo: list[tuple[Any, bool]] = [(root, False)]
    while todo:
        obj, done = todo.pop()
        key = id(obj)
        if done:
            on_path.discard(key)
            kids = [depth.get(id(c), 0) for c in _children(obj, built)]
            depth[key] = 1 + max(kids, default=0)
            if depth[key] > MAX_DEPTH:
                raise ctx.fail(f"the structure is nested more than {MAX_DEPTH} levels deep")
            continue
        if key in depth or key in on_path:
            continue
        kids = _children(obj, built)
        if not kids:
            depth[key] = 1
            continue
        on_path.add(key)
        todo.append((obj, True))
        todo.extend((c, False) for c in kids if id(c) not in depth and id(c) not in on_path)
