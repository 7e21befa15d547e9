"""Every dtype cast on every device equals NumPy's (the cpu backend) over the source's full
value range: each type's extremes, fractions, negatives into unsigned types, bool, and
out-of-range floats, NaN and inf into integers (issue 32: float32 -> uint8 saturated at 127
on sycl:0; NumPy gives 178 for 178.7). Integer sources wrap like NumPy; a float source
holds what NumPy converts on this machine (its C casts), which the generated kernels match."""
from __future__ import annotations

import numpy as np
import pytest

import omnitensor as ot

NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64", "complex64", "complex128")


def _values(src: np.dtype) -> np.ndarray:
    if src.kind == "b":
        return np.array([False, True, True, False])
    if src.kind in "iu":
        info = np.iinfo(src)
        vals = [info.min, info.min + 1, -1 if src.kind == "i" else 1, 0, 1, 7, 127, 128, 200,
                255, 256, 32767, 65535, info.max - 1, info.max]
        return np.array([v for v in vals if info.min <= v <= info.max], dtype=src)
    real = np.float16 if src == np.float16 else (np.float32 if src.itemsize <= 8 and
                                                 src != np.float64 else np.float64)
    vals = [0.0, -0.0, 0.4, 0.5, 0.6, 1.5, -1.5, 2.5, 127.9, 178.7, 200.0, 255.0, 255.9,
            -128.0, -129.5, 32767.0, 65535.0, -0.7, 1e4]
    x = np.array(vals, dtype=real)
    if src.kind == "c":
        return (x + 1j * x[::-1]).astype(src)
    return x.astype(src)


def _special(src: np.dtype) -> np.ndarray:
    """NaN, inf and values beyond every integer type (C leaves these undefined: compared
    with NumPy on this machine)."""
    x = np.array([np.nan, np.inf, -np.inf, 3e4, -3e4, 1e10, -1e10, 1e30], dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(src)


def _in_range(vals: np.ndarray, dst: np.dtype) -> np.ndarray:
    """The mask of float values whose conversion to integer ``dst`` C defines (finite, in
    range after truncation toward zero)."""
    if vals.dtype.kind not in "fc" or dst.kind not in "iu":
        return np.ones(vals.shape, bool)
    real = np.real(vals).astype(np.float64)
    info = np.iinfo(dst)
    with np.errstate(invalid="ignore"):
        t = np.trunc(real)
        return np.isfinite(real) & (t >= info.min) & (t <= info.max)


def _compare(device: str, src: str, defined: bool) -> list[str]:
    src_dt = np.dtype(src)
    dev = ot.device(device)
    if not dev.supports_dtype(ot.as_dtype(src)):
        pytest.skip(f"{device} has no {src}")
    bad = []
    for dst in NAMES:
        dst_dt = np.dtype(dst)
        if not dev.supports_dtype(ot.as_dtype(dst)):
            continue
        vals = np.concatenate([_values(src_dt), _special(src_dt)]) if src_dt.kind in "fc" \
            else _values(src_dt)
        keep = _in_range(vals, dst_dt)
        vals = vals[keep] if defined else vals[~keep]
        if not vals.size:
            continue
        with np.errstate(all="ignore"), _quiet():
            want = ot.tensor(vals, device="cpu").to(getattr(ot, dst)).numpy()
            got = ot.tensor(vals, device=device).to(getattr(ot, dst)).cpu().numpy()
        if not np.array_equal(got, want, equal_nan=dst_dt.kind in "fc"):
            bad.append(f"{src} -> {dst}: {vals.tolist()} gave {got.tolist()}, "
                       f"NumPy {want.tolist()}")
    return bad


@pytest.mark.parametrize("src", NAMES)
def test_every_defined_cast_matches_numpy(device, src):
    """Every value C defines the conversion of (integers wrap like NumPy)."""
    bad = _compare(device, src, defined=True)
    assert not bad, "\n".join(bad[:8])


@pytest.mark.parametrize("src", [n for n in NAMES if n[0] in "fc"])
def test_nan_inf_and_out_of_range_floats_to_integers_match_numpy(device, src):
    """NaN, inf and out-of-range floats into integers: undefined in C; every device gives
    x86's answers as NumPy and torch do (0x80..0 for 32/64-bit targets, then its low bits;
    uint32 converts ``x - 2**31`` from 2**31 up, see ``kernels/ops.cast_expr``)."""
    bad = _compare(device, src, defined=False)
    assert not bad, "\n".join(bad[:8])


@pytest.mark.parametrize("src", ["float16", "float32", "float64"])
def test_undefined_float_to_integer_casts_are_torchs_wherever_the_element_is(src):
    """The cpu answers equal torch's for every target but uint32, where torch's and NumPy's
    own answers depend on the element's place in the array (vector loop or scalar tail):
    there every place gives the vector loop's answer."""
    torch = pytest.importorskip("torch")
    special = _special(np.dtype(src))
    rng = np.random.default_rng(3)
    for dst in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        for n in (1, 7, 8, 9, 33):
            vals = rng.choice(special, n)
            got = ot.tensor(vals).to(getattr(ot, dst)).numpy()
            if dst != "uint32":
                want = torch.from_numpy(vals).to(getattr(torch, dst)).numpy()
                assert np.array_equal(got, want), (src, dst, vals.tolist(), got.tolist())
            for k in range(n):  # one element alone: the same answer
                assert got[k] == ot.tensor(vals[k:k + 1]).to(getattr(ot, dst)).numpy()[0]


def test_float32_to_uint8_does_not_saturate(device):
    x = ot.tensor([178.7, 200.0, 255.0], device=device)
    assert x.to(ot.uint8).tolist() == [178, 200, 255]


class _quiet:
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *a):
        self._w.__exit__(*a)
