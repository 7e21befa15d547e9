"""TorchScript's type objects (torch.IntType, torch.ListType, ...) against torch's: the
printed forms, kinds, contained types, equality and the subtype relation, built the same
way on both sides."""
import itertools

import numpy as np
import pytest
import torch

import omnitensor as ot
import omnitensor.torch_face as tf
from omnitensor.jit import types as OT

_SINGLETONS = ["AnyType", "BoolType", "ComplexType", "DeviceObjType", "FloatType", "IntType",
               "NoneType", "NumberType", "PyObjectType", "StringType", "TensorType",
               "StreamObjType", "SymIntType", "SymBoolType"]


def _constructions():
    """name -> a function building the type from a module holding torch's type classes."""
    def g(name):
        return lambda M: getattr(M, name).get()

    out = {n: g(n) for n in _SINGLETONS}
    i, f, s, c, n, t = (g(x) for x in ("IntType", "FloatType", "StringType", "ComplexType",
                                       "NoneType", "TensorType"))
    out.update({
        "List[int]": lambda M: M.ListType(i(M)),
        "ofInts": lambda M: M.ListType.ofInts(), "ofFloats": lambda M: M.ListType.ofFloats(),
        "ofBools": lambda M: M.ListType.ofBools(), "ofTensors": lambda M: M.ListType.ofTensors(),
        "ofStrings": lambda M: M.ListType.ofStrings(),
        "ofComplexDoubles": lambda M: M.ListType.ofComplexDoubles(),
        "List[number]": lambda M: M.ListType(M.NumberType.get()),
        "List[Any]": lambda M: M.ListType(M.AnyType.get()),
        "List[List[int]]": lambda M: M.ListType(M.ListType(i(M))),
        "Optional[int]": lambda M: M.OptionalType(i(M)),
        "Optional[number]": lambda M: M.OptionalType(M.NumberType.get()),
        "Optional[Optional[int]]": lambda M: M.OptionalType(M.OptionalType(i(M))),
        "ofTensor": lambda M: M.OptionalType.ofTensor(),
        "List[Optional[Tensor]]": lambda M: M.ListType(M.OptionalType(t(M))),
        "Dict[str, int]": lambda M: M.DictType(s(M), i(M)),
        "Dict[str, number]": lambda M: M.DictType(s(M), M.NumberType.get()),
        "Dict[Tensor, float]": lambda M: M.DictType(t(M), f(M)),
        "Tuple[int, float]": lambda M: M.TupleType([i(M), f(M)]),
        "Tuple[number, number]": lambda M: M.TupleType([M.NumberType.get()] * 2),
        "Tuple[int]": lambda M: M.TupleType([i(M)]),
        "Tuple[()]": lambda M: M.TupleType([]),
        "Tuple[NoneType]": lambda M: M.TupleType([n(M)]),
        "Union[int, str]": lambda M: M.UnionType([i(M), s(M)]),
        "Union[str, int]": lambda M: M.UnionType([s(M), i(M)]),
        "Union[int, None]": lambda M: M.UnionType([i(M), n(M)]),
        "Union[int, None, str]": lambda M: M.UnionType([i(M), n(M), s(M)]),
        "Union[float, int, complex]": lambda M: M.UnionType([f(M), i(M), c(M)]),
        "Union[number, int]": lambda M: M.UnionType([M.NumberType.get(), i(M)]),
        "Union[float, int, str, complex]": lambda M: M.UnionType([f(M), i(M), s(M), c(M)]),
        "Union[str, int, Tensor, float, complex]":
            lambda M: M.UnionType([s(M), i(M), t(M), f(M), c(M)]),
        "Union[Union[int, str], float]":
            lambda M: M.UnionType([M.UnionType([i(M), s(M)]), f(M)]),
        "Union[Optional[int], str]": lambda M: M.UnionType([M.OptionalType(i(M)), s(M)]),
        "Union[SymInt, int]": lambda M: M.UnionType([M.SymIntType.get(), i(M)]),
        "Union[List[int], Tensor]": lambda M: M.UnionType([M.ListType(i(M)), t(M)]),
        "Optional[Union[int, str]]": lambda M: M.OptionalType(M.UnionType([i(M), s(M)])),
        "Optional[Any]": lambda M: M.OptionalType(M.AnyType.get()),
        "Future[int]": lambda M: M.FutureType(i(M)),
        "Future[number]": lambda M: M.FutureType(M.NumberType.get()),
        "Await[int]": lambda M: M.AwaitType(i(M)),
        "Await[number]": lambda M: M.AwaitType(M.NumberType.get()),
        "RRef[int]": lambda M: M.RRefType(i(M)),
        "RRef[number]": lambda M: M.RRefType(M.NumberType.get()),
    })
    return out


CONSTRUCTIONS = _constructions()


def _both(name):
    build = CONSTRUCTIONS[name]
    return build(OT), build(torch)


def _describe(t):
    return (str(t), repr(t), t.annotation_str, t.str(), t.kind(),
            [str(x) for x in t.containedTypes()])


