"""Argument rules where omnitensor once accepted what torch refuses (or split differently),
found by the fuzz suite; each is checked against torch itself."""
import pytest

import omnitensor as ot
import omnitensor.nn.functional as F

torch = pytest.importorskip("torch")


def test_size_refuses_bool_dim(device):
    x = ot.ones(2, 3, device=device)
    with pytest.raises(TypeError, match="bool"):
        x.size(True)
    with pytest.raises(TypeError):
        torch.ones(2, 3).size(True)
    assert x.size(1) == 3


@pytest.mark.parametrize("n,chunks", [(0, 3), (1, 3), (5, 3), (6, 4), (7, 7), (0, 1)])
def test_chunk_piece_shapes_match_torch(device, n, chunks):
    got = [tuple(c.shape) for c in ot.zeros(n, 2, device=device).chunk(chunks)]
    want = [tuple(c.shape) for c in torch.zeros(n, 2).chunk(chunks)]
    assert got == want


def test_embedding_weight_must_be_2d(device):
    with pytest.raises(ot.errors.ShapeError, match="2-D"):
        F.embedding(ot.tensor([0], device=device), ot.ones(2, 2, 2, device=device))
    with pytest.raises(RuntimeError):
        torch.nn.functional.embedding(torch.tensor([0]), torch.ones(2, 2, 2))


def test_layer_norm_needs_a_normalized_dim(device):
    with pytest.raises(ValueError, match="at least one dim"):
        F.layer_norm(ot.ones(2, 3, device=device), [])
    with pytest.raises(RuntimeError):
        torch.nn.functional.layer_norm(torch.ones(2, 3), [])


def test_ones_of_empty_shape_is_0d_as_torch(device):
    assert ot.ones([], device=device).shape == tuple(torch.ones([]).shape) == ()
