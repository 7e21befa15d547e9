"""``DataLoader(num_workers>0)``: real worker processes, as a torch training script uses
them. Batches from workers are cpu tensors moved to the device in the main process; the
same batches as ``num_workers=0``; torch's seeding scheme; errors re-raised with the
worker's traceback; no process left behind (end of epoch, early break, errors,
persistent loaders); IterableDataset sharding with ``get_worker_info``; the lazy
``RandomSampler``; torch's ``utils.data`` import paths."""
import gc
import os
import random
import time
import tracemalloc

import numpy as np
import pytest

import omnitensor as ot
from omnitensor.utils.data import (DataLoader, Dataset, IterableDataset, RandomSampler,
                                   TensorDataset, get_worker_info)


def _gone(pids):
    """Whether none of ``pids`` exists any more (a zombie still counts as existing)."""
    for _ in range(50):
        alive = []
        for pid in pids:
            try:
                os.kill(pid, 0)
                alive.append(pid)
            except ProcessLookupError:
                pass
        if not alive:
            return True
        time.sleep(0.1)
    return False


class Images(Dataset):
    """A map-style dataset in the style of a vision dataset: NumPy image, int label, and
    the id of the process that loaded it."""

    def __init__(self, n=37):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = np.arange(12, dtype=np.float32).reshape(3, 4) + i
        return {"image": img, "label": i % 5, "pid": os.getpid()}


class Augmented(Dataset):
    """Random augmentation from all three RNGs a torch dataset may use."""

    def __len__(self):
        return 24

    def __getitem__(self, i):
        info = get_worker_info()
        return (i, float(ot.rand(()).item()), float(np.random.rand()), random.random(),
                -1 if info is None else info.id, -1 if info is None else info.seed)


def test_workers_give_the_batches_of_the_main_process_on_device(device):
    """A training-style loop: shuffled batches from 2 workers, moved to ``device`` in the
    main process and used there, equal those of num_workers=0."""
    x = ot.tensor(np.random.default_rng(0).standard_normal((50, 3)).astype(np.float32))
    y = ot.arange(50)
    ds = TensorDataset(x, y)
    results = {}
    for nw in (0, 2):
        loader = DataLoader(ds, batch_size=8, shuffle=True, num_workers=nw,
                            generator=ot.Generator().manual_seed(7))
        out = []
        for xb, yb in loader:
            assert xb.device.type == "cpu" and yb.dtype == ot.int64
            xb, yb = xb.to(device), yb.to(device)
            out.append(((xb * 2).sum(1).cpu().numpy(), yb.cpu().numpy()))
        results[nw] = out
    assert len(results[0]) == len(results[2]) == 7
    for (a, ia), (b, ib) in zip(results[0], results[2]):
        np.testing.assert_array_equal(ia, ib)
        np.testing.assert_allclose(a, b)
    # dict samples collated in the worker (NumPy -> tensors, ints -> int64)
    loader = DataLoader(Images(), batch_size=5, num_workers=2)
    batches = list(loader)
    assert [b["image"].shape for b in batches][:2] == [(5, 3, 4), (5, 3, 4)]
    assert batches[-1]["image"].shape == (2, 3, 4)
    labels = np.concatenate([b["label"].numpy() for b in batches])
    np.testing.assert_array_equal(labels, np.arange(37) % 5)
    pids = {int(p) for b in batches for p in b["pid"].tolist()}
    assert len(pids) == 2 and os.getpid() not in pids
    img = batches[1]["image"].to(device)
    np.testing.assert_allclose(img.cpu().numpy()[0], np.arange(12).reshape(3, 4) + 5)
    assert _gone(pids)


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_matches_torch_order_and_values():
    torch = pytest.importorskip("torch")
    t = [b["image"].numpy() for b in torch.utils.data.DataLoader(Images(), batch_size=4,
                                                                 num_workers=3)]
    o = [b["image"].numpy() for b in DataLoader(Images(), batch_size=4, num_workers=3)]
    assert len(t) == len(o)
    for a, b in zip(t, o):
        np.testing.assert_array_equal(a, b)


