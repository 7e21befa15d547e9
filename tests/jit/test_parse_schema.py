"""torch.parse_schema, FunctionSchema and Argument against torch's, over the schemas torch
itself registers (torch._C._jit_get_all_schemas): each is printed by torch, parsed by both,
and every field compared, as is the text each prints back."""
import itertools
import random
import re

import pytest
import torch

import omnitensor as ot
import omnitensor.torch_face as tf
from omnitensor.jit import schema as OS

# sorted: which schemas torch has registered depends on what the process imported
ALL = sorted(str(s) for s in torch._C._jit_get_all_schemas())
SAMPLE = random.Random(27).sample(ALL, 300)


def _sets(text):
    """c10 prints an alias set from an unordered_set (``Tensor(a|b)`` comes back as
    ``(b|a)``): compare the sets, sorted."""
    return re.sub(r"\(([\w*]+(?:\|[\w*]+)+)", lambda m: "(" + "|".join(
        sorted(m.group(1).split("|"))), text)


def _contained(t):
    """A type's contained types; not a class's: torch's registered C++ classes
    (``__torch__.torch.classes...``) hold their attribute types (a Capsule), which a
    parsed name does not know."""
    return None if t.kind() == "ClassType" else [str(c) for c in t.containedTypes()]


def _arg(a):
    info = a.alias_info
    return (a.name, str(a.type), a.type.kind(), a.type.str(), str(a.real_type),
            a.real_type.kind(), a.real_type.str(), _contained(a.type),
            a.N, a.has_default_value(), repr(a.default_value), type(a.default_value).__name__,
            a.kwarg_only, a.is_out, a.is_write,
            None if info is None else (info.is_write, info.before_set, info.after_set))


def _fields(s):
    return (s.name, s.overload_name, _sets(str(s)), [_arg(a) for a in s.arguments],
            [_arg(r) for r in s.returns], s.is_mutable, s._is_view_op())


def _compare(texts):
    wrong = []
    for text in texts:
        try:
            ref = torch.parse_schema(text)
        except RuntimeError:  # registered from C++ in a form torch's parser refuses
            with pytest.raises(RuntimeError):  # (PyObject, when torch.distributed.tensor
                OS.parse_schema(text)          # was imported): refused here too
            continue
        mine = OS.parse_schema(text)
        if _fields(mine) != _fields(ref):
            wrong.append(text)
        assert mine == OS.parse_schema(str(mine)) and hash(mine) == hash(
            OS.parse_schema(str(mine)))
    return wrong


def test_sample_of_torch_schemas_matches_torch():
    wrong = _compare(SAMPLE)
    assert not wrong, wrong[:5]


@pytest.mark.slow
def test_every_torch_schema_matches_torch():
    assert len(ALL) > 1000
    wrong = _compare(ALL)
    assert not wrong, (len(wrong), wrong[:5])


@pytest.mark.parametrize("text", [
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::split(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]",
    "foo(int? x=None, float[2] y=[1., 2.]) -> (Tensor, Tensor)",
    "foo(int[2] x=1, float y=1e-5, float z=2.5, str w='a\"b', Scalar q=-1.5e10) -> Tensor",
    "ns::f.o(Tensor(a!) self, *, Tensor(b!)[] out, str s=\"x\\ny\") -> (Tensor(a!) r, ...)",
    "prim::f(...) -> ...",
    "aten::items.str(Dict(str, t) self) -> ((str, t)[])",
    "aten::f(Tensor(a!)?[] t, str[](a) s, Future(t) f, RRef(t) r, Await(t) w) -> t(*)",
    "aten::g(bool[3] m=[True, False, True], int inf=0, float nan=1.) -> ()",
    "aten::h(Tensor self, ScalarType? dtype=4, Layout layout=0, SymInt[2] s=[1, 1]) -> int",
])
def test_handwritten_schemas_match_torch(text):
    assert not _compare([text])


@pytest.mark.parametrize("text", ["aten::f(Foo x) -> Tensor", "aten::f(Tensor) -> Tensor",
                                  "aten::f(Tensor x)", "aten::f(Tensor x -> Tensor",
                                  "aten::g(float a=inf) -> ()"])
