"""Polynomial regression in the style of pytorch/examples' regression script, exercising the
older idioms scripts still use: manual `param.data.add_` updates, Tensor.type(), legacy
tensor types, a Python range as an index, torch.no_grad as a decorator, set_printoptions,
and torch.func.grad against autograd."""
from itertools import count

import torch
import torch.nn.functional as F
from torch.func import grad

torch.manual_seed(2)
torch.set_printoptions(precision=3)
POLY_DEGREE = 4
W_target = torch.randn(POLY_DEGREE, 1) * 5
b_target = torch.randn(1) * 5


def make_features(x):
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x):
    return x.mm(W_target) + b_target.item()


def get_batch(batch_size=32):
    random = torch.randn(batch_size)
    x = make_features(random)
    return x, f(x)


fc = torch.nn.Linear(W_target.size(0), 1)
assert fc.weight.type() in ("torch.FloatTensor",) or fc.weight.type().endswith(".FloatTensor")
for batch_idx in count(1):
    batch_x, batch_y = get_batch()
    fc.zero_grad()
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()
    output.backward()
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)
    if loss < 1e-3 or batch_idx > 20000:
        break
print(f"Loss: {loss:.6f} after {batch_idx} batches")


@torch.no_grad()
def predict(x):
    return fc(make_features(x))


xs = torch.linspace(-1, 1, 9)
pred = predict(xs)
assert not pred.requires_grad
idx = torch.LongTensor([0, 4, 8])
assert torch.allclose(pred[range(0, 9, 4)], pred[idx])
print("prediction at -1, 0, 1:", pred[range(0, 9, 4)].view(-1))


def mse(w, b, x, y):
    return ((x.mm(w) + b - y) ** 2).mean()


x, y = get_batch(64)
w = fc.weight.detach().t().contiguous()
b = fc.bias.detach()
gw = grad(mse)(w, b, x, y)
w_req = w.clone().requires_grad_(True)
mse(w_req, b, x, y).backward()
assert torch.allclose(gw, w_req.grad, rtol=1e-4, atol=1e-5)
as_double = x.type(torch.DoubleTensor) if x.is_cpu else x.double()
assert as_double.dtype == torch.float64
print("PASS" if loss < 1e-3 else "FAIL: did not converge")
