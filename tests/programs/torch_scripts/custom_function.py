"""The custom autograd.Function tutorial, as a torch script: a Legendre polynomial P3 with a
hand-written backward fitting sin(x), checked with gradcheck, plus
torch.autograd.functional.jacobian of the Function."""
import math

import torch


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


dtype = torch.float
device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() \
    else torch.device("cpu")
torch.manual_seed(0)
x = torch.linspace(-math.pi, math.pi, 500, device=device, dtype=dtype)
y = torch.sin(x)
a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

learning_rate = 5e-6
for t in range(600):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 200 == 199:
        print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        for p in (a, b, c, d):
            p -= learning_rate * p.grad
            p.grad = None
print(f"Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)")

inp = torch.randn(6, dtype=torch.double, device=device, requires_grad=True)
assert torch.autograd.gradcheck(LegendrePolynomial3.apply, (inp,), eps=1e-6, atol=1e-4)
jac = torch.autograd.functional.jacobian(LegendrePolynomial3.apply, inp.detach())
expect = torch.diag(1.5 * (5 * inp.detach() ** 2 - 1))
assert torch.allclose(jac, expect)
print("PASS" if loss.item() < 60 else f"FAIL: loss {loss.item()}")
