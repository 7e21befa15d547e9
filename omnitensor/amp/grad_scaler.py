"""``GradScaler``: dynamic loss scaling for float16 training, torch's algorithm.

The scale and the growth tracker are 0-d tensors on the device of the first scaled output,
so nothing leaves the device until ``step`` asks whether to run the optimizer (one host read
of the per-device inf flag, as torch's ``step``). ``unscale_`` multiplies every gradient by
``1 / scale`` and, per device, accumulates the inf/NaN flag on the device: ``(g * 0).sum()``
is 0 for a finite gradient and NaN for one holding an inf or a NaN, without the overflow a
plain sum could hit. ``update`` applies torch's ``_amp_update_scale_`` rule with tensor
ops, in float64 and rounded to float32 as torch's kernel computes it:

* an inf/NaN was found: ``scale *= backoff_factor``, tracker = 0;
* else tracker + 1 reaching ``growth_interval``: ``scale *= growth_factor`` (kept if
  finite), tracker = 0; otherwise tracker + 1.
"""
from __future__ import annotations

import warnings
from collections import defaultdict
from enum import Enum
from typing import Any

from ..core import dtypes as _dt
from ..core.grad_mode import no_grad_ctx
from ..core.ops.creation import full
from ..core.ops.ternary import where
from ..core.tensor import Tensor

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class _PerDevice:
    """A master 0-d tensor and its copies on other devices, made once each."""

    def __init__(self, master: Tensor) -> None:
        self.master = master
        self.copies: dict[Any, Tensor] = {}

    def get(self, dev: Any) -> Tensor:
        t = self.copies.get(dev)
        if t is None:
            t = self.copies[dev] = self.master.to(dev)
        return t