def test_seeded_determinism_across_runs_and_worker_counts():
    """Under ``manual_seed`` the shuffled order is the same for every num_workers and
    the augmentations are the same from run to run; worker ``i`` is seeded with
    ``base_seed + i`` for omnitensor, NumPy and Python (so workers differ)."""
    def epoch(nw, seed):
        ot.manual_seed(seed)
        loader = DataLoader(Augmented(), batch_size=4, shuffle=True, num_workers=nw)
        return [[c.tolist() for c in b] for b in loader]
    runs = {nw: epoch(nw, 123) for nw in (0, 1, 2, 3)}
    orders = {nw: [b[0] for b in r] for nw, r in runs.items()}
    assert orders[0] == orders[1] == orders[2] == orders[3]
    assert sorted(sum(orders[0], [])) == list(range(24))
    assert epoch(2, 123) == runs[2] and epoch(3, 123) == runs[3]
    assert epoch(2, 124) != runs[2]
    for nw in (2, 3):
        ids = {i for b in runs[nw] for i in b[4]}
        assert ids == set(range(nw))
        seeds = {(i, s) for b in runs[nw] for i, s in zip(b[4], b[5])}
        base = {s - i for i, s in seeds}
        assert len(base) == 1  # one base_seed per epoch, seed = base_seed + worker id
        # the three generators differ between workers
        for col in (1, 2, 3):
            first = {b[4][0]: b[col][0] for b in runs[nw]}
            assert len(set(first.values())) == nw
    assert set(runs[0][0][4]) == {-1} and get_worker_info() is None


