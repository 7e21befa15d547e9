"""Datasets, samplers, collation and the DataLoader (also as omnitensor.utils.data)."""
from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import omnitensor as ot
from omnitensor.data import (BatchSampler, ConcatDataset, DataLoader, Dataset,
                             IterableDataset, RandomSampler, Sampler, SequentialSampler, Subset,
                             TensorDataset, WeightedRandomSampler, default_collate,
                             random_split)


def _ds(device, n=10):
    x = ot.arange(n * 2, device=device).reshape(n, 2).float()
    y = ot.arange(n, device=device)
    return TensorDataset(x, y)


def _ys(loader):
    return [yb.tolist() for _, yb in loader]


def test_tensor_dataset(device):
    ds = _ds(device)
    assert len(ds) == 10
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3 and x.device == ot.device(device)
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(ot.ones(3), ot.ones(4))


def test_batches_in_order_and_drop_last(device):
    ds = _ds(device)
    dl = DataLoader(ds, batch_size=4)
    assert len(dl) == 3 and _ys(dl) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    xb, yb = next(iter(dl))
    assert isinstance(xb, ot.Tensor) and xb.shape == (4, 2) and xb.device == ot.device(device)
    dl = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(dl) == 2 and _ys(dl) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_shuffle_is_seeded_and_changes_per_epoch(device):
    ds = _ds(device)
    a = DataLoader(ds, batch_size=3, shuffle=True, generator=ot.Generator().manual_seed(7))
    b = DataLoader(ds, batch_size=3, shuffle=True, generator=ot.Generator().manual_seed(7))
    e1, e2 = _ys(a), _ys(a)
    assert e1 == _ys(b) and e2 == _ys(b)                   # same seed: same epochs
    assert e1 != e2                                         # a new order every epoch
    assert sorted(sum(e1, [])) == list(range(10))          # a permutation
    ot.manual_seed(3)
    c1 = _ys(DataLoader(ds, batch_size=3, shuffle=True))
    ot.manual_seed(3)
    assert _ys(DataLoader(ds, batch_size=3, shuffle=True)) == c1   # the global seed works
    for xb, yb in a:                                        # rows stay paired
        assert (xb[:, 0] == (yb * 2).float()).all()


def test_epoch_gather_matches_per_batch(device):
    # the whole-epoch gather (small TensorDatasets) gives the same batches as per-batch
    # fetching (forced here with a custom collate_fn)
    ds = _ds(device, 13)
    g1, g2 = ot.Generator().manual_seed(1), ot.Generator().manual_seed(1)
    fast = DataLoader(ds, batch_size=5, shuffle=True, generator=g1)
    slow = DataLoader(ds, batch_size=5, shuffle=True, generator=g2, collate_fn=default_collate)
    for (xa, ya), (xb, yb) in zip(fast, slow):
        assert xa.tolist() == xb.tolist() and ya.tolist() == yb.tolist()
    sub = Subset(ds, [12, 0, 5, 7])
    assert _ys(DataLoader(sub, batch_size=3)) == [[12, 0, 5], [7]]


class Dicts(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": np.full(2, i, dtype=np.float32), "label": i, "w": 0.5 * i,
                "name": f"s{i}", "pair": (i, ot.tensor([float(i)]))}


def test_collate_dicts_tuples_numbers_strings():
    batch = next(iter(DataLoader(Dicts(), batch_size=3)))
    assert batch["x"].shape == (3, 2) and batch["x"].dtype is ot.float32
    assert batch["label"].tolist() == [0, 1, 2] and batch["label"].dtype is ot.int64
    assert batch["w"].dtype is ot.float64 and batch["name"] == ["s0", "s1", "s2"]
    ints, tens = batch["pair"]                             # tuples collate per position
    assert ints.tolist() == [0, 1, 2] and tens.shape == (3, 1)
    P = namedtuple("P", "a b")
    out = default_collate([P(1, 2.0), P(3, 4.0)])
    assert isinstance(out, P) and out.a.tolist() == [1, 3]
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])
    single = list(DataLoader(Dicts(), batch_size=None))
    assert len(single) == 5 and single[2]["label"] == 2


