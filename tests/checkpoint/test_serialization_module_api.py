"""torch.serialization's other public names, as code imports them under as_torch."""
from __future__ import annotations

import mmap

import pytest

import omnitensor as ot
from omnitensor import serialization as S

torch = pytest.importorskip("torch")


def test_public_names_of_torch_serialization_exist():
    import torch.serialization as ts
    missing = [n for n in ("MAP_LOCATION", "FILE_LIKE", "DEFAULT_PROTOCOL", "LoadEndianness",
                           "SourceChangeWarning", "get_default_load_endianness",
                           "set_default_mmap_options", "get_crc32_options", "register_package",
                           "location_tag", "default_restore_location",
                           "normalize_storage_type", "check_module_version_greater_or_equal",
                           "validate_cuda_device", "skip_data", "STORAGE_KEY_SEPARATOR")
               if hasattr(ts, n) and not hasattr(S, n)]
    assert missing == []
    assert S.STORAGE_KEY_SEPARATOR == ts.STORAGE_KEY_SEPARATOR
    assert [e.name for e in S.LoadEndianness] == [e.name for e in ts.LoadEndianness]


def test_options_round_trip_and_reject_bad_values():
    assert S.get_default_mmap_options() == mmap.MAP_PRIVATE
    S.set_default_mmap_options(mmap.MAP_SHARED)
    try:
        assert S.get_default_mmap_options() == mmap.MAP_SHARED
    finally:
        S.set_default_mmap_options(mmap.MAP_PRIVATE)
    with pytest.raises(ValueError, match="MAP_PRIVATE"):
        S.set_default_mmap_options(12345)
    S.set_default_load_endianness(S.LoadEndianness.LITTLE)
    assert S.get_default_load_endianness() is S.LoadEndianness.LITTLE
    S.set_default_load_endianness(None)
    with pytest.raises(NotImplementedError, match="little-endian"):
        S.set_default_load_endianness(S.LoadEndianness.BIG)
    with pytest.raises(TypeError):
        S.set_default_load_endianness("big")


def test_version_check_and_device_index():
    assert S.check_module_version_greater_or_equal(torch, (2, 0))
    assert not S.check_module_version_greater_or_equal(torch, (99, 0))
    assert S.validate_cuda_device("cuda:1") == 1
    assert S.location_tag(ot.zeros(2)) == "cpu"


def test_skip_data_refuses_clearly():
    with pytest.raises(NotImplementedError, match="skip_data"):
        with S.skip_data():
            pass
