"""torch's DataPipe base classes and decorators (``torch.utils.data.datapipes``):
``IterDataPipe``/``MapDataPipe`` are datasets whose registered transforms are methods
(``@functional_datapipe("name")`` makes ``pipe.name(...)`` build that pipe on ``pipe``),
``DataChunk`` is a batch list, and the decorators check determinism and element types.

Types: a pipe class declares its element type as ``IterDataPipe[int]``;
``runtime_validation`` checks each element ``__iter__`` yields against it and
``argument_validation`` checks that an argument annotated ``IterDataPipe[T]`` is a pipe of
a subtype of ``T``. The check covers classes, ``Any``, unions and the element-less
generic forms (``tuple``, ``list[int]`` as ``list``), not torch's full structural
subtyping of nested generics.
"""
from __future__ import annotations

import functools
import inspect
import typing
from typing import Any, Callable, Iterable, Iterator, TypeVar

from .dataset import Dataset, IterableDataset

__all__ = ["IterDataPipe", "MapDataPipe", "DFIterDataPipe", "DataChunk",
           "functional_datapipe", "non_deterministic", "guaranteed_datapipes_determinism",
           "argument_validation", "runtime_validation", "runtime_validation_disabled"]

_T = TypeVar("_T")
_state = {"determinism": False, "runtime_validation": True}


def _element_type(obj: Any) -> Any:
    """The ``T`` of a pipe class declared ``IterDataPipe[T]`` (``Any`` if undeclared)."""
    cls = obj if isinstance(obj, type) else type(obj)
    for klass in cls.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            origin = typing.get_origin(base)
            if isinstance(origin, type) and issubclass(origin, (IterDataPipe, MapDataPipe)):
                args = typing.get_args(base)
                return args[0] if args and not isinstance(args[0], TypeVar) else Any
    return Any


def _is_instance(value: Any, hint: Any) -> bool:
    if hint is Any or isinstance(hint, TypeVar):
        return True
    if typing.get_origin(hint) is typing.Union:
        return any(_is_instance(value, h) for h in typing.get_args(hint))
    origin = typing.get_origin(hint)
    return isinstance(value, origin if origin is not None else hint)


def _is_subtype(sub: Any, sup: Any) -> bool:
    if sup is Any or isinstance(sup, TypeVar):
        return True
    if sub is Any:
        return False
    if typing.get_origin(sub) is typing.Union:
        return all(_is_subtype(s, sup) for s in typing.get_args(sub))
    if typing.get_origin(sup) is typing.Union:
        return any(_is_subtype(sub, s) for s in typing.get_args(sup))
    a, b = typing.get_origin(sub) or sub, typing.get_origin(sup) or sup
    return isinstance(a, type) and isinstance(b, type) and issubclass(a, b)


class _Functional:
    """The registry of ``@functional_datapipe`` names of one pipe family."""

    functions: dict[str, Callable] = {}

    @classmethod
    def register_datapipe_as_function(cls, function_name: str, cls_to_register: Any,
                                      enable_df_api_tracing: bool = False) -> None:
        if function_name in cls.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it "
                            f"is already taken")
        cls.functions[function_name] = cls_to_register

    def __getattr__(self, name: str) -> Any:
        target = type(self).functions.get(name)
        if target is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                                 f"'{name}'")
        return functools.partial(target, self)


class IterDataPipe(_Functional, IterableDataset[_T]):
    """An iterable dataset whose registered transforms are methods."""

    functions: dict[str, Callable] = {}

    def __iter__(self) -> Iterator[_T]:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")


class MapDataPipe(_Functional, Dataset[_T]):
    """A map-style dataset whose registered transforms are methods."""

    functions: dict[str, Callable] = {}


class DFIterDataPipe(IterDataPipe):
    """An IterDataPipe of dataframes (torch's marker class for its DataFrame API)."""

    def _is_dfpipe(self) -> bool:
        return True


class DataChunk(list):
    """A batch of items as a list (what batching pipes yield)."""

    def __init__(self, items: Iterable[Any]) -> None:
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent: str = "") -> str:
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def raw_iterator(self) -> Iterator[Any]:
        yield from self.items


