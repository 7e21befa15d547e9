"""Random numbers that are the same on every backend for the same seed.

A :class:`Generator` is a (seed, counter) pair kept on the host; each draw asks the device
for Philox-4x32-10 words (``backend.random_bits``) at the current counter and advances it.
Words become floats and integers with exact integer arithmetic, so ``manual_seed(0);
rand(5)`` gives bit-identical numbers on cpu, opencl, sycl and cuda; ``randn`` (and
``normal``, ``init.normal_``) apply Box-Muller to the same words on the host, so they are
bit-identical too.
"""
from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from ...errors import ShapeError
from .. import capture_hooks
from .. import dtypes as _dt
from ..shape_util import as_shape, prod
from ..tensor import Tensor, _make
from .creation import _checked, resolve_device, tensor
from .. import forward_ad
from ..graph import no_grad_ctx
from .sorting import argsort, searchsorted

_DEFAULT_SEED = 67280421310721  # torch's default initial seed


class Generator:
    """A counter-based random generator (torch's ``Generator`` API)."""

    def __init__(self, device: Any = "cpu") -> None:
        self.device = device
        self._lock = threading.Lock()
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed: int) -> "Generator":
        seed = int(seed)
        if seed < 0:
            seed &= (1 << 64) - 1
        self._seed = seed
        self._counter = 0
        return self

    def seed(self) -> int:
        s = int.from_bytes(np.random.default_rng().bytes(8), "little") >> 1
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        return tensor([self._seed, self._counter], dtype=_dt.uint64)

    def set_state(self, state: Any) -> "Generator":
        seed, counter = (int(v) for v in (state.tolist() if hasattr(state, "tolist")
                                          else state))
        self._seed, self._counter = seed, counter
        return self

    def _take(self, n_words: int) -> tuple[tuple[int, int], int]:
        """Reserve ``n_words`` words: the key and the first block counter."""
        with self._lock:
            start = self._counter
            self._counter += (n_words + 3) // 4
        key = (self._seed & 0xFFFFFFFF, (self._seed >> 32) & 0xFFFFFFFF)
        return key, start


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (every device draws from it)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(state: Any) -> None:
    default_generator.set_state(state)


def _bits(shape: tuple, dev: Any, gen: Generator | None) -> Tensor:
    g = gen or default_generator
    n = prod(shape)
    key, counter = g._take(n)
    capture_hooks.random_draw(g)   # a replay draws again from g (compile)
    data = dev.backend.random_bits(shape, key, counter, dev.index)
    return _make(data, dev, _dt.uint32)


def _uniform01(shape: tuple, d: _dt.DType, dev: Any, gen: Generator | None) -> Tensor:
    """Uniform [0, 1) with the dtype's full mantissa, exactly representable."""
    if d is _dt.float64:
        w = _bits(shape + (2,), dev, gen).to(_dt.uint64)
        hi = w[..., 0] >> 5
        lo = w[..., 1] >> 6
        return ((hi * 67108864 + lo).to(_dt.float64) * (1.0 / 9007199254740992.0))
    if d is _dt.float16:
        return (_bits(shape, dev, gen) >> 21).to(_dt.float32).to(_dt.float16) * (1.0 / 2048)
    if d is _dt.bfloat16:  # 8 significant bits
        return (_bits(shape, dev, gen) >> 24).to(_dt.float32).to(_dt.bfloat16) * (1.0 / 256)
    return (_bits(shape, dev, gen) >> 8).to(_dt.float32) * (1.0 / 16777216.0)


def _float_dtype(dtype: Any) -> _dt.DType:
    d = _dt.get_default_dtype() if dtype is None else _dt.as_dtype(dtype)
    if d.kind not in "fc":
        raise _dt.DTypeError(f"expected a floating dtype for random floats, got {d.name}")
    return d


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    out = t.detach()
    if requires_grad:
        out.requires_grad_(True)
    return out


