"""gpytorch: exact GP regression (RBF kernel), hyperparameters fit on the marginal
likelihood with Adam, then the posterior's mean and variance at test points."""
import gpytorch
import torch

from _harness import DEVICE, report

train_x = torch.linspace(0, 1, 40, dtype=torch.float64).to(DEVICE)
train_y = torch.sin(train_x * 6.0) + 0.05 * torch.cos(train_x * 37.0)


class GP(gpytorch.models.ExactGP):
    def __init__(self, x, y, likelihood):
        super().__init__(x, y, likelihood)
        self.mean_module = gpytorch.means.ConstantMean()
        self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x),
                                                         self.covar_module(x))


likelihood = gpytorch.likelihoods.GaussianLikelihood().double().to(DEVICE)
model = GP(train_x, train_y, likelihood).double().to(DEVICE)
model.train()
likelihood.train()
opt = torch.optim.Adam(model.parameters(), lr=0.1)
mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
losses = []
for _ in range(30):
    opt.zero_grad()
    loss = -mll(model(train_x), train_y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
model.eval()
likelihood.eval()
test_x = torch.linspace(0, 1, 7, dtype=torch.float64).to(DEVICE)
with torch.no_grad(), gpytorch.settings.fast_pred_var(False):
    pred = likelihood(model(test_x))
report(first=losses[0], last=losses[-1], mean=pred.mean, var=pred.variance,
       lengthscale=model.covar_module.base_kernel.lengthscale)
