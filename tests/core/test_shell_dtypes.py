"""torch's shell dtypes (uint1..7, int1..7, bits*, float4_e2m1fn_x2): named with torch's
attributes, tensors of them refused on every device (omnitensor has no view(dtype))."""
import pytest
import torch

import omnitensor as ot
from omnitensor.core.shell_dtypes import shell_dtypes

NAMES = [d.name for d in shell_dtypes] + ["bit"]


@pytest.mark.parametrize("name", NAMES)
def test_attributes_match_torch(name):
    d, td = getattr(ot, name), getattr(torch, name)
    assert str(d).split(".", 1)[1] == str(td).split(".", 1)[1]
    assert repr(d).split(".", 1)[1] == repr(td).split(".", 1)[1]
    assert d.itemsize == td.itemsize
    assert d.is_floating_point == td.is_floating_point
    assert d.is_complex == td.is_complex
    assert ot.as_dtype(name) is d
    try:
        expected = td.is_signed
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=str(e)):
            d.is_signed  # noqa: B018
    else:
        assert d.is_signed == expected
    assert d.to_real() is d and str(td.to_real()) == str(td)
    with pytest.raises(RuntimeError):
        td.to_complex()
    with pytest.raises(ot.DTypeError, match="Unknown Complex ScalarType"):
        d.to_complex()


@pytest.mark.parametrize("name", ["uint4", "int2", "bits8", "bits16", "float4_e2m1fn_x2"])
def test_no_promotion(name):
    with pytest.raises(RuntimeError):
        torch.promote_types(getattr(torch, name), torch.uint8)
    with pytest.raises(ot.DTypeError):
        ot.promote_types(getattr(ot, name), ot.uint8)


@pytest.mark.parametrize("name", ["uint1", "int4", "bits8", "bits16", "float4_e2m1fn_x2"])
def test_tensors_refused(device, name):
    d = getattr(ot, name)
    for make in (lambda: ot.empty(3, dtype=d, device=device),
                 lambda: ot.zeros(3, dtype=d, device=device),
                 lambda: ot.tensor([1, 2], dtype=d, device=device),
                 lambda: ot.ones(2, device=device).to(d)):
        with pytest.raises(ot.UnsupportedDTypeError, match="view\\(dtype\\)"):
            make()
