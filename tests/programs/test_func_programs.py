"""torch.func programs in the style of torch's tutorials, run through omnitensor on every
device and compared with the same programs in torch (float32, same weights and data):
per-sample gradients with ``vmap(grad(...))``, a model ensemble with
``stack_module_state`` + ``vmap(functional_call)``, and forward-mode Jacobians of an MLP
(``jacfwd`` against ``jacrev`` against torch)."""
import copy

import numpy as np
import pytest

import omnitensor as ot

torch = pytest.importorskip("torch")
TOL = dict(rtol=2e-4, atol=2e-5)


def _build(ns):
    """One model definition for both libraries (ns is torch or omnitensor)."""
    class SimpleCNN(ns.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = ns.nn.Conv2d(1, 4, 3)
            self.conv2 = ns.nn.Conv2d(4, 6, 3)
            self.fc1 = ns.nn.Linear(6 * 2 * 2, 16)
            self.fc2 = ns.nn.Linear(16, 5)

        def forward(self, x):
            x = ns.nn.functional.relu(self.conv1(x))
            x = ns.nn.functional.max_pool2d(self.conv2(x), 2)
            x = ns.flatten(x, 1)
            return self.fc2(ns.nn.functional.relu(self.fc1(x)))

    class MLP(ns.nn.Module):
        def __init__(self, d_in=6, hidden=16, d_out=3):
            super().__init__()
            self.fc1 = ns.nn.Linear(d_in, hidden)
            self.fc2 = ns.nn.Linear(hidden, d_out)

        def forward(self, x):
            return self.fc2(ns.tanh(self.fc1(x)))
    return SimpleCNN, MLP


def _copy_weights(tmodel, omodel, device):
    state = {k: ot.tensor(v.detach().numpy(), device=device)
             for k, v in tmodel.state_dict().items()}
    omodel.load_state_dict(state)
    return omodel.to(device)


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, ot.Tensor) else t.detach().numpy()


def _close(a, b):
    np.testing.assert_allclose(_np(a), _np(b), **TOL)


def test_per_sample_gradients(device):
    """torch's per-sample-gradients tutorial: vmap(grad(loss)) over a batch, with the
    parameters as a dict, equals one backward per sample and torch.func's answer."""
    torch.manual_seed(0)
    TCNN, _ = _build(torch)
    OCNN, _ = _build(ot)
    tmodel = TCNN()
    omodel = _copy_weights(tmodel, OCNN(), device)
    data = torch.randn(8, 1, 8, 8)
    targets = torch.randint(0, 5, (8,))
    odata = ot.tensor(data.numpy(), device=device)
    otargets = ot.tensor(targets.numpy(), device=device)

    def make_loss(ns, model):
        def compute_loss(params, buffers, sample, target):
            batch, tgt = sample.unsqueeze(0), target.unsqueeze(0)
            predictions = ns.func.functional_call(model, (params, buffers), (batch,))
            return ns.nn.functional.cross_entropy(predictions, tgt)
        return compute_loss

    params = {k: v.detach() for k, v in omodel.named_parameters()}
    buffers = {k: v.detach() for k, v in omodel.named_buffers()}
    per_sample = ot.func.vmap(ot.func.grad(make_loss(ot, omodel)),
                              in_dims=(None, None, 0, 0))(params, buffers, odata, otargets)
    tparams = {k: v.detach() for k, v in tmodel.named_parameters()}
    tref = torch.func.vmap(torch.func.grad(make_loss(torch, tmodel)),
                           in_dims=(None, None, 0, 0))(tparams, {}, data, targets)
    assert set(per_sample) == set(tref)
    for name, g in per_sample.items():
        assert g.shape == (8,) + tuple(tmodel.get_parameter(name).shape)
        _close(g, tref[name])
    # the slow way: one backward per sample, in omnitensor itself
    for i in (0, 5):
        omodel.zero_grad()
        ot.nn.functional.cross_entropy(omodel(odata[i:i + 1]), otargets[i:i + 1]).backward()
        for name, p in omodel.named_parameters():
            _close(per_sample[name][i], p.grad)


