"""torch.nn.modules.utils' helpers (imported by kornia, timm...) equal torch's."""
from __future__ import annotations

import collections

import pytest

from omnitensor.nn.modules import utils as ou

torch_utils = pytest.importorskip("torch.nn.modules.utils")


@pytest.mark.parametrize("name", ["_single", "_pair", "_triple", "_quadruple"])
@pytest.mark.parametrize("value", [3, (1, 2), [4, 5, 6]])
def test_ntuples(name, value):
    assert getattr(ou, name)(value) == getattr(torch_utils, name)(value)


def test_padding_and_default_helpers():
    assert ou._reverse_repeat_tuple((1, 2, 3), 2) == torch_utils._reverse_repeat_tuple((1, 2, 3), 2)
    assert ou._list_with_default([None, 3], [5, 6, 7]) == \
        torch_utils._list_with_default([None, 3], [5, 6, 7])
    with pytest.raises(ValueError, match="at least"):
        ou._list_with_default([1, 2, 3], [5, 6])


def test_consume_prefix_as_torch():
    results = []
    for mod in (ou, torch_utils):
        sd = collections.OrderedDict([("module.a", 1), ("module.b.c", 2), ("x", 3)])
        sd._metadata = collections.OrderedDict([("module", {}), ("module.b", {}), ("", {})])
        mod.consume_prefix_in_state_dict_if_present(sd, "module.")
        results.append((list(sd.items()), list(sd._metadata)))
    assert results[0] == results[1]