class functional_datapipe:  # torch's name
    """``@functional_datapipe("name")`` on a pipe class makes ``pipe.name(*args)`` build
    ``cls(pipe, *args)`` (for the pipes of its family: Iter or Map)."""

    def __init__(self, name: str, enable_df_api_tracing: bool = False) -> None:
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls: Any) -> Any:
        target = cls.cls if isinstance(cls, non_deterministic) else cls
        if isinstance(target, type) and issubclass(target, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(self.name, cls,
                                                       self.enable_df_api_tracing)
        elif isinstance(target, type) and issubclass(target, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        # anything else is returned unregistered, as torch does
        return cls


class non_deterministic:  # torch's name
    """Marks an IterDataPipe class as non-deterministic (or, given a function of the
    constructor's arguments, non-deterministic when it returns True): building one
    inside ``guaranteed_datapipes_determinism()`` raises TypeError."""

    cls: Any = None

    def __init__(self, arg: Any) -> None:
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError(f"Only `IterDataPipe` can be decorated with "
                                f"`non_deterministic`, but {arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.cls is not None:
            if _state["determinism"]:
                raise TypeError(f"{self.cls.__name__} is non-deterministic, but you set "
                                f"'guaranteed_datapipes_determinism'. You can turn off "
                                f"determinism for this DataPipe if that is acceptable for "
                                f"your application")
            return self.cls(*args, **kwargs)
        if not (isinstance(args[0], type) and issubclass(args[0], IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but "
                            f"{getattr(args[0], '__name__', args[0])} is found")
        self.cls = args[0]
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args: Any, **kwargs: Any) -> Any:
        res = self.deterministic_fn(*args, **kwargs)
        if not isinstance(res, bool):
            raise TypeError(f"deterministic_fn of `non_deterministic` decorator is required "
                            f"to return a boolean value, but {type(res)} is found")
        if _state["determinism"] and res:
            raise TypeError(f"{self.cls.__name__} is non-deterministic with the inputs, but "
                            f"you set 'guaranteed_datapipes_determinism'. You can turn off "
                            f"determinism for this DataPipe if that is acceptable for your "
                            f"application")
        return self.cls(*args, **kwargs)


class _Switch:
    key = ""
    value = False

    def __init__(self) -> None:
        self.prev = _state[self.key]
        _state[self.key] = self.value

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _state[self.key] = self.prev


class guaranteed_datapipes_determinism(_Switch):  # torch's name
    """Inside, building a ``non_deterministic`` pipe raises TypeError."""
    key, value = "determinism", True


class runtime_validation_disabled(_Switch):  # torch's name
    """Inside, ``runtime_validation`` does not check elements."""
    key, value = "runtime_validation", False


def runtime_validation(f: Callable) -> Callable:
    """Decorate a pipe's ``__iter__``: each element must be an instance of the pipe's
    declared element type (RuntimeError otherwise)."""
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @functools.wraps(f)
    def wrapper(self: Any) -> Iterator[Any]:
        hint = _element_type(self)
        for d in f(self):
            if _state["runtime_validation"] and not _is_instance(d, hint):
                raise RuntimeError(f"Expected an instance as subtype of {hint}, but found "
                                   f"{d}({type(d)})")
            yield d
    return wrapper


def argument_validation(f: Callable) -> Callable:
    """Decorate a function (a pipe's ``__init__``): each argument annotated
    ``IterDataPipe[T]`` must be an IterDataPipe whose element type is a subtype of T."""
    signature = inspect.signature(f)
    hints = typing.get_type_hints(f)

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for name, value in signature.bind(*args, **kwargs).arguments.items():
            hint = hints.get(name)
            origin = typing.get_origin(hint) or hint
            if not (isinstance(origin, type) and issubclass(origin, IterDataPipe)):
                continue
            if not isinstance(value, IterDataPipe):
                raise TypeError(f"Expected argument '{name}' as a IterDataPipe, but found "
                                f"{type(value)}")
            want = typing.get_args(hint)[0] if typing.get_args(hint) else Any
            if not _is_subtype(_element_type(value), want):
                raise TypeError(f"Expected type of argument '{name}' as a subtype of hint "
                                f"{want}, but found {_element_type(value)}")
        return f(*args, **kwargs)
    return wrapper
