"""torch.optim.swa_utils against torch: AveragedModel (SWA, EMA per tensor and in place,
with and without buffers), SWALR's learning rates, update_bn's statistics and the
helpers' checks, on every device."""
import numpy as np
import pytest

import omnitensor as ot
from omnitensor import nn, optim
from omnitensor.optim import swa_utils

torch = pytest.importorskip("torch")
tswa = torch.optim.swa_utils
RNG = np.random.default_rng(0)


def _pair(device, bn=False):
    torch.manual_seed(0)
    layers_t = [torch.nn.Linear(4, 3)] + ([torch.nn.BatchNorm1d(3)] if bn else [])
    layers_o = [nn.Linear(4, 3)] + ([nn.BatchNorm1d(3)] if bn else [])
    tm, om = torch.nn.Sequential(*layers_t), nn.Sequential(*layers_o)
    om.load_state_dict({k: ot.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, om.to(device)


def _perturb(tm, om, device, k):
    for (_, tp), op in zip(tm.named_parameters(), om.parameters()):
        d = RNG.standard_normal(tuple(tp.shape)).astype(np.float32) * 0.1 * (k + 1)
        with torch.no_grad():
            tp.add_(torch.tensor(d))
        with ot.no_grad():
            op.add_(ot.tensor(d, device=device))


@pytest.mark.parametrize("kind", ["swa", "ema", "ema_multi", "swa_multi", "buffers"])
def test_averaged_model(device, kind) -> None:
    tm, om = _pair(device, bn=kind == "buffers")
    kw = {"swa": ({}, {}), "buffers": (dict(use_buffers=True), dict(use_buffers=True)),
          "ema": (dict(avg_fn=tswa.get_ema_avg_fn(0.9)),
                  dict(avg_fn=swa_utils.get_ema_avg_fn(0.9))),
          "ema_multi": (dict(multi_avg_fn=tswa.get_ema_multi_avg_fn(0.8)),
                        dict(multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.8))),
          "swa_multi": (dict(multi_avg_fn=tswa.get_swa_multi_avg_fn()),
                        dict(multi_avg_fn=swa_utils.get_swa_multi_avg_fn()))}[kind]
    ta, oa = tswa.AveragedModel(tm, **kw[0]), swa_utils.AveragedModel(om, **kw[1])
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    for k in range(4):
        _perturb(tm, om, device, k)
        if kind == "buffers":  # move the running statistics too
            tm(torch.tensor(x))
            om(ot.tensor(x, device=device))
        ta.update_parameters(tm)
        oa.update_parameters(om)
        for (name, tv), ov in zip(ta.state_dict().items(), oa.state_dict().values()):
            np.testing.assert_allclose(ov.cpu().numpy(), tv.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} after update {k}")
    out_t = ta(torch.tensor(x))
    out_o = oa(ot.tensor(x, device=device))
    np.testing.assert_allclose(out_o.detach().cpu().numpy(), out_t.detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    assert isinstance(oa, nn.Module) and int(oa.n_averaged.item()) == 4


@pytest.mark.parametrize("strategy,epochs", [("cos", 3), ("linear", 4), ("cos", 0)])
def test_swalr(strategy, epochs) -> None:
    lrs = []
    for lib, p in ((torch, torch.nn.Parameter(torch.ones(1))), (ot, nn.Parameter(ot.ones(1)))):
        opt_mod = torch.optim if lib is torch else optim
        swa = tswa if lib is torch else swa_utils
        opt = opt_mod.SGD([{"params": [p]}], lr=0.5)
        sched = swa.SWALR(opt, swa_lr=0.05, anneal_epochs=epochs, anneal_strategy=strategy)
        seen = []
        for _ in range(7):
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr()[0])
        lrs.append(seen)
    np.testing.assert_allclose(lrs[1], lrs[0], rtol=1e-12)
    for swa, opt in ((tswa, torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1)),
                     (swa_utils, optim.SGD([nn.Parameter(ot.ones(1))], lr=1))):
        with pytest.raises(ValueError, match="anneal_strategy must be one of"):
            swa.SWALR(opt, 0.1, anneal_strategy="step")
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater"):
            swa.SWALR(opt, 0.1, anneal_epochs=-1)


def test_update_bn(device) -> None:
    tm, om = _pair(device, bn=True)
    batches = [RNG.standard_normal((6, 4)).astype(np.float32) * (i + 1) for i in range(3)]
    tswa.update_bn([(torch.tensor(b), 0) for b in batches], tm)
    swa_utils.update_bn([(ot.tensor(b, device=device), 0) for b in batches], om)
    for (name, tv), ov in zip(tm.state_dict().items(), om.state_dict().values()):
        np.testing.assert_allclose(ov.cpu().numpy(), tv.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    assert om[1].momentum == tm[1].momentum == 0.1


def test_helper_checks() -> None:
    for swa in (tswa, swa_utils):
        with pytest.raises(ValueError, match="Invalid decay value"):
            swa.get_ema_avg_fn(1.5)
        with pytest.raises(ValueError, match="Invalid decay value"):
            swa.get_ema_multi_avg_fn(-0.1)
