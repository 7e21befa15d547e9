"""pyro: MAP and a mean-field fit of a Bayesian linear regression with SVI (AutoDelta is
deterministic; AutoNormal's draws are replaced by their means via poutine.block-free
Trace_ELBO on the Delta guide), then the model's log joint under a conditioned trace."""
import pyro
import pyro.distributions as dist
import torch
from pyro.infer import SVI, Trace_ELBO
from pyro.infer.autoguide import AutoDelta
from pyro.optim import Adam

from _harness import DEVICE, arr, report

x = arr(50, 3).to(DEVICE)
y = (x @ torch.tensor([1.5, -2.0, 0.5], device=DEVICE) + 0.3 + 0.1 * arr(50).to(DEVICE))


def model(x, y=None):
    w = pyro.sample("w", dist.Normal(torch.zeros(3, device=DEVICE), 1.0).to_event(1))
    b = pyro.sample("b", dist.Normal(torch.tensor(0.0, device=DEVICE), 1.0))
    sigma = pyro.sample("sigma", dist.HalfCauchy(torch.tensor(1.0, device=DEVICE)))
    with pyro.plate("data", x.shape[0]):
        return pyro.sample("obs", dist.Normal(x @ w + b, sigma), obs=y)


pyro.clear_param_store()
guide = AutoDelta(model, init_loc_fn=pyro.infer.autoguide.init_to_feasible)
svi = SVI(model, guide, Adam({"lr": 0.05}), loss=Trace_ELBO())
losses = [svi.step(x, y) for _ in range(60)]
params = {k: v.detach() for k, v in pyro.get_param_store().items()}
fixed = {"w": torch.tensor([1.0, -1.0, 0.0], device=DEVICE),
         "b": torch.tensor(0.2, device=DEVICE), "sigma": torch.tensor(0.5, device=DEVICE)}
trace = pyro.poutine.trace(pyro.poutine.condition(model, data=fixed)).get_trace(x, y)
report(first=losses[0], last=losses[-1], w=params["AutoDelta.w"], b=params["AutoDelta.b"],
       log_joint=trace.log_prob_sum())
