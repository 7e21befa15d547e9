"""Shape and movement ops against NumPy."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor.testing import assert_close

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.fixture
def x(device):
    return ot.tensor(A, device=device)


def test_reshape_family(x):
    assert_close(x.reshape(6, 4), A.reshape(6, 4))
    assert_close(x.reshape(-1), A.reshape(-1))
    assert_close(ot.reshape(x, (4, -1)), A.reshape(4, -1))
    assert_close(x.view(3, 8), A.reshape(3, 8))
    assert_close(x.flatten(1), A.reshape(2, 12))
    assert_close(x.flatten(), A.reshape(-1))
    assert_close(x.unflatten(2, (2, 2)), A.reshape(2, 3, 2, 2))
    with pytest.raises(ValueError, match="invalid for input of size 24"):
        x.reshape(5, 5)
    with pytest.raises(ValueError, match="only one dimension"):
        x.reshape(-1, -1)
    with pytest.raises(ValueError, match="needs a copy"):
        ot.reshape(x.permute(2, 0, 1), (24,), copy=False)


def test_permute_transpose_moveaxis(x):
    assert_close(x.permute(2, 0, 1), A.transpose(2, 0, 1))
    assert_close(ot.permute_dims(x, (1, 2, 0)), A.transpose(1, 2, 0))
    assert_close(x.transpose(0, 2), A.swapaxes(0, 2))
    assert_close(ot.swapaxes(x, -1, 0), A.swapaxes(-1, 0))
    assert_close(ot.moveaxis(x, 0, -1), np.moveaxis(A, 0, -1))
    assert_close(x.mT, np.swapaxes(A, -1, -2))
    with pytest.raises(ValueError, match="not a permutation"):
        x.permute(0, 0, 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.transpose(0, 3)


def test_squeeze_rules(device):
    y = ot.zeros(1, 3, 1, device=device)
    assert y.squeeze().shape == (3,)
    assert y.squeeze(1).shape == (1, 3, 1)  # torch: size != 1 is skipped
    assert ot.squeeze(y, axis=0).shape == (3, 1)
    with pytest.raises(ValueError, match="size 3"):
        ot.squeeze(y, axis=1)  # Array API: an error
    assert y.unsqueeze(0).shape == (1, 1, 3, 1)
    assert ot.expand_dims(y, axis=-1).shape == (1, 3, 1, 1)
    assert ot.expand_dims(ot.zeros(3, device=device), axis=(0, 2)).shape == (1, 3, 1)


def test_expand_broadcast(device):
    v = ot.tensor([1.0, 2.0, 3.0], device=device)
    assert_close(v.expand(2, 3), np.broadcast_to([1, 2, 3], (2, 3)).astype(np.float32))
    assert v.reshape(3, 1).expand(-1, 4).shape == (3, 4)
    assert ot.broadcast_to(v, (4, 3)).shape == (4, 3)
    a, b = ot.broadcast_arrays(ot.zeros(3, 1, device=device), ot.zeros(1, 4, device=device))
    assert a.shape == b.shape == (3, 4)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        ot.zeros(3, device=device) + ot.zeros(4, device=device)


def test_join_split(x, device):
    y = ot.tensor(A + 100, device=device)
    assert_close(ot.cat([x, y], 1), np.concatenate([A, A + 100], 1))
    assert_close(ot.concat([x, y], axis=None), np.concatenate([A.ravel(), (A + 100).ravel()]))
    assert_close(ot.stack([x, y], -1), np.stack([A, A + 100], -1))
    assert ot.cat([x, ot.ones(2, 3, 1, dtype=ot.int64, device=device)], 2).dtype is ot.float32
    parts = x.split(2, dim=2)
    assert [p.shape for p in parts] == [(2, 3, 2), (2, 3, 2)]
    parts = x.split([1, 3], dim=-1)
    assert_close(parts[1], A[..., 1:])
    assert [c.shape[1] for c in x.chunk(2, 1)] == [2, 1]
    assert [u.shape for u in x.unbind(1)] == [(2, 4)] * 3
    assert [u.shape for u in ot.unstack(x, axis=2)] == [(2, 3)] * 4
    assert_close(x.narrow(2, 1, 2), A[:, :, 1:3])
    assert_close(ot.hstack([ot.ones(2, device=device), ot.zeros(3, device=device)]),
                 np.array([1, 1, 0, 0, 0], np.float32))
    with pytest.raises(ValueError, match="sizes must match"):
        ot.cat([x, ot.zeros(2, 2, 4, device=device)], 2)


def test_flip_roll_repeat_tile(x):
    assert_close(x.flip(0), A[::-1])
    assert_close(ot.flip(x), A[::-1, ::-1, ::-1])
    assert_close(ot.roll(x, 1, axis=2), np.roll(A, 1, axis=2))
    assert_close(ot.roll(x, (1, -2), axis=(0, 2)), np.roll(A, (1, -2), axis=(0, 2)))
    assert_close(ot.roll(x, 5), np.roll(A, 5))
    assert_close(x.repeat(1, 2, 1), np.tile(A, (1, 2, 1)))
    assert_close(ot.tile(x, (2,)), np.tile(A, (2,)))
    assert_close(ot.repeat(x, 2, axis=1), np.repeat(A, 2, axis=1))
    assert_close(ot.repeat(x[0, 0], ot.tensor([1, 0, 2, 1], device=x.device), axis=0),
                 np.repeat(A[0, 0], [1, 0, 2, 1]))
    assert_close(x.repeat_interleave(2), np.repeat(A, 2))


def test_diagonal_and_diag(device):
    m = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    t = ot.tensor(m, device=device)
    assert_close(t.diagonal(), np.diagonal(m))
    assert_close(t.diagonal(1), np.diagonal(m, 1))
    assert_close(ot.diag(ot.tensor([1.0, 2.0], device=device)), np.diag([1.0, 2.0]).astype(
        np.float32))
    assert_close(ot.linalg.diagonal(t), np.diagonal(m))
    assert_close(ot.diag_embed(ot.ones(2, 3, device=device)).sum(), np.float32(6))


def test_pad(device):
    from omnitensor.core.ops.join import pad_constant
    t = ot.tensor(A, device=device)
    assert_close(pad_constant(t, [(0, 0), (1, 2), (2, 0)], 7),
                 np.pad(A, [(0, 0), (1, 2), (2, 0)], constant_values=7))
    assert_close(pad_constant(t, [(0, 0), (-1, 0), (0, -2)]), A[:, 1:, :2])


def test_flip_tile_and_scatter_method_spellings_like_torch(device):
    x = ot.arange(6, device=device).reshape(2, 3)
    ref = np.arange(6).reshape(2, 3)
    assert x.flip(0, 1).tolist() == ref[::-1, ::-1].tolist()
    assert x.flip((1,)).tolist() == x.flip(dims=[1]).tolist() == ref[:, ::-1].tolist()
    assert x.tile(2, 1).tolist() == np.tile(ref, (2, 1)).tolist()
    assert x.tile((1, 2)).tolist() == np.tile(ref, (1, 2)).tolist()
    i = ot.tensor([[0, 1, 0]], device=device)
    z = ot.zeros(2, 3, device=device)
    assert z.scatter(0, i, ot.ones(1, 3, device=device), reduce="add").tolist() == \
        [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    assert z.scatter(0, i, value=5.0).tolist() == [[5.0, 0.0, 5.0], [0.0, 5.0, 0.0]]
    twos = ot.full((2, 3), 2.0, device=device)  # torch: reduce='multiply' (value 3.0)
    assert twos.scatter(0, i, 3.0, reduce="multiply").tolist() == \
        [[6.0, 2.0, 6.0], [2.0, 6.0, 2.0]]
    with pytest.raises(ValueError, match="reduce"):
        z.scatter(0, i, 1.0, reduce="max")