def test_worker_init_fn_and_worker_info():
    seen = []

    class WhoAmI(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            info = get_worker_info()
            return np.array([info.id, info.num_workers, os.environ["OT_TEST_WORKER"] ==
                             str(info.id), info.dataset is self, ot.get_num_threads()])

    def init(worker_id):
        os.environ["OT_TEST_WORKER"] = str(worker_id)
        seen.append(worker_id)  # in the worker's memory only

    rows = np.concatenate([b.numpy() for b in DataLoader(
        WhoAmI(), batch_size=2, num_workers=2, worker_init_fn=init)])
    np.testing.assert_array_equal(rows[:, 1], 2)
    assert rows[:, 2].all() and rows[:, 3].all()
    np.testing.assert_array_equal(rows[:, 4], 1)  # one intra-op thread per worker
    np.testing.assert_array_equal(rows[:, 0], [0, 0, 1, 1, 0, 0, 1, 1])  # round robin
    assert seen == [] and "OT_TEST_WORKER" not in os.environ


class Faulty(Dataset):
    def __init__(self, bad=5, kind=ValueError):
        self.bad, self.kind = bad, kind

    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == self.bad:
            raise self.kind(f"sample {i} is corrupt")
        return np.array([i, os.getpid()])


@pytest.mark.parametrize("kind", [ValueError, KeyError, OSError])
def test_worker_error_is_reraised_with_its_traceback(kind):
    loader = DataLoader(Faulty(kind=kind), batch_size=2, num_workers=2)
    got = []
    with pytest.raises(kind) as err:
        for b in loader:
            got.append(b)
    msg = str(err.value)
    assert "sample 5 is corrupt" in msg and "DataLoader worker process 0" in msg
    assert "Traceback" in msg and "__getitem__" in msg
    assert len(got) == 2  # the batches before the bad one arrived in order
    pids = {int(p) for b in got for p in b[:, 1].tolist()}
    del err, loader
    gc.collect()
    assert _gone(pids)


def test_worker_init_fn_error_and_dead_worker_and_timeout():
    def bad_init(worker_id):
        raise RuntimeError(f"cannot open the shard of worker {worker_id}")
    with pytest.raises(RuntimeError, match="cannot open the shard of worker 0"):
        list(DataLoader(Faulty(bad=-1), batch_size=2, num_workers=2, worker_init_fn=bad_init))

    class Crashes(Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            if i == 2:
                os._exit(3)  # a crash in native code, as far as the loader can tell
            return i
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        list(DataLoader(Crashes(), batch_size=1, num_workers=2))

    class Slow(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            time.sleep(5)
            return i
    t0 = time.perf_counter()
    with pytest.raises(RuntimeError, match="timed out after 0.5 seconds"):
        next(iter(DataLoader(Slow(), num_workers=1, timeout=0.5)))
    assert time.perf_counter() - t0 < 4


def test_early_break_leaves_no_process():
    loader = DataLoader(Faulty(bad=-1), batch_size=1, num_workers=2, prefetch_factor=3)
    pids = set()
    for i, b in enumerate(loader):
        pids.add(int(b[0, 1]))
        if i == 3:
            break
    del b
    assert len(pids) == 2
    assert _gone(pids)
    # a half-consumed iterator dropped explicitly
    it = iter(loader)
    pids = {int(next(it)[0, 1]), int(next(it)[0, 1])}
    del it
    assert _gone(pids)
    import multiprocessing as mp
    assert mp.active_children() == []


def test_persistent_workers_across_epochs():
    loader = DataLoader(Images(10), batch_size=3, num_workers=2, persistent_workers=True)
    epochs = []
    for _ in range(3):
        batches = list(loader)
        epochs.append(([b["label"].tolist() for b in batches],
                       {int(p) for b in batches for p in b["pid"].tolist()}))
    assert epochs[0] == epochs[1] == epochs[2]
    assert epochs[0][0] == [[0, 1, 2], [3, 4, 0], [1, 2, 3], [4]]
    pids = epochs[0][1]
    # an epoch left early, then a full one: the same workers, a complete epoch
    first = next(iter(loader))
    again = list(loader)
    assert [b["label"].tolist() for b in again] == epochs[0][0]
    assert {int(p) for b in again for p in b["pid"].tolist()} == pids
    del loader, first, again
    gc.collect()
    assert _gone(pids)


def _l(b):
    return b.tolist() if hasattr(b, "tolist") else b


def _shards(base, info_fn):
    class Shards(base):
        """Each worker takes its slice of ``range(start, end)`` (torch's documented
        recipe)."""

        def __init__(self, start, end):
            self.start, self.end = start, end

        def __iter__(self):
            return _shard(self.start, self.end, info_fn())
    return Shards


def _shard(start, end, info):
    if info is None:
        return iter(range(start, end))
    per = -(-(end - start) // info.num_workers)
    lo = start + info.id * per
    return iter(range(lo, min(lo + per, end)))


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
@pytest.mark.parametrize("nw,bs,drop_last", [(2, 4, False), (3, 4, False), (3, 3, True),
                                             (4, None, False)])
def test_iterable_dataset_sharding_matches_torch(nw, bs, drop_last):
    torch = pytest.importorskip("torch")
    TShards = _shards(torch.utils.data.IterableDataset, torch.utils.data.get_worker_info)
    OShards = _shards(IterableDataset, get_worker_info)
    t_loader = torch.utils.data.DataLoader(TShards(3, 23), batch_size=bs, num_workers=nw,
                                           drop_last=drop_last)
    o_loader = DataLoader(OShards(3, 23), batch_size=bs, num_workers=nw,
                          drop_last=drop_last)
    t = [_l(b) for b in t_loader]
    o = [_l(b) for b in o_loader]
    assert o == t
    # persistent: every epoch restarts every worker's stream
    p_loader = DataLoader(OShards(3, 23), batch_size=bs, num_workers=nw,
                          drop_last=drop_last, persistent_workers=True)
    assert [_l(b) for b in p_loader] == t
    assert [_l(b) for b in p_loader] == t


def test_in_order_false_prefetch_and_pin_memory(device):
    ds = TensorDataset(ot.arange(40.0).reshape(20, 2))
    ref = [b[0].numpy() for b in DataLoader(ds, batch_size=3)]
    out = [b[0].numpy() for b in DataLoader(ds, batch_size=3, num_workers=2, in_order=False,
                                            prefetch_factor=1)]
    assert sorted(map(tuple, np.concatenate(out).tolist())) == \
        sorted(map(tuple, np.concatenate(ref).tolist()))
    for nw in (0, 2):
        pinned = list(DataLoader(ds, batch_size=3, num_workers=nw, pin_memory=True,
                                 pin_memory_device=device))
        for a, b in zip(pinned, ref):
            assert a[0].is_contiguous() and a[0].device.type == "cpu"
            np.testing.assert_array_equal(a[0].to(device).cpu().numpy(), b)


def test_bad_options(device):
    ds = TensorDataset(ot.arange(4.0))
    with pytest.raises(ValueError, match="prefetch_factor"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="prefetch_factor"):
        DataLoader(ds, num_workers=1, prefetch_factor=0)
    with pytest.raises(ValueError, match="persistent_workers"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="timeout"):
        DataLoader(ds, num_workers=1, timeout=-1)
    with pytest.raises(ValueError, match="start method"):
        iter(DataLoader(ds, num_workers=1, multiprocessing_context="teleport"))
    with pytest.raises(ot.errors.DeviceError):
        DataLoader(ds, pin_memory=True, pin_memory_device="nosuchdevice:7")
    if ot.device(device).type != "cpu":
        on_dev = TensorDataset(ot.arange(4.0, device=device))
        with pytest.raises(ValueError, match=f"tensor on {device}.*move each batch"):
            DataLoader(on_dev, num_workers=2)
        assert len(list(DataLoader(on_dev, batch_size=2))) == 2  # fine in the main process

        class Custom(Dataset):  # a device tensor held in an attribute
            def __init__(self):
                self.samples = {"x": [ot.ones(3, device=device)]}

            def __len__(self):
                return 1

            def __getitem__(self, i):
                return self.samples["x"][i]
        with pytest.raises(ValueError, match=f"tensor on {device}"):
            DataLoader(Custom(), num_workers=1)


def _peak_mib(fn) -> float:
    """Peak memory (MiB) this process allocates while running ``fn`` (tracemalloc sees
    Python's and NumPy's allocations, so omnitensor's cpu tensors too)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2 ** 20
    finally:
        tracemalloc.stop()


def test_random_sampler_with_replacement_is_lazy():
    """torch scripts use RandomSampler(replacement=True, num_samples=int(1e10)) as an
    endless stream: creating and starting it must not allocate the indices (80 GB; a
    memory bound, not a time bound, which a loaded machine could miss)."""
    ds = TensorDataset(ot.arange(100.0))
    RandomSampler(ds, replacement=True, num_samples=10).__iter__().__next__()  # warm up
    first: list = []

    def draw() -> None:
        sampler = RandomSampler(ds, replacement=True, num_samples=10 ** 10,
                                generator=ot.Generator().manual_seed(0))
        assert len(sampler) == 10 ** 10
        it = iter(sampler)
        first.extend(next(it) for _ in range(1000))
    assert _peak_mib(draw) < 64
    assert all(0 <= i < 100 for i in first) and len(set(first)) > 50
    again = iter(RandomSampler(ds, replacement=True, num_samples=10 ** 10,
                               generator=ot.Generator().manual_seed(0)))
    assert [next(again) for _ in range(1000)] == first
    # through a DataLoader (as the scripts do), with and without workers: the main
    # process draws the indices
    for nw in (0, 2):
        def load(nw: int = nw) -> None:
            loader = DataLoader(ds, batch_size=10, num_workers=nw,
                                sampler=RandomSampler(ds, replacement=True,
                                                      num_samples=10 ** 10))
            assert len(loader) == 10 ** 9
            for step, (xb,) in enumerate(loader):
                assert xb.shape == (10,)
                if step == 99:
                    break
        assert _peak_mib(load) < 64, f"num_workers={nw}"


def test_utils_data_import_paths():
    import omnitensor.data as data
    import omnitensor.utils.data
    import omnitensor.utils.data.dataloader
    import omnitensor.utils.data.dataset
    import omnitensor.utils.data.distributed
    import omnitensor.utils.data.sampler
    from omnitensor.utils.data.dataloader import DataLoader as D, default_collate
    from omnitensor.utils.data.dataset import Dataset as DS, TensorDataset as TD, random_split
    from omnitensor.utils.data.distributed import DistributedSampler
    from omnitensor.utils.data.sampler import BatchSampler, RandomSampler as RS
    assert D is data.DataLoader and DS is data.Dataset and TD is data.TensorDataset
    assert RS is data.RandomSampler and BatchSampler is data.BatchSampler
    assert DistributedSampler is data.DistributedSampler and random_split is data.random_split
    assert default_collate is data.default_collate
    assert omnitensor.utils.data.dataloader.get_worker_info is get_worker_info
    assert omnitensor.utils.data.DataLoader is DataLoader
    from omnitensor.utils.data._utils.collate import default_collate as dc
    from omnitensor.utils.data._utils.worker import get_worker_info as gwi
    assert dc is data.default_collate and gwi is get_worker_info
    assert ot.utils.data.distributed.DistributedSampler is DistributedSampler  # attributes


def test_workers_stay_on_the_host_under_a_device_default(device):
    """With the main process defaulting to ``device`` (as under
    OMNITENSOR_DEVICE=opencl:0), tensors a dataset creates in a worker are cpu tensors:
    a forked worker never uses a device context. Moved in the loop, they equal the
    main process's batches."""
    class Made(Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            t = ot.tensor([float(i), 2.0 * i])
            return t, str(t.device)

    with ot.device(device):
        main = list(DataLoader(Made(), batch_size=3))
        workers = list(DataLoader(Made(), batch_size=3, num_workers=2))
    assert {d for b in workers for d in b[1]} == {"cpu"}
    assert {d for b in main for d in b[1]} == {str(ot.device(device))}
    for (a, _), (b, _) in zip(main, workers):
        assert b.device.type == "cpu"
        np.testing.assert_array_equal(b.to(device).cpu().numpy(), a.cpu().numpy())


_UNPICKLABLE = r'''
import omnitensor as ot
from omnitensor.utils.data import DataLoader

def main():
    class Local:  # a local class cannot be pickled
        pass
    loader = DataLoader(range(3), batch_size=3, collate_fn=lambda b: Local(), num_workers=2)
    try:
        next(iter(loader))
    except Exception as e:
        print("RAISED", type(e).__name__, "could not be pickled" in str(e))
main()
'''


def test_a_batch_that_cannot_be_pickled_raises_instead_of_hanging():
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-c", _UNPICKLABLE], capture_output=True, text=True,
                       timeout=120)
    assert "RAISED" in p.stdout and "True" in p.stdout, p.stdout + p.stderr[-2000:]
