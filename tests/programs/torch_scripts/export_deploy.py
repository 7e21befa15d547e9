"""Train a small CNN, then deploy it the two ways torch scripts do: torch.onnx.export with a
dynamic batch axis (run in onnxruntime) and torch.jit.trace + torch.jit.save/load (run on the
accelerator). Prints PASS when both agree with the eager model."""
import os
import tempfile

import numpy as np
import onnxruntime as ort
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout = nn.Dropout(0.25)
        self.fc = nn.Linear(16 * 3 * 3, 4)

    def forward(self, x):
        x = F.relu(self.bn(self.conv1(x)))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(torch.flatten(x, 1))
        return F.log_softmax(self.fc(x), dim=1)


# a toy task: which quadrant of an 8x8 image is bright
def batch(n):
    x = torch.rand(n, 1, 8, 8) * 0.2
    y = torch.randint(0, 4, (n,))
    for i in range(n):
        r, c = divmod(int(y[i]), 2)
        x[i, 0, r * 4:(r + 1) * 4, c * 4:(c + 1) * 4] += 0.8
    return x.to(device), y.to(device)


model = Net().to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for _step in range(60):
    x, y = batch(32)
    loss = F.nll_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"final loss {loss.item():.4f}")
model.eval()

with tempfile.TemporaryDirectory() as tmp:
    onnx_path = os.path.join(tmp, "net.onnx")
    example = torch.randn(2, 1, 8, 8, device=device)
    torch.onnx.export(model, (example,), onnx_path, input_names=["input"],
                      output_names=["output"], opset_version=18,
                      dynamic_axes={"input": {0: "batch_size"}, "output": {0: "batch_size"}})
    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    x, y = batch(50)
    with torch.no_grad():
        eager = model(x)
    ort_out = session.run(None, {"input": x.cpu().numpy()})[0]
    err_onnx = float(np.abs(ort_out - eager.cpu().numpy()).max())
    ok_onnx = np.allclose(ort_out, eager.cpu().numpy(), rtol=1e-5, atol=1e-5)
    print(f"onnxruntime max abs error {err_onnx:.2e}")

    pt_path = os.path.join(tmp, "net_traced.pt")
    traced = torch.jit.trace(model, example)
    torch.jit.save(traced, pt_path)
    loaded = torch.jit.load(pt_path, map_location=device)
    with torch.no_grad():
        jit_out = loaded(x)
    err_jit = float((jit_out - eager).abs().max())
    ok_jit = torch.allclose(jit_out, eager, rtol=1e-5, atol=1e-5)
    print(f"jit max abs error {err_jit:.2e}")

acc = (eager.argmax(1) == y).float().mean().item()
print(f"accuracy {acc:.2f}")
print("PASS" if ok_onnx and ok_jit and acc > 0.9 else "FAIL")
