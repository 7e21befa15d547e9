"""The torch.nn layers added over F's newer functions, against torch: same constructor
arguments, same parameters (copied), same outputs and gradients, on every device."""
import numpy as np
import pytest
import torch

import omnitensor as ot

RNG = np.random.default_rng(21)

# (class name, constructor args, input shapes); inputs are float unless marked
CASES = [
    ("ReflectionPad2d", (2,), [(1, 2, 4, 5)]), ("ReplicationPad1d", ((1, 3),), [(2, 3, 5)]),
    ("ZeroPad2d", ((1, 0, 2, 1),), [(1, 1, 3, 3)]), ("ConstantPad3d", (1, 0.5), [(1, 1, 2, 2, 2)]),
    ("CircularPad1d", (2,), [(1, 2, 5)]), ("CosineSimilarity", (), [(4, 6), (4, 6)]),
    ("PairwiseDistance", (), [(4, 6), (4, 6)]), ("Hardshrink", (), [(3, 5)]),
    ("Softshrink", (0.3,), [(3, 5)]), ("Tanhshrink", (), [(3, 5)]), ("PReLU", (3,), [(2, 3, 4)]),
    ("Softmax2d", (), [(2, 3, 4, 4)]), ("ChannelShuffle", (2,), [(1, 4, 3, 3)]),
    ("RMSNorm", ((5,),), [(3, 5)]), ("LocalResponseNorm", (3,), [(2, 5, 4)]),
    ("InstanceNorm1d", (3,), [(2, 3, 6)]), ("InstanceNorm2d", (3, 1e-5, 0.1, True, True),
                                             [(2, 3, 4, 4)]),
    ("BatchNorm3d", (2,), [(2, 2, 3, 3, 3)]), ("LPPool3d", (2, 2), [(1, 2, 4, 4, 4)]),
    ("Fold", ((4, 5), (2, 2)), [(1, 8, 12)]), ("Unfold", ((2, 3),), [(1, 2, 4, 5)]),
    ("SoftMarginLoss", (), [(4, 3), (4, 3)]), ("MarginRankingLoss", (0.2,), [(5,), (5,), (5,)]),
    ("TripletMarginLoss", (), [(4, 6), (4, 6), (4, 6)]),
    ("CosineEmbeddingLoss", (0.1,), [(4, 6), (4, 6), (4,)]),
    ("PoissonNLLLoss", (), [(3, 4), (3, 4)]), ("GaussianNLLLoss", (), [(3, 4), (3, 4), (3, 4)]),
]


# targets torch refuses to differentiate
NO_GRAD = {"SoftMarginLoss": {1}, "CosineEmbeddingLoss": {2}}


def _arr(shape, dt):
    return RNG.standard_normal(shape).astype(dt)


@pytest.mark.parametrize("name,args,shapes", CASES, ids=[c[0] for c in CASES])
def test_layer_matches_torch(device, name, args, shapes):
    dt = np.float64 if device == "cpu" else np.float32
    tol = 1e-9 if device == "cpu" else 2e-4
    tm, om = getattr(torch.nn, name)(*args), getattr(ot.nn, name)(*args)
    tm, om = tm.to(getattr(torch, "float64" if dt == np.float64 else "float32")), om.to(device)
    om = om.to(ot.float64 if dt == np.float64 else ot.float32)
    for (n, tp), (n2, op) in zip(tm.named_parameters(), om.named_parameters()):
        assert n == n2
        with torch.no_grad():
            tp.copy_(torch.tensor(_arr(tuple(tp.shape), dt)))
        op.data = ot.tensor(tp.detach().numpy(), device=device)
    inputs = [_arr(s, dt) for s in shapes]
    if name == "CosineEmbeddingLoss":
        inputs[2] = np.sign(inputs[2])
    if name == "MarginRankingLoss":
        inputs[2] = np.sign(inputs[2])
    if name == "SoftMarginLoss":
        inputs[1] = np.sign(inputs[1])
    if name == "GaussianNLLLoss":
        inputs[2] = np.abs(inputs[2]) + 0.1
    grad = [i not in NO_GRAD.get(name, ()) for i in range(len(inputs))]
    ti = [torch.tensor(a, requires_grad=g) for a, g in zip(inputs, grad)]
    oi = [ot.tensor(a, device=device, requires_grad=g) for a, g in zip(inputs, grad)]
    to, oo = tm(*ti), om(*oi)
    np.testing.assert_allclose(oo.detach().cpu().numpy(), to.detach().numpy(), rtol=tol * 10,
                               atol=tol * 10)
    w = _arr(tuple(to.shape), dt)
    (to * torch.tensor(w)).sum().backward()
    (oo * ot.tensor(w, device=device)).sum().backward()
    for t, o in zip(ti, oi):
        if not t.requires_grad:
            continue
        np.testing.assert_allclose(o.grad.cpu().numpy(), t.grad.numpy(), rtol=tol * 100,
                                   atol=tol * 100)
    if name.startswith("InstanceNorm2d"):     # running statistics tracked as torch's
        np.testing.assert_allclose(om.running_var.cpu().numpy(), tm.running_var.numpy(),
                                   rtol=tol * 10, atol=tol * 10)


def test_embedding_bag_and_ctc_modules(device):
    w = _arr((10, 4), np.float32)
    tb = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), mode="max")
    ob = ot.nn.EmbeddingBag.from_pretrained(ot.tensor(w, device=device), mode="max")
    idx, offs = np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 4])
    np.testing.assert_allclose(
        ob(ot.tensor(idx, device=device), ot.tensor(offs, device=device)).cpu().numpy(),
        tb(torch.tensor(idx), torch.tensor(offs)).numpy(), rtol=1e-6)
    lp = torch.randn(12, 2, 5).log_softmax(2)
    tgt = torch.tensor([[1, 2, 3], [2, 2, 4]])
    t = torch.nn.CTCLoss()(lp, tgt, (12, 10), (3, 2))
    o = ot.nn.CTCLoss()(ot.tensor(lp.numpy(), device=device), ot.tensor(tgt.numpy(),
                                                                        device=device),
                        (12, 10), (3, 2))
    assert abs(o.item() - t.item()) < 1e-4