def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Uniform samples from [0, 1)."""
    shape = as_shape(size)
    d = _float_dtype(dtype)
    dev = resolve_device(device)
    _checked(dev, d)
    if d.kind == "c":
        r = _uniform01(shape, d.to_real(), dev, generator)
        i = _uniform01(shape, d.to_real(), dev, generator)
        return _finish(r + i * 1j, requires_grad)
    return _finish(_uniform01(shape, d, dev, generator), requires_grad)


def randn(*size: Any, generator: Generator | None = None, dtype: Any = None,
          device: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples (Box-Muller), bit-identical on every device for a seed.

    The uniform words come from the same Philox stream as ``rand``; the transform runs on
    the host in float64 and is rounded once to the dtype, because each device's own
    ``log``/``cos`` differ by an ulp or two (OpenCL allows 3-4 ulp). The cost is one
    host-to-device copy of the result, which initialisation and sampling can afford."""
    shape = as_shape(size)
    d = _float_dtype(dtype)
    dev = resolve_device(device)
    _checked(dev, d)
    real = d.to_real()
    work = real if real is not _dt.float16 and real.compute is real else _dt.float32
    capture_hooks.host_compute("randn (its Box-Muller transform runs on the host)")
    host = resolve_device("cpu")
    u1 = _uniform01(shape, work, host, generator)._data.astype(np.float64)
    u2 = _uniform01(shape, work, host, generator)._data.astype(np.float64)
    z_host = (np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(u2 * (2 * math.pi))).astype(work.np)
    z = _make(dev.backend.from_numpy(z_host, dev.index) if dev is not host else z_host,
              dev, work)
    if d.kind == "c":
        zi = randn(*shape, generator=generator, dtype=real, device=dev)
        z = (z + zi * 1j) * (1 / math.sqrt(2))
    return _finish(z if z._dtype is d else z.to(d), requires_grad)