class GradScaler:
    """``GradScaler(device="cuda", init_scale=2**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True)``, torch.amp's. The usual loop::

        scaler.scale(loss).backward()
        scaler.step(optimizer)      # unscales, skips the step on inf/NaN gradients
        scaler.update()

    ``device`` names the device type of the scale (``"cuda"``, ``"cpu"``, ``"opencl"``,
    ``"sycl"``); as torch, a ``"cuda"`` scaler on a machine without CUDA warns and is
    disabled. Disabled, every method is the identity torch's disabled scaler is."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if not isinstance(device, str):
            raise ValueError(f"GradScaler: device must be a device type string such as "
                             f"'cuda', 'cpu', 'opencl' or 'sycl', got {device!r}")
        self._device = device.split(":")[0]
        self._enabled = bool(enabled)
        if self._enabled and self._device == "cuda" and not _have_device("cuda"):
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError(f"GradScaler: growth_factor must be > 1.0, got "
                                 f"{growth_factor}")
            if backoff_factor >= 1.0:
                raise ValueError(f"GradScaler: backoff_factor must be < 1.0, got "
                                 f"{backoff_factor}")
            if int(growth_interval) <= 0:
                raise ValueError(f"GradScaler: growth_interval must be a positive int, got "
                                 f"{growth_interval}")
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._scale: Tensor | None = None
        self._growth_tracker: Tensor | None = None
        self._per_optimizer_states: dict[int, dict[str, Any]] = defaultdict(_fresh_state)

    # ------------------------------------------------------------------ scaling
    def _lazy_init(self, dev: Any) -> None:
        self._scale = full((), self._init_scale, dtype=_dt.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=_dt.int32,
                                    device=dev)

    def _check(self, funcname: str) -> tuple[Tensor, Tensor]:
        if self._scale is None or self._growth_tracker is None:
            raise RuntimeError(f"Attempted {funcname} but the scale is not initialized: "
                               f"this may indicate your script did not use "
                               f"scaler.scale(loss or outputs) earlier in the iteration.")
        return self._scale, self._growth_tracker

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or an iterable of them, nested) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            assert self._scale is not None
            return outputs * self._scale.to(outputs.device)
        replicas: list[_PerDevice] = []

        def apply(v: Any) -> Any:
            if isinstance(v, Tensor):
                if not replicas:
                    if self._scale is None:
                        self._lazy_init(v.device)
                    assert self._scale is not None
                    replicas.append(_PerDevice(self._scale))
                return v * replicas[0].get(v.device)
            if isinstance(v, (list, tuple)):
                out = [apply(x) for x in v]
                return type(v)(out) if isinstance(v, tuple) else out
            if hasattr(v, "__iter__") and not isinstance(v, (str, bytes, dict)):
                return map(apply, v)
            raise ValueError(f"GradScaler.scale: outputs must be a Tensor or an iterable of "
                             f"Tensors, got {type(v).__name__}")
        return apply(outputs)

    def _unscale_grads_(self, optimizer: Any, inv_scale: Tensor, found_inf: Tensor,
                        allow_fp16: bool) -> dict[Any, Tensor]:
        inv, found = _PerDevice(inv_scale), _PerDevice(found_inf)
        groups: dict[Any, dict[Any, list[Tensor]]] = defaultdict(lambda: defaultdict(list))
        for group in optimizer.param_groups:
            for p in group["params"]:
                if not isinstance(p, Tensor):
                    raise TypeError(f"GradScaler: expected parameters to be Tensors, got "
                                    f"{type(p).__name__}")
                g = p.grad
                if g is None:
                    continue
                if not allow_fp16 and g.dtype is _dt.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                groups[g.device][g.dtype].append(g)
        with no_grad_ctx():
            for dev, by_dtype in groups.items():
                flag = found.get(dev)
                scale = inv.get(dev)
                acc = None
                for grads in by_dtype.values():
                    for g in grads:
                        # 0 for a finite gradient, NaN otherwise; read before unscaling so
                        # a gradient the unscale would overflow is still judged as torch does
                        s = (g * 0).sum().to(_dt.float32)
                        acc = s if acc is None else acc + s
                        g.mul_(scale)
                if acc is not None:
                    flag.copy_(where(acc.isfinite(), flag, 1.0))
        return found.copies

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale, recording whether any holds an
        inf/NaN (optional: ``step`` does it when not done; call it to clip gradients)."""
        if not self._enabled:
            return
        scale, _ = self._check("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        with no_grad_ctx():
            inv_scale = scale.to(_dt.float64).reciprocal().to(_dt.float32)
            found_inf = full((), 0.0, dtype=_dt.float32, device=scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (unless ``unscale_`` ran) and run ``optimizer.step(*args, **kwargs)``
        unless a gradient holds an inf/NaN; returns what ``step`` returned (None when
        skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise RuntimeError("GradScaler.step: no inf checks were recorded for this "
                               "optimizer (none of its parameters has a gradient)")
        retval = None
        if not sum(float(v.item()) for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back the scale off if any step this iteration was skipped, grow it after
        ``growth_interval`` clean steps in a row; or set it to ``new_scale``."""
        if not self._enabled:
            return
        scale, tracker = self._check("update")
        with no_grad_ctx():
            if new_scale is not None:
                if isinstance(new_scale, Tensor):
                    if new_scale.numel() != 1 or new_scale.requires_grad:
                        raise ValueError("new_scale should be a float or a 1-element tensor "
                                         "with requires_grad=False.")
                    scale.copy_(new_scale.reshape(()).to(scale.device).to(_dt.float32))
                else:
                    scale.fill_(float(new_scale))
            else:
                infs = [f.to(scale.device) for s in self._per_optimizer_states.values()
                        for f in s["found_inf_per_device"].values()]
                if not infs:
                    raise RuntimeError("GradScaler.update: no inf checks were recorded prior "
                                       "to update (call scaler.step(optimizer) first)")
                found = infs[0]
                for f in infs[1:]:
                    found = found + f
                _update_scale_(scale, tracker, found, self._growth_factor,
                               self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = defaultdict(_fresh_state)

    # ------------------------------------------------------------- accessors
    def get_scale(self) -> float:
        """The current scale as a Python float (a host read), 1.0 when disabled."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None \
            else int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """torch's five entries (``scale``, ``growth_factor``, ``backoff_factor``,
        ``growth_interval``, ``_growth_tracker``); empty when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        missing = {"scale", "growth_factor", "backoff_factor", "growth_interval",
                   "_growth_tracker"} - set(state_dict)
        if missing:
            raise KeyError(f"GradScaler.load_state_dict: missing keys {sorted(missing)}")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(self._init_growth_tracker)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if any(s["stage"] is not OptState.READY
                   for s in self._per_optimizer_states.values()):
                raise RuntimeError("A GradScaler instance may only be pickled at the "
                                   "beginning of an iteration, or at the end after "
                                   "scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = state["_growth_tracker"] = None
        state["_per_optimizer_states"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._per_optimizer_states = defaultdict(_fresh_state)


def _update_scale_(scale: Tensor, tracker: Tensor, found_inf: Tensor, growth_factor: float,
                   backoff_factor: float, growth_interval: int) -> None:
    """torch's ``_amp_update_scale_`` on 0-d device tensors, in place."""
    inf = found_inf > 0
    succ = tracker + 1
    grow = (succ == growth_interval).logical_and(inf.logical_not())
    wide = scale.to(_dt.float64)
    grown = (wide * growth_factor).to(_dt.float32)
    backed = (wide * backoff_factor).to(_dt.float32)
    new = where(inf, backed, where(grow.logical_and(grown.isfinite()), grown, scale))
    scale.copy_(new)
    tracker.copy_(where(inf.logical_or(grow), 0, succ).to(_dt.int32))


def _have_device(device_type: str) -> bool:
    from ..core.device import devices
    if device_type == "cuda":  # the device `cuda` names (the accelerator under the alias)
        from ..cuda import is_available
        return is_available()
    try:
        return bool(devices(device_type))
    except Exception:  # noqa: BLE001 - an absent backend means no device
        return False