def test_custom_and_batch_samplers(device):
    ds = _ds(device)

    class EveryOther(Sampler):                 # e.g. a rank's share in data parallelism
        def __init__(self, n, offset):
            self.n, self.offset, self.epoch = n, offset, 0

        def __iter__(self):
            return iter(range(self.offset, self.n, 2))

        def __len__(self):
            return (self.n - self.offset + 1) // 2

        def set_epoch(self, epoch):
            self.epoch = epoch
    dl = DataLoader(ds, batch_size=2, sampler=EveryOther(10, 1))
    assert _ys(dl) == [[1, 3], [5, 7], [9]] and len(dl) == 3
    bs = BatchSampler(SequentialSampler(ds), 4, drop_last=False)
    assert list(bs) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert _ys(DataLoader(ds, batch_sampler=bs)) == list(bs)
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, sampler=EveryOther(10, 0), shuffle=True)
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, batch_sampler=bs, batch_size=4)


def test_distributed_sampler_plugs_in(device):
    from omnitensor.data import DistributedSampler       # lazily exported
    ds = _ds(device)
    seen = []
    for rank in range(2):
        s = DistributedSampler(ds, num_replicas=2, rank=rank, shuffle=True, seed=3)
        s.set_epoch(1)
        seen += sum(_ys(DataLoader(ds, batch_size=2, sampler=s)), [])
    assert sorted(seen) == list(range(10))


def test_random_samplers():
    g = ot.Generator().manual_seed(0)
    r = list(RandomSampler(range(6), generator=g))
    assert sorted(r) == list(range(6))
    rr = list(RandomSampler(range(6), replacement=True, num_samples=20, generator=g))
    assert len(rr) == 20 and all(0 <= i < 6 for i in rr)
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0], 10, generator=g))
    assert w == [1] * 10


def test_random_split():
    parts = random_split(range(10), [3, 7], generator=ot.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    again = random_split(range(10), [3, 7], generator=ot.Generator().manual_seed(0))
    assert list(again[0]) == list(parts[0])
    frac = random_split(range(11), [0.5, 0.5], generator=ot.Generator().manual_seed(0))
    assert [len(p) for p in frac] == [6, 5]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(10), [3, 3])


def test_iterable_and_concat_datasets():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5],
                                                                         [6]]
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3, drop_last=True)] == \
        [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="shuffle"):
        DataLoader(Stream(), shuffle=True)
    cat = ConcatDataset([TensorDataset(ot.arange(3)), TensorDataset(ot.arange(10, 12))])
    assert len(cat) == 5 and cat[3][0].item() == 10 and cat[-1][0].item() == 11


def test_num_workers_and_torch_alias():
    # worker processes give the same batches as the main process (more in
    # tests/data/test_dataloader_workers.py)
    assert [b.tolist() for b in DataLoader(range(7), batch_size=2, num_workers=2)] == \
        [b.tolist() for b in DataLoader(range(7), batch_size=2)]
    from omnitensor.utils.data import DataLoader as D2, TensorDataset as T2
    assert D2 is DataLoader and T2 is TensorDataset
    import omnitensor.utils.data as ud
    assert ud.DistributedSampler is ot.data.DistributedSampler


Pair = namedtuple("Pair", "a b")  # module level: workers pickle it


def test_pin_memory_keeps_the_batch_structure():
    """pin_memory=True walks the batch as collate builds it (torch keeps Mapping and
    namedtuple types) and makes host tensors contiguous, values unchanged."""
    def collate(items):
        x = ot.tensor([[float(i), float(i) + 0.5] for i in items]).T  # not contiguous
        return OrderedDict(x=x, rest=[Pair(x, "tag")])
    for nw in (0, 2):
        (batch,) = list(DataLoader(list(range(3)), batch_size=3, collate_fn=collate,
                                   pin_memory=True, num_workers=nw))
        assert type(batch) is OrderedDict and list(batch) == ["x", "rest"]
        pair = batch["rest"][0]
        assert type(pair) is Pair and pair.b == "tag"
        for t in (batch["x"], pair.a):
            assert t.is_contiguous()
            assert t.tolist() == [[0.0, 1.0, 2.0], [0.5, 1.5, 2.5]]
