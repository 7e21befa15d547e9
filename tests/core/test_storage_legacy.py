"""Legacy storage API (torch's Tensor.is_set_to), compared with torch on every device."""
import torch

import omnitensor as ot


def test_is_set_to_matches_torch(device):
    t = torch.arange(12.0).reshape(3, 4)
    x = ot.arange(12.0, device=device).reshape(3, 4)
    cases = [lambda a: a, lambda a: a.view(3, 4), lambda a: a.view(12), lambda a: a.t(),
             lambda a: a[1:], lambda a: a.clone()]
    for f in cases:
        assert x.is_set_to(f(x)) == t.is_set_to(f(t))
    other = ot.arange(12.0, device=device).reshape(3, 4)
    assert not x.is_set_to(other)
