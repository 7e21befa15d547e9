"""Seeded random numbers: reproducible, the same bits on every device, sane statistics."""
import numpy as np
import omnitensor as ot
from omnitensor.backends.philox import philox_bits


def test_philox_known_answer():
    # Random123's published known-answer test for philox4x32-10 (counter 0, key 0)
    bits = philox_bits(np, 4, (0, 0), 0)
    assert [hex(int(b)) for b in bits] == ["0x6627e8d5", "0xe169c58d", "0xbc57ac4c",
                                           "0x9b00dbd8"]


def test_same_seed_same_numbers_on_every_device(device):
    ot.manual_seed(123)
    ref = ot.rand(1000).numpy()
    ot.manual_seed(123)
    got = ot.rand(1000, device=device).cpu().numpy()
    assert np.array_equal(ref, got)  # bit-identical: exact integer arithmetic
    ot.manual_seed(5)
    a = ot.randint(0, 10, (500,)).numpy()
    ot.manual_seed(5)
    assert np.array_equal(a, ot.randint(0, 10, (500,), device=device).cpu().numpy())
    ot.manual_seed(7)
    n1 = ot.randn(200).numpy()
    ot.manual_seed(7)
    n2 = ot.randn(200, device=device).cpu().numpy()
    assert np.allclose(n1, n2, rtol=1e-5, atol=1e-5)


def test_statistics(device):
    ot.manual_seed(0)
    u = ot.rand(20000, device=device)
    assert 0 <= u.min().item() and u.max().item() < 1
    assert abs(u.mean().item() - 0.5) < 0.01
    z = ot.randn(20000, device=device)
    assert abs(z.mean().item()) < 0.03 and abs(z.std().item() - 1) < 0.03
    k = ot.randint(3, 7, (20000,), device=device)
    assert k.min().item() == 3 and k.max().item() == 6
    p = ot.randperm(50, device=device)
    assert sorted(p.tolist()) == list(range(50))


def test_generator_and_state(device):
    g = ot.Generator().manual_seed(42)
    a = ot.rand(5, generator=g, device=device)
    g.manual_seed(42)
    assert \
        a.tolist() == ot.rand(5, generator=g, device=device).tolist()
    s = ot.get_rng_state()
    x = ot.rand(3, device=device).tolist()
    ot.set_rng_state(s)
    assert ot.rand(3, device=device).tolist() == x


def test_inplace_random_fills(device):
    ot.manual_seed(0)
    w = ot.empty(1000, device=device)
    w.uniform_(-2, 2)
    assert -2 <= w.min().item() and w.max().item() <= 2
    w.normal_(3, 0.1)
    assert abs(w.mean().item() - 3) < 0.05
    b = ot.bernoulli(ot.full((2000,), 0.3, device=device))
    assert abs(b.mean().item() - 0.3) < 0.05
    m = ot.multinomial(ot.tensor([0.0, 1.0, 0.0], device=device), 4, replacement=True)
    assert m.tolist() == [1, 1, 1, 1]


def test_negative_std_is_an_error_like_torch(device):
    import pytest
    for std in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="normal expects std >= 0.0, but found std"):
            ot.normal(0.0, std, (3,), device=device)
        with pytest.raises(ValueError, match="normal_ expects std >= 0.0"):
            ot.empty(3, device=device).normal_(0.0, std)
    with pytest.raises(ValueError, match="all elements of std >= 0.0"):
        ot.normal(ot.zeros(3, device=device), ot.tensor([1.0, -1.0, 1.0], device=device))
    # zero is allowed (a constant), and so is a tensor std without negatives
    assert ot.normal(2.0, 0.0, (4,), device=device).tolist() == [2.0] * 4
    assert ot.normal(ot.zeros(2, device=device), ot.ones(2, device=device)).shape == (2,)