@pytest.mark.parametrize("name", list(CONSTRUCTIONS))
def test_type_forms_match_torch(name):
    mine, ref = _both(name)
    assert _describe(mine) == _describe(ref)
    for getter in ("getElementType", "getKeyType", "getValueType", "elements"):
        if hasattr(type(ref), getter) and getter in type(ref).__dict__:
            assert str(getattr(mine, getter)()) == str(getattr(ref, getter)())


def test_subtype_and_equality_match_torch():
    """isSubtypeOf and == over every pair of the constructions, as torch answers them."""
    names = list(CONSTRUCTIONS)
    built = {n: _both(n) for n in names}
    wrong = []
    for a, b in itertools.product(names, names):
        (ma, ta), (mb, tb) = built[a], built[b]
        if (ma.isSubtypeOf(mb), ma == mb) != (ta.isSubtypeOf(tb), ta == tb):
            wrong.append((a, b, ma.isSubtypeOf(mb), ma == mb, ta.isSubtypeOf(tb), ta == tb))
    assert not wrong, wrong[:10]
    assert len(names) ** 2 > 2000


def test_union_member_order_matches_torch():
    """A Union lists its members in c10's kind order whatever order they were given in."""
    plain = [n for n in _SINGLETONS if n not in ("AnyType", "NumberType")]
    for a, b in itertools.combinations(plain, 2):
        for pair in ((a, b), (b, a)):
            try:
                ref = torch.UnionType([getattr(torch, p).get() for p in pair])
            except RuntimeError:
                with pytest.raises(RuntimeError):
                    OT.UnionType([getattr(OT, p).get() for p in pair])
                continue
            mine = OT.UnionType([getattr(OT, p).get() for p in pair])
            assert _describe(mine) == _describe(ref), pair


@pytest.mark.parametrize("build", [
    lambda M: M.UnionType([M.IntType.get()]),
    lambda M: M.UnionType([M.IntType.get(), M.IntType.get()]),
    lambda M: M.UnionType([M.AnyType.get(), M.IntType.get()]),
    lambda M: M.OptionalType(M.NoneType.get()),
])
def test_degenerate_unions_raise_as_torch(build):
    with pytest.raises(RuntimeError):
        build(torch)
    with pytest.raises(RuntimeError):
        build(OT)


def test_singletons_and_hashing_match_torch():
    for name in _SINGLETONS:
        assert getattr(OT, name).get() is getattr(OT, name).get()
        assert getattr(torch, name).get() is getattr(torch, name).get()
        with pytest.raises(TypeError):
            hash(getattr(torch, name).get())
        with pytest.raises(TypeError):
            hash(getattr(OT, name).get())
    assert issubclass(OT.IntType, OT.Type) and issubclass(torch.IntType, torch.Type)


def test_tensor_type_from_tensor_matches_torch():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for arr in (a, a.T.astype(np.float64), np.zeros((4,), np.int64)):
        ref = torch.TensorType.create_from_tensor(torch.tensor(arr) if arr.flags.c_contiguous
                                                  else torch.tensor(arr.T).T)
        x = ot.tensor(arr) if arr.flags.c_contiguous else ot.tensor(arr.T).T
        mine = OT.TensorType.create_from_tensor(x)
        assert _describe(mine) == _describe(ref)
        assert (mine.dim(), mine.sizes(), mine.strides(), mine.scalarType(),
                str(mine.device()), mine.requires_grad()) == \
            (ref.dim(), ref.sizes(), ref.strides(), ref.scalarType(), str(ref.device()),
             ref.requires_grad())
        plain, tplain = OT.TensorType.get(), torch.TensorType.get()
        assert (mine == plain, mine.isSubtypeOf(plain), plain.isSubtypeOf(mine)) == \
            (ref == tplain, ref.isSubtypeOf(tplain), tplain.isSubtypeOf(ref))
    tt, mt = torch.TensorType.get(), OT.TensorType.get()
    assert (mt.dim(), mt.sizes(), mt.scalarType(), mt.device(), mt.requires_grad(),
            mt.undefined()) == (tt.dim(), tt.sizes(), tt.scalarType(), tt.device(),
                                tt.requires_grad(), tt.undefined())


def test_inferred_type():
    ok = OT.InferredType(OT.IntType.get())
    assert ok.success() and ok.type() == OT.IntType.get() and ok.reason() == ""
    failed = OT.InferredType("no annotation")
    assert not failed.success() and failed.reason() == "no annotation"
    with pytest.raises(RuntimeError, match="no annotation"):
        failed.type()


def test_names_on_the_torch_face():
    for name in _SINGLETONS + ["Type", "DictType", "ListType", "OptionalType", "TupleType",
                               "UnionType", "FutureType", "AwaitType", "RRefType", "ClassType",
                               "EnumType", "InterfaceType", "InferredType"]:
        assert getattr(tf, name) is getattr(OT, name)
        assert getattr(ot._C, name) is getattr(OT, name)
        assert hasattr(torch, name) and hasattr(torch._C, name)
