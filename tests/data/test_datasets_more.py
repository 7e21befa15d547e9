"""ChainDataset, StackDataset, _DatasetKind's fetchers and the DataPipe classes and
decorators, each run side by side with torch's and compared (tensor samples on every
device)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import omnitensor as ot
import omnitensor.utils.data as od

torch = pytest.importorskip("torch")
import torch.utils.data as td  # noqa: E402


def _same(a: Any, b: Any) -> None:
    """Equal structure and values (omnitensor vs torch tensors compared as arrays)."""
    if isinstance(b, torch.Tensor):
        assert isinstance(a, ot.Tensor), type(a)
        np.testing.assert_array_equal(a.cpu().numpy(), b.numpy())
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    elif isinstance(b, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(b, dict):
        assert a.keys() == b.keys()
        for k in b:
            _same(a[k], b[k])
    else:
        assert a == b, (a, b)


def _iterable(lib: Any, n: int, start: int) -> Any:
    class Stream(lib.IterableDataset):
        def __iter__(self):
            return iter(range(start, start + n))

        def __len__(self):
            return n
    return Stream()


def test_chain_dataset() -> None:
    for lib in (od, td):
        chain = lib.ChainDataset([_iterable(lib, 3, 0), _iterable(lib, 2, 10)])
        assert list(chain) == [0, 1, 2, 10, 11] and len(chain) == 5
        bad = lib.ChainDataset([_iterable(lib, 1, 0), [1, 2]])
        with pytest.raises(AssertionError, match="only supports IterableDataset"):
            list(bad)
        with pytest.raises(AssertionError, match="only supports IterableDataset"):
            len(bad)
    loader = od.DataLoader(od.ChainDataset([_iterable(od, 3, 0), _iterable(od, 2, 10)]),
                           batch_size=2)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 10], [11]]


def test_stack_dataset(device) -> None:
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = np.arange(4, dtype=np.int64)
    ours_t = od.TensorDataset(ot.tensor(x, device=device))
    theirs_t = td.TensorDataset(torch.tensor(x))
    for args, kwargs in [((0,), {}), ((), {"k": 0})]:
        o = od.StackDataset(*[ours_t for _ in args], **{k: ours_t for k in kwargs},
                            ) if args else od.StackDataset(a=ours_t, b=list(y))
        t = td.StackDataset(*[theirs_t for _ in args], **{k: theirs_t for k in kwargs},
                            ) if args else td.StackDataset(a=theirs_t, b=list(y))
        assert len(o) == len(t) == 4
        for i in range(4):
            _same(o[i], t[i])
        _same(o.__getitems__([2, 0]), t.__getitems__([2, 0]))
    for lib in (od, td):
        with pytest.raises(ValueError, match="Size mismatch"):
            lib.StackDataset([1, 2], [1])
        with pytest.raises(ValueError, match="At least one dataset"):
            lib.StackDataset()
        with pytest.raises(ValueError, match="both types are given"):
            lib.StackDataset([1], a=[1])
    batches = list(od.DataLoader(od.StackDataset(ours_t, list(y)), batch_size=3))
    assert batches[0][1].tolist() == [0, 1, 2]
    assert batches[0][0][0].device == ot.device(device)


def test_dataset_kind_fetchers(device) -> None:
    data = [ot.tensor([float(i)], device=device) for i in range(5)]
    tdata = [torch.tensor([float(i)]) for i in range(5)]
    for kind in (0, 1):
        assert od._DatasetKind.Map == td._DatasetKind.Map == 0
        ds = data if kind == 0 else od.ChainDataset([_wrap(od, data)])
        tds = tdata if kind == 0 else td.ChainDataset([_wrap(td, tdata)])
        o = od._DatasetKind.create_fetcher(kind, ds, True, od.default_collate, True)
        t = td._DatasetKind.create_fetcher(kind, tds, True, td.default_collate, True)
        _same(o.fetch([0, 1]), t.fetch([0, 1]))
        _same(o.fetch([2, 3]), t.fetch([2, 3]))
        if kind == 1:  # one sample left and drop_last: the stream ends for both
            for f in (o, t):
                with pytest.raises(StopIteration):
                    f.fetch([4, 5])
        o = od._DatasetKind.create_fetcher(kind, ds, False, od.default_convert, False)
        t = td._DatasetKind.create_fetcher(kind, tds, False, td.default_convert, False)
        _same(o.fetch(0), t.fetch(0))


def _wrap(lib: Any, items: list) -> Any:
    class Stream(lib.IterableDataset):
        def __iter__(self):
            return iter(items)
    return Stream()


def _pipes(lib: Any) -> tuple:
    class Numbers(lib.IterDataPipe[int]):
        def __init__(self, n: int, bad: bool = False) -> None:
            self.n, self.bad = n, bad

        @lib.runtime_validation
        def __iter__(self):
            yield from range(self.n)
            if self.bad:
                yield "not an int"

    return Numbers


def test_datapipes_functional_and_chunks() -> None:
    results = []
    for lib, name in ((od, "ot_times"), (td, "td_times")):
        Numbers = _pipes(lib)

        @lib.functional_datapipe(name)
        class Times(lib.IterDataPipe):
            def __init__(self, source, k):
                self.source, self.k = source, k

            def __iter__(self):
                for x in self.source:
                    yield x * self.k

        @lib.functional_datapipe(name + "_map")
        class Double(lib.MapDataPipe):
            def __init__(self, source):
                self.source = source

            def __getitem__(self, i):
                return 2 * self.source[i]

        class Items(lib.MapDataPipe):
            def __getitem__(self, i):
                return i + 1

        with lib.runtime_validation_disabled():  # torch 2.13 cannot validate: see below
            pipe = list(getattr(Numbers(4), name)(3))
        mapped = getattr(Items(), name + "_map")()
        chunk = lib.DataChunk([1, 2, 3])
        results.append((pipe, isinstance(Numbers(1), lib.IterableDataset), mapped[2],
                        chunk, chunk.as_str("  "), list(chunk.raw_iterator()),
                        issubclass(lib.DFIterDataPipe, lib.IterDataPipe)))
        with pytest.raises(AttributeError):
            _ = Numbers(1).no_such_function
        assert lib.functional_datapipe("x_" + name)(int) is int  # not a pipe: ignored
        with pytest.raises(AttributeError):
            getattr(Numbers(1), "x_" + name)
        with pytest.raises(Exception, match="already taken"):
            lib.functional_datapipe(name)(Times)
    assert results[0] == results[1]


def test_datapipe_type_validation() -> None:
    """Against the decorators' documented definitions: torch 2.13's own element-type
    machinery is switched off (its ``_DataPipeMeta.__new__`` returns before setting
    ``type``), so there ``runtime_validation`` raises AttributeError and
    ``argument_validation`` checks nothing."""
    for lib in (od,):
        Numbers = _pipes(lib)
        assert list(Numbers(2)) == [0, 1]
        with pytest.raises(RuntimeError, match="Expected an instance as subtype"):
            list(Numbers(1, bad=True))
        with lib.runtime_validation_disabled():
            assert list(Numbers(1, bad=True)) == [0, "not an int"]
        with pytest.raises(TypeError, match="Can not decorate function"):
            lib.runtime_validation(lambda self: None)

        class Floats(lib.IterDataPipe[float]):
            def __iter__(self):
                yield 1.0

        @lib.argument_validation
        def takes_ints(dp: od.IterDataPipe[int]) -> int:
            return 1

        assert takes_ints(Numbers(1)) == 1
        with pytest.raises(TypeError, match="as a IterDataPipe"):
            takes_ints([1])
        with pytest.raises(TypeError, match="as a subtype of"):
            takes_ints(Floats())


def test_datapipe_determinism() -> None:
    for lib in (od, td):

        @lib.non_deterministic
        class Shuffled(lib.IterDataPipe):
            def __iter__(self):
                yield 0

        class Maybe(lib.IterDataPipe):
            def __init__(self, random: bool) -> None:
                self.random = random

            def __iter__(self):
                yield 0

        maybe = lib.non_deterministic(lambda random: random)(Maybe)
        assert list(Shuffled()) == [0] and list(maybe(True)) == [0]
        with lib.guaranteed_datapipes_determinism():
            with pytest.raises(TypeError, match="is non-deterministic"):
                Shuffled()
            with pytest.raises(TypeError, match="non-deterministic with the inputs"):
                maybe(True)
            assert list(maybe(False)) == [0]
        Shuffled()  # allowed again after the block
        with pytest.raises(TypeError, match="Only `IterDataPipe` can be decorated"):
            lib.non_deterministic(int)
