"""The promotion table, weak scalars, casting rules, finfo/iinfo, default dtype."""
import numpy as np
import pytest

import omnitensor as ot

INT = [ot.int8, ot.int16, ot.int32, ot.int64]
UINT = [ot.uint8, ot.uint16, ot.uint32, ot.uint64]


def test_dtypes_are_interned_and_named():
    assert ot.as_dtype("float32") is ot.float32
    assert ot.as_dtype(np.float64) is ot.float64
    assert ot.as_dtype("float") is ot.float32 and ot.as_dtype("long") is ot.int64
    assert ot.float is ot.float32 and ot.double is ot.float64 and ot.long is ot.int64
    assert repr(ot.int8) == "omnitensor.int8"
    with pytest.raises(TypeError, match="unknown dtype"):
        ot.as_dtype("float128x")


@pytest.mark.parametrize("a,b,want", [
    (ot.int8, ot.int16, ot.int16), (ot.uint8, ot.int8, ot.int16), (ot.uint16, ot.int8, ot.int32),
    (ot.uint32, ot.int32, ot.int64), (ot.uint8, ot.uint64, ot.uint64),
    (ot.float16, ot.float32, ot.float32), (ot.float32, ot.complex64, ot.complex64),
    (ot.float64, ot.complex64, ot.complex128), (ot.bool, ot.bool, ot.bool),
    # torch's cross-kind rule: the higher kind wins
    (ot.int64, ot.float32, ot.float32), (ot.bool, ot.int8, ot.int8),
    (ot.uint8, ot.float16, ot.float16), (ot.int32, ot.complex64, ot.complex64),
])
def test_promotion_table(a, b, want):
    assert ot.promote_types(a, b) is want
    assert ot.promote_types(b, a) is want


def test_array_api_lattice_matches_numpy_within_kind():
    for group in (INT, UINT, [ot.float16, ot.float32, ot.float64]):
        for a in group:
            for b in group:
                assert ot.promote_types(a, b).np == np.promote_types(a.np, b.np)


def test_uint64_with_signed_is_an_error():
    with pytest.raises(TypeError, match="uint64"):
        ot.promote_types(ot.uint64, ot.int8)


def test_weak_scalars(device):
    x = ot.ones(3, dtype=ot.float16, device=device) if ot.device(device).supports_dtype(
        ot.float16) else None
    if x is not None:
        assert (x + 2.5).dtype is ot.float16
    i8 = ot.ones(3, dtype=ot.int8, device=device)
    assert (i8 + 3).dtype is ot.int8
    assert (i8 * 2.5).dtype is ot.get_default_dtype()
    b = ot.ones(3, dtype=ot.bool, device=device)
    assert (b + 1).dtype is ot.int64
    assert (b & True).dtype is ot.bool
    f = ot.ones(3, device=device)
    assert (f + 1j).dtype is ot.complex64


def test_result_type_and_can_cast():
    assert ot.result_type(ot.int8, ot.uint8) is ot.int16
    assert ot.result_type(ot.ones(2, dtype=ot.float32), 1.0) is ot.float32
    assert ot.result_type(1, 2.0) is ot.float32
    assert ot.can_cast(ot.int8, ot.int16) and not ot.can_cast(ot.int16, ot.int8)
    assert not ot.can_cast(ot.float32, ot.int64)
    assert ot.can_cast(ot.int64, ot.float32, "same_kind")


def test_finfo_iinfo():
    f = ot.finfo(ot.float32)
    assert f.bits == 32 and f.eps == np.finfo(np.float32).eps and f.dtype is ot.float32
    assert ot.finfo(ot.complex128).dtype is ot.float64
    i = ot.iinfo(ot.int16)
    assert (i.min, i.max, i.bits) == (-32768, 32767, 16)
    with pytest.raises(TypeError):
        ot.finfo(ot.int32)
    with pytest.raises(TypeError):
        ot.iinfo(ot.float32)


def test_default_dtype_roundtrip(device):
    assert ot.get_default_dtype() is ot.float32
    try:
        ot.set_default_dtype(ot.float64)
        if ot.device(device).supports_dtype(ot.float64):
            assert ot.tensor([1.5], device=device).dtype is ot.float64
            assert ot.ones(2, device=device).dtype is ot.float64
    finally:
        ot.set_default_dtype(ot.float32)
    with pytest.raises(TypeError):
        ot.set_default_dtype(ot.int32)


def test_isdtype():
    assert ot.isdtype(ot.int8, "signed integer") and ot.isdtype(ot.uint8, "integral")
    assert ot.isdtype(ot.float32, ("bool", "real floating"))
    assert not ot.isdtype(ot.complex64, "real floating")
    assert ot.isdtype(ot.float64, ot.float64)
    with pytest.raises(ValueError):
        ot.isdtype(ot.int8, "nope")