def test_model_ensemble(device):
    """torch's ensembling tutorial: stacked states, vmap over models, the same minibatch or
    one per model; gradients reach the stacked parameters."""
    torch.manual_seed(1)
    _, TMLP = _build(torch)
    _, OMLP = _build(ot)
    tmodels = [TMLP() for _ in range(4)]
    omodels = [_copy_weights(t, OMLP(), device) for t in tmodels]
    x = torch.randn(5, 6)
    xs = torch.randn(4, 5, 6)
    ox, oxs = ot.tensor(x.numpy(), device=device), ot.tensor(xs.numpy(), device=device)

    params, buffers = ot.func.stack_module_state(omodels)
    base = copy.deepcopy(omodels[0])  # torch's tutorial moves it to 'meta'; no such device

    def fmodel(params, buffers, x):
        return ot.func.functional_call(base, (params, buffers), (x,))
    same = ot.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, ox)
    each = ot.func.vmap(fmodel)(params, buffers, oxs)
    tparams, tbuffers = torch.func.stack_module_state(tmodels)
    tbase = copy.deepcopy(tmodels[0]).to("meta")

    def tfmodel(params, buffers, x):
        return torch.func.functional_call(tbase, (params, buffers), (x,))
    _close(same, torch.func.vmap(tfmodel, in_dims=(0, 0, None))(tparams, tbuffers, x))
    _close(each, torch.func.vmap(tfmodel)(tparams, tbuffers, xs))
    for i, m in enumerate(omodels):
        _close(same[i], m(ox))
    (same ** 2).mean().backward()
    (torch.func.vmap(tfmodel, in_dims=(0, 0, None))(tparams, tbuffers, x) ** 2).mean() \
        .backward()
    for name in params:
        _close(params[name].grad, tparams[name].grad)


def test_forward_mode_jacobian_of_mlp(device):
    """jacfwd of a small MLP (wrt its input and, through functional_call, its weights)
    equals jacrev and torch's jacfwd; its Hessian (forward over reverse) equals torch's."""
    torch.manual_seed(2)
    _, TMLP = _build(torch)
    _, OMLP = _build(ot)
    tmodel = TMLP()
    omodel = _copy_weights(tmodel, OMLP(), device)
    x = torch.randn(6)
    ox = ot.tensor(x.numpy(), device=device)
    jf = ot.func.jacfwd(omodel)(ox)
    jr = ot.func.jacrev(omodel)(ox)
    assert jf.shape == (3, 6)
    _close(jf, jr)
    _close(jf, torch.func.jacfwd(tmodel)(x))

    params = {k: v.detach() for k, v in omodel.named_parameters()}
    tparams = {k: v.detach() for k, v in tmodel.named_parameters()}
    jw = ot.func.jacfwd(lambda p: ot.func.functional_call(omodel, p, (ox,)))(params)
    tjw = torch.func.jacfwd(lambda p: torch.func.functional_call(tmodel, p, (x,)))(tparams)
    for name in params:
        assert jw[name].shape == (3,) + tuple(params[name].shape)
        _close(jw[name], tjw[name])

    def energy(ns, model):
        return lambda v: (model(v) ** 2).sum()
    _close(ot.func.hessian(energy(ot, omodel))(ox),
           torch.func.hessian(energy(torch, tmodel))(x))
    # a Hessian-vector product as jvp of grad, and with forward_ad directly
    v = torch.randn(6)
    ov = ot.tensor(v.numpy(), device=device)
    hvp = ot.func.jvp(ot.func.grad(energy(ot, omodel)), (ox,), (ov,))[1]
    _close(hvp, torch.func.jvp(torch.func.grad(energy(torch, tmodel)), (x,), (v,))[1])
    with ot.autograd.forward_ad.dual_level():
        out = omodel(ot.autograd.forward_ad.make_dual(ox, ov))
        _close(ot.autograd.forward_ad.unpack_dual(out).tangent, jf @ ov)