def test_bad_schemas_raise_as_torch(text):
    with pytest.raises(RuntimeError):
        torch.parse_schema(text)
    with pytest.raises(RuntimeError):
        OS.parse_schema(text)


def test_argument_and_schema_constructors():
    """torch's positional constructors: Argument(name, type, N, default_value, kwarg_only,
    alias_info) and FunctionSchema(name, overload, arguments, returns, vararg, varret)."""
    for M in (torch, OS):
        types = torch if M is torch else ot.jit.types
        x = M.Argument("x", types.IntType.get(), None, 3, True, None)
        r = M.Argument("", types.TensorType.get(), None, None, False, None)
        s = M.FunctionSchema("ns::f", "o", [x], [r], False, False)
        assert str(s) == "ns::f.o(*, int x=3) -> Tensor"
        assert (x.name, x.default_value, x.kwarg_only, x.N) == ("x", 3, True, None)


def test_names_on_the_torch_face():
    for name in ("parse_schema", "FunctionSchema", "Argument"):
        assert getattr(tf, name) is getattr(OS, name) is getattr(ot._C, name)
    assert ot._C._AliasInfo is OS.AliasInfo
    assert isinstance(tf.parse_schema("aten::f(int x) -> int"), tf.FunctionSchema)


_VARIANTS = [
    "ns::f(Tensor self, int x=1) -> Tensor", "ns::f(Tensor self, int x=2) -> Tensor",
    "ns::f(Tensor self, int x=1, *, bool y=False) -> Tensor",
    "ns::f(Tensor self, int? x=1) -> Tensor", "ns::f(Tensor self, Scalar x=1) -> Tensor",
    "ns::f(Tensor self, int x) -> Tensor", "ns::f(Tensor self, *, int x=1) -> Tensor",
    "ns::f(Tensor self, int x=1, bool z=False) -> Tensor",
    "ns::f(Tensor self, int x=1, *, Tensor(a!) out) -> Tensor(a!)",
    "ns::f(Tensor self, int x=1, bool y=True, *, Tensor(a!) out) -> Tensor(a!)",
    "ns::f(Tensor self, int x=1) -> Tensor?", "ns::f(Tensor self, int x=1) -> (Tensor, Tensor)",
    "ns::f(Tensor(a) self, int x=1) -> Tensor(a)", "ns::f(Tensor self, float x=1.) -> Tensor",
    "ns::f(Tensor self, int[2] x=1) -> Tensor", "ns::f(Tensor self, int[] x=[1]) -> Tensor",
    "ns::f(Tensor self, int[] x=1) -> Tensor", "ns::f(Tensor self, int x=1, int w) -> Tensor",
]


def _overload_pairs(families):
    by_name = {}
    for text in ALL:
        by_name.setdefault(text.split("(")[0].split(".")[0], []).append(text)
    names = sorted(by_name) if families is None else random.Random(27).sample(
        sorted(by_name), families)
    return [(a, b) for n in names for a in by_name[n][:6] for b in by_name[n][:6]]


def _compat(parse, new, old):
    try:
        return parse(new).is_backward_compatible_with(parse(old))
    except RuntimeError:  # a schema c10 rejects (a scalar default for int[], a
        return "error"    # positional argument without a default after one with)


def _check_backward_compat(pairs):
    wrong = [(a, b) for a, b in pairs
             if _compat(OS.parse_schema, a, b) != _compat(torch.parse_schema, a, b)]
    assert not wrong, wrong[:5]
    return sum(_compat(torch.parse_schema, a, b) is True for a, b in pairs)


def test_backward_compatibility_matches_torch():
    pairs = list(itertools.product(_VARIANTS, _VARIANTS)) + _overload_pairs(60)
    assert _check_backward_compat(pairs) > 50


@pytest.mark.slow
def test_backward_compatibility_over_all_overloads_matches_torch():
    assert _check_backward_compat(_overload_pairs(None)) > 1000
