"""``torch.nn.utils.prune`` (omnitensor/nn/utils/prune.py) against torch's: the same
weights give the same masks, pruned values, state-dict keys and forward results, on every
device. The random methods draw from different generators, so only their counts and
structure are compared."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor.nn.utils import prune

torch = pytest.importorskip("torch")
tprune = pytest.importorskip("torch.nn.utils.prune")

W = np.random.default_rng(3).standard_normal((6, 4)).astype(np.float32)
X = np.random.default_rng(4).standard_normal((2, 4)).astype(np.float32)


def _pair(device):
    ours, theirs = ot.nn.Linear(4, 6), torch.nn.Linear(4, 6)
    with ot.no_grad():
        ours.weight.copy_(ot.tensor(W))
        ours.bias.zero_()
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(W))
        theirs.bias.zero_()
    return ours.to(device), theirs


def _same(ours, theirs):
    np.testing.assert_allclose(ours.detach().cpu().numpy(), theirs.detach().numpy(),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("how", [
    lambda p, m: p.l1_unstructured(m, "weight", amount=0.3),
    lambda p, m: p.l1_unstructured(m, "weight", amount=5),
    lambda p, m: p.ln_structured(m, "weight", amount=0.5, n=2, dim=0),
    lambda p, m: p.ln_structured(m, "weight", amount=1, n=1, dim=1),
    lambda p, m: p.identity(m, "weight"),
])
def test_deterministic_pruning_matches_torch(device, how):
    ours, theirs = _pair(device)
    how(prune, ours)
    how(tprune, theirs)
    _same(ours.weight_mask, theirs.weight_mask)
    _same(ours.weight, theirs.weight)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    _same(ours(ot.tensor(X, device=device)), theirs(torch.tensor(X)))
    assert prune.is_pruned(ours) and tprune.is_pruned(theirs)


def test_successive_pruning_and_remove_match_torch(device):
    ours, theirs = _pair(device)
    for p, m in ((prune, ours), (tprune, theirs)):
        p.l1_unstructured(m, "weight", amount=0.25)
        p.ln_structured(m, "weight", amount=0.5, n=2, dim=0)
        p.l1_unstructured(m, "weight", amount=2)
    _same(ours.weight_mask, theirs.weight_mask)
    hook = [h for h in ours._forward_pre_hooks.values()][0]
    assert isinstance(hook, prune.PruningContainer) and len(hook) == 3
    with ot.no_grad():  # the hook recomputes weight from weight_orig on each forward
        ours.weight_orig.mul_(2)
    with torch.no_grad():
        theirs.weight_orig.mul_(2)
    _same(ours(ot.tensor(X, device=device)), theirs(torch.tensor(X)))
    prune.remove(ours, "weight")
    tprune.remove(theirs, "weight")
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict()) == ["bias", "weight"]
    assert isinstance(ours.weight, ot.nn.Parameter)
    _same(ours.weight, theirs.weight)
    assert not prune.is_pruned(ours)
    with pytest.raises(ValueError, match="has to be pruned"):
        prune.remove(ours, "weight")


def test_global_and_custom_masks_match_torch(device):
    (o1, t1), (o2, t2) = _pair(device), _pair(device)
    with ot.no_grad():
        o2.weight.mul_(0.5)
    with torch.no_grad():
        t2.weight.mul_(0.5)
    prune.global_unstructured([(o1, "weight"), (o2, "weight")],
                              pruning_method=prune.L1Unstructured, amount=0.4)
    tprune.global_unstructured([(t1, "weight"), (t2, "weight")],
                               pruning_method=tprune.L1Unstructured, amount=0.4)
    _same(o1.weight_mask, t1.weight_mask)
    _same(o2.weight_mask, t2.weight_mask)
    mask = (np.arange(6) % 2).astype(np.float32)
    prune.custom_from_mask(o1, "bias", ot.tensor(mask, device=device))
    tprune.custom_from_mask(t1, "bias", torch.tensor(mask))
    _same(o1.bias, t1.bias)


def test_random_pruning_counts(device):
    ours, _ = _pair(device)
    prune.random_unstructured(ours, "weight", amount=7)
    assert int((ours.weight_mask == 0).sum()) == 7
    other, _ = _pair(device)
    prune.random_structured(other, "weight", amount=2, dim=0)
    rows = other.weight_mask.cpu().numpy().sum(axis=1)
    assert sorted(rows.tolist()) == [0.0, 0.0, 4.0, 4.0, 4.0, 4.0]


@pytest.mark.parametrize("amount", [-1, 1.5, "a"])
def test_bad_amounts_raise_as_torch(amount):
    for p in (prune, tprune):
        with pytest.raises((ValueError, TypeError)) as e:
            p.L1Unstructured(amount)
        assert type(e.value).__name__ in ("ValueError", "TypeError")
    with pytest.raises(ValueError):
        prune.l1_unstructured(ot.nn.Linear(2, 2), "weight", amount=10)