def randint(low: int, high: Any = None, size: Any = None, *, generator: Generator | None = None,
            dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Integers uniform in [low, high); ``randint(high, size)`` starts at 0 (torch)."""
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    shape = as_shape((size,), op="randint", sequence=True)  # torch: randint(0, 3, 5) is refused
    span = int(high) - int(low)
    if span <= 0:
        raise ValueError(f"randint: expected low < high, got low={low}, high={high}")
    d = _dt.int64 if dtype is None else _dt.as_dtype(dtype)
    dev = resolve_device(device)
    if span <= 1 << 32:
        # Lemire's multiply-shift: exact integer arithmetic, identical on every backend
        w = _bits(shape, dev, generator).to(_dt.uint64)
        v = (w * span) >> 32
    else:
        w = _bits(shape + (2,), dev, generator).to(_dt.uint64)
        v = ((w[..., 0] << 32) | w[..., 1]) % span
    out = v.to(_dt.int64) + int(low)
    return out if out._dtype is d else out.to(d)


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             device: Any = None) -> Tensor:
    """A random permutation of ``0..n-1``."""
    dev = resolve_device(device)
    keys = _bits((n,), dev, generator)
    out = argsort(keys, 0, stable=True)
    return out if dtype is None else out.to(dtype)


def rand_like(x: Tensor, *, dtype: Any = None, device: Any = None,
              generator: Generator | None = None) -> Tensor:
    return rand(x.shape, dtype=dtype or x.dtype, device=device or x.device, generator=generator)


def randn_like(x: Tensor, *, dtype: Any = None, device: Any = None,
               generator: Generator | None = None) -> Tensor:
    return randn(x.shape, dtype=dtype or x.dtype, device=device or x.device,
                 generator=generator)


def randint_like(x: Tensor, low: int, high: Any = None, *, dtype: Any = None,
                 device: Any = None) -> Tensor:
    return randint(low, high, x.shape, dtype=dtype or x.dtype, device=device or x.device)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *,
           generator: Generator | None = None, dtype: Any = None, device: Any = None,
           layout: Any = None, pin_memory: bool = False, requires_grad: bool = False
           ) -> Tensor:
    """Normal samples with tensor or scalar ``mean``/``std`` (``std >= 0``, as torch);
    ``layout`` (strided only), ``pin_memory`` and ``requires_grad`` as torch's factories."""
    if requires_grad:
        return _finish(normal(mean, std, size, generator=generator, dtype=dtype,
                              device=device), True)
    _check_std(std, "normal")
    if size is None:
        ref = mean if isinstance(mean, Tensor) else std
        if not isinstance(ref, Tensor):
            raise TypeError("normal: give size= when mean and std are numbers")
        size, device, dtype = ref.shape, ref.device, dtype or ref.dtype
    z = randn(as_shape((size,), op="normal", sequence=True), generator=generator,
              dtype=dtype, device=device)
    return z * std + mean


def _check_std(std: Any, fn: str) -> None:
    """torch's rule: a negative (or NaN) standard deviation is an error, not a sign flip of
    the samples. A tensor ``std`` costs one device-to-host read, as in torch."""
    if isinstance(std, Tensor):
        if std.numel() and not bool((std >= 0).all()):
            raise ValueError(f"{fn} expects all elements of std >= 0.0")
    elif not float(std) >= 0:
        raise ValueError(f"{fn} expects std >= 0.0, but found std {std}")


def bernoulli(p: Tensor, *, generator: Generator | None = None) -> Tensor:
    """1 with probability ``p`` (elementwise), in p's dtype."""
    u = rand(p.shape, dtype=p.dtype if p.dtype.kind == "f" else None, device=p.device,
             generator=generator)
    return (u < p).to(p.dtype)


def multinomial(probs: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """Sample category indices from (unnormalised) probabilities, rows independent."""
    if probs.ndim not in (1, 2):
        raise ShapeError(f"multinomial: prob_dist must be 1 or 2 dim, got {probs.ndim}")
    p = probs if probs.ndim == 2 else probs.reshape(1, -1)
    with no_grad_ctx():  # torch's checks of the distribution (one device-to-host read)
        if p.numel() and not bool(((p >= 0) & (p < float("inf"))).all().item()):
            raise ValueError("multinomial: probability tensor contains either `inf`, `nan` "
                             "or element < 0")
        if p.numel() and not bool((p.sum(dim=1) > 0).all().item()):
            raise ValueError("multinomial: invalid multinomial distribution (sum of "
                             "probabilities <= 0)")
    if not replacement and num_samples > p.shape[1]:
        raise ValueError("multinomial: cannot sample more than the number of categories "
                         "without replacement")
    if replacement:
        cdf = p.cumsum(1)
        cdf = cdf / cdf[:, -1:]
        u = rand((p.shape[0], num_samples), dtype=p.dtype, device=p.device, generator=generator)
        out = searchsorted(cdf.contiguous(), u.contiguous(), side="right").clamp(max=p.shape[1] - 1)
    else:
        # Gumbel-top-k: argsort of log(p) - log(-log(u))
        u = rand(p.shape, dtype=p.dtype, device=p.device, generator=generator)
        keys = p.log() - (-(u.clamp(min=1e-20)).log()).log()
        out = argsort(keys, 1, descending=True)[:, :num_samples]
    return out if probs.ndim == 2 else out.reshape(-1)


# ------------------------------------------------------------------ in-place fills
def uniform_(x: Tensor, a: float = 0.0, b: float = 1.0, *,
             generator: Generator | None = None) -> Tensor:
    if a > b:
        raise ValueError(f"uniform_ expects to return a [from, to) range, but found "
                         f"from={a} > to={b}")
    u = rand(x.shape, dtype=x.dtype, device=x.device, generator=generator)
    return _fill_(x, u * (b - a) + a)


def normal_(x: Tensor, mean: float = 0.0, std: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    _check_std(std, "normal_")
    z = randn(x.shape, dtype=x.dtype, device=x.device, generator=generator)
    return _fill_(x, z * std + mean)


def bernoulli_(x: Tensor, p: float = 0.5, *, generator: Generator | None = None) -> Tensor:
    u = rand(x.shape, device=x.device, generator=generator)
    return _fill_(x, (u < p).to(x.dtype))


def random_(x: Tensor, low: int = 0, high: int | None = None, *,
            generator: Generator | None = None) -> Tensor:
    if high is None:
        high, low = (1 << 24 if x.dtype.kind == "f" else 1 << 31), low
    return _fill_(x, randint(low, high, x.shape, device=x.device, generator=generator).to(x.dtype))


def exponential_(x: Tensor, lambd: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    if not lambd > 0:
        raise ValueError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    u = rand(x.shape, dtype=x.dtype, device=x.device, generator=generator)
    return _fill_(x, -(1 - u).log() / lambd)


def _fill_(x: Tensor, value: Tensor) -> Tensor:
    with no_grad_ctx():
        be = x._device.backend
        data = value._data if value._dtype is x._dtype else be.astype(value._data, x._dtype.np)
        be.assign(x._data, data)
        x._bump_version()
    if x.__dict__.get("_fw"):  # new values that depend on nothing: zero tangents (torch)
        forward_ad.after_overwrite(x)
    return x
