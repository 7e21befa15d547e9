"""Inference tensors against torch: which tensors ``inference_mode()`` marks (new tensors,
views of inference tensors; not views of normal tensors, nor anything made under
``inference_mode(False)``), what ``inference_mode(False)`` switches, and torch's refusals
outside the mode (in-place updates, requires_grad, saving for backward)."""
import numpy as np
import pytest
import torch

import omnitensor as ot
import omnitensor.torch_face as face


def _made(lib, device):
    """The same tensors made in and around inference mode, by name."""
    kw = {} if lib is torch else {"device": device}
    n = lib.ones(3, **kw)
    out = {}
    with lib.inference_mode():
        out["new"] = lib.ones(3, **kw)
        out["op_of_normal"] = n * 2
        out["unary_of_normal"] = n.exp()
        out["view_of_normal"] = n[:2]
        out["view_of_inference"] = out["new"][:2]
        out["clone_of_normal"] = n.clone()
        out["from_data"] = lib.tensor([1.0, 2.0], **kw)
        out["reduction"] = n.sum()
        n.add_(0)
        with lib.inference_mode(False):
            out["mode_false_inside"] = lib.ones(2, **kw)
        with lib.no_grad():
            out["no_grad_inside"] = lib.ones(2, **kw)
    with lib.inference_mode(False):
        out["mode_false"] = lib.ones(2, **kw)
    out["inplace_target"] = n
    inf = out["new"]
    out["op_outside"] = inf * 2
    out["view_outside"] = inf[1:]
    out["detach_outside"] = inf.detach()
    out["clone_outside"] = inf.clone()
    out["mixed_outside"] = inf + n
    return out


def test_which_tensors_are_inference_tensors(device):
    ours, theirs = _made(ot, device), _made(torch, "cpu")
    assert {k: v.is_inference() for k, v in ours.items()} == \
        {k: v.is_inference() for k, v in theirs.items()}
    assert face.is_inference(ours["new"]) and not face.is_inference(ours["mode_false"])


def test_inference_mode_false_switches_both_modes():
    for lib in (face, torch):
        with lib.no_grad():
            with lib.inference_mode(False):
                assert lib.is_grad_enabled() and not lib.is_inference_mode_enabled()
        with lib.inference_mode():
            assert not lib.is_grad_enabled() and lib.is_inference_mode_enabled()
            with lib.inference_mode(False):
                assert lib.is_grad_enabled() and not lib.is_inference_mode_enabled()
            assert not lib.is_grad_enabled() and lib.is_inference_mode_enabled()
        assert lib.is_grad_enabled() and not lib.is_inference_mode_enabled()


@pytest.mark.parametrize("what", ["add_", "view_mul_", "setitem", "copy_", "zero_",
                                  "requires_grad_", "saved_for_backward"])
def test_refusals_outside_inference_mode_as_torch(device, what):
    def attempt(lib, dev):
        kw = {} if lib is torch else {"device": dev}
        with lib.inference_mode():
            a = lib.ones(3, **kw)
        w = lib.ones(3, requires_grad=True, **kw)
        return {"add_": lambda: a.add_(1), "view_mul_": lambda: a[:2].mul_(2),
                "setitem": lambda: a.__setitem__(0, 5.0), "copy_": lambda: a.copy_(w.detach()),
                "zero_": lambda: a.zero_(), "requires_grad_": lambda: a.requires_grad_(),
                "saved_for_backward": lambda: (w * a).sum().backward()}[what]
    with pytest.raises(RuntimeError) as theirs:
        attempt(torch, "cpu")()
    with pytest.raises(RuntimeError) as ours:
        attempt(ot, device)()
    assert str(ours.value).split(".")[0] == str(theirs.value).split(".")[0]


def test_inference_tensors_work_in_functional_ops_outside(device):
    with ot.inference_mode():
        a = ot.arange(4.0, device=device)
    with torch.inference_mode():
        ta = torch.arange(4.0)
    w, tw = ot.ones(4, device=device, requires_grad=True), torch.ones(4, requires_grad=True)
    (w + a).sum().backward()  # add saves nothing: allowed, as in torch
    (tw + ta).sum().backward()
    np.testing.assert_array_equal(w.grad.cpu().numpy(), tw.grad.numpy())
    inside = []
    for lib, x in ((ot, a), (torch, ta)):
        with lib.inference_mode():
            x.add_(1)  # in-place inside the mode is allowed
        inside.append(x.cpu().numpy() if lib is ot else x.numpy())
    np.testing.assert_array_equal(*inside)


def test_sparse_tensors_made_in_inference_mode(device):
    with ot.inference_mode():
        s = ot.ones(2, 2, device=device).to_sparse()
    with torch.inference_mode():
        ts = torch.ones(2, 2).to_sparse()
    assert s.is_inference() == ts.is_inference()
