"""torch's top-level spellings of ``nn.functional`` ops and of Tensor methods, bound onto the
torch face (:mod:`omnitensor.torch_face`) with torch's top-level signatures.

Three classes of name, each bound by one rule:

* ``torch.abs_(x)``, ``torch.clamp_(x, 0, 1)``...: torch's top-level in-place functions (and
  the few top-level spellings of Tensor methods, ``torch.detach``, ``torch.is_signed``) are
  the Tensor method of the same name, bound where omnitensor's Tensor has it;
* ``torch.conv2d``, ``torch.layer_norm``...: ``nn.functional`` ops whose top-level forms
  agree with F's positionally are F's own functions (``AGREEING``);
* ``torch.batch_norm``, ``torch.embedding``, the losses...: forms whose arguments differ (other
  order, ``weight`` first, integer ``reduction``, ``stride=[]``, always-returned indices) are
  written here, each mapping torch's aten arguments onto F's.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from .core.tensor import Tensor

#: torch's top-level in-place functions and top-level spellings of Tensor methods: each is
#: the Tensor method of the same name wherever omnitensor's Tensor has one
TENSOR_METHODS_AT_TOP = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_", "deg2rad_",
    "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_",
    "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_",
    "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "round_",
    "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_",
    "trunc_", "xlogy_", "detach", "get_device", "is_same_size", "is_signed", "adjoint",
    "is_conj", "is_neg", "is_inference", "is_distributed", "fix", "dist", "as_strided_",
    "unsafe_split_with_sizes")

#: nn.functional ops whose torch top-level forms agree with F's positionally
AGREEING = (
    "adaptive_avg_pool1d", "alpha_dropout", "bilinear", "celu", "celu_", "channel_shuffle",
    "native_channel_shuffle", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "cosine_similarity", "dropout",
    "feature_alpha_dropout", "group_norm", "hardshrink", "layer_norm", "pairwise_distance",
    "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu", "relu_", "rms_norm", "rrelu",
    "rrelu_", "selu", "selu_", "threshold", "threshold_")


def _F() -> Any:
    from .nn import functional
    return functional


def tensor_method_at_top(name: str) -> Callable[..., Any] | None:
    """``torch.<name>(input, *args)``: ``input.<name>(*args)``, refusing a non-tensor
    ``input`` as torch does; None when omnitensor's Tensor has no such method."""
    method = getattr(Tensor, name, None)
    if method is None:
        return None

    @functools.wraps(method)
    def top(input: Tensor, *args: Any, **kwargs: Any) -> Any:  # noqa: A002 - torch's name
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)
    top.__doc__ = f"torch's ``{name}(input, ...)``: ``input.{name}(...)``."
    return top


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction: Any) -> str:
    """aten's integer ``reduction`` (0 none, 1 mean, 2 sum) as F's string; strings pass."""
    if isinstance(reduction, str):
        return reduction
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction!r}")
    return _REDUCTIONS[reduction]


def _stride(stride: Any) -> Any:
    """aten's ``stride=[]`` (the kernel size) as F's None."""
    return None if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else stride


# ------------------------------------------------------------ normalization
def batch_norm(input: Tensor, weight: Any, bias: Any, running_mean: Any,  # noqa: A002
               running_var: Any, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool = True) -> Tensor:
    """torch's ``batch_norm(input, weight, bias, running_mean, running_var, training,
    momentum, eps, cudnn_enabled)`` (F's order differs: running stats first)."""
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training,
                           momentum, eps)


def instance_norm(input: Tensor, weight: Any, bias: Any, running_mean: Any,  # noqa: A002
                  running_var: Any, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool = True) -> Tensor:
    """torch's ``instance_norm`` (torch's top-level order, as :func:`batch_norm`)."""
    return _F().instance_norm(input, running_mean, running_var, weight, bias,
                              use_input_stats, momentum, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """torch's ``embedding(weight, indices, padding_idx=-1, ...)``: the weight first; a
    negative ``padding_idx`` means none."""
    return _F().embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                          scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


# ------------------------------------------------------------------- losses
def kl_div(input: Tensor, target: Tensor, reduction: Any = 1, *,  # noqa: A002
           log_target: bool = False) -> Tensor:
    """torch's ``kl_div`` with aten's integer ``reduction`` (1: the elementwise mean)."""
    return _F().kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,  # noqa: A002
                                     weight: Any = None, pos_weight: Any = None,
                                     reduction: Any = 1) -> Tensor:
    """torch's ``binary_cross_entropy_with_logits(input, target, weight, pos_weight,
    reduction)``."""
    return _F().binary_cross_entropy_with_logits(input, target, weight,
                                                 reduction=_reduction(reduction),
                                                 pos_weight=pos_weight)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor,
                          margin: float = 0.0, reduction: Any = 1) -> Tensor:
    """torch's ``cosine_embedding_loss`` with aten's integer ``reduction``."""
    return _F().cosine_embedding_loss(input1, input2, target, margin,
                                      reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,  # noqa: A002
                         reduction: Any = 1) -> Tensor:
    """torch's ``hinge_embedding_loss`` with aten's integer ``reduction``."""
    return _F().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor,
                        margin: float = 0.0, reduction: Any = 1) -> Tensor:
    """torch's ``margin_ranking_loss`` with aten's integer ``reduction``."""
    return _F().margin_ranking_loss(input1, input2, target, margin,
                                    reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool,  # noqa: A002
                     eps: float, reduction: Any) -> Tensor:
    """torch's ``poisson_nll_loss(input, target, log_input, full, eps, reduction)``."""
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps,
                                 reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                        swap: bool = False, reduction: Any = 1) -> Tensor:
    """torch's ``triplet_margin_loss`` with aten's integer ``reduction``."""
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    reduction=_reduction(reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: Any = 1, zero_infinity: bool = False) -> Tensor:
    """torch's ``ctc_loss`` with aten's integer ``reduction``."""
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                         _reduction(reduction), zero_infinity)


# ------------------------------------------------------------------ pooling
def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:  # noqa: A002
    """torch's ``adaptive_max_pool1d``: always ``(values, indices)``."""
    return _F().adaptive_max_pool1d(input, output_size, True)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """torch's ``avg_pool1d`` (``stride=[]``: the kernel size)."""
    return _F().avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                           count_include_pad)


def _max_pool(name: str, indices: bool) -> Callable[..., Any]:
    def pool(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
             dilation: Any = 1, ceil_mode: bool = False) -> Any:
        return getattr(_F(), name)(input, kernel_size, _stride(stride), padding, dilation,
                                   ceil_mode, indices)
    pool.__name__ = pool.__qualname__ = name + ("_with_indices" if indices else "")
    pool.__doc__ = (f"torch's ``{pool.__name__}`` (``stride=[]``: the kernel size)"
                    + ("; ``(values, indices)``." if indices else "."))
    return pool


max_pool1d = _max_pool("max_pool1d", False)
max_pool1d_with_indices = _max_pool("max_pool1d", True)
max_pool2d = _max_pool("max_pool2d", False)
max_pool3d = _max_pool("max_pool3d", False)


# ------------------------------------------------------------------ dropout
def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """torch's ``feature_dropout``: zeroes whole features (axis 1, over the axes after it)
    with probability ``p`` and scales the rest by ``1 / (1 - p)`` while ``train``."""
    if not train or p == 0:
        return input
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim < 2:
        raise ValueError(f"feature_dropout: expected a tensor of 2 or more dimensions, got "
                         f"{input.ndim}")
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    mask = _F().dropout(input.new_ones(shape), p, True)  # 0 or 1 / (1 - p)
    return input * mask


def native_dropout(input: Tensor, p: float, train: Any) -> tuple[Tensor, Tensor]:  # noqa: A002
    """torch's ``native_dropout``: ``(output, mask)``, the mask bool (True: kept); with
    ``train`` False the input (a copy) and an all-True mask."""
    if train is False:
        return input.clone(), input.new_ones(input.shape).to("bool")
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    kept = _F().dropout(input.new_ones(input.shape), p, True) != 0
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return input * kept.to(input.dtype) * scale, kept


def _inplace_dropout(name: str, outplace: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
        return input.copy_(outplace(input, p, train))
    dropout_.__name__ = dropout_.__qualname__ = name
    dropout_.__doc__ = f"torch's ``{name}``: ``{name[:-1]}`` written into ``input``."
    return dropout_


dropout_ = _inplace_dropout("dropout_", lambda x, p, t: _F().dropout(x, p, t))
alpha_dropout_ = _inplace_dropout("alpha_dropout_", lambda x, p, t: _F().alpha_dropout(x, p, t))
feature_dropout_ = _inplace_dropout("feature_dropout_", feature_dropout)
feature_alpha_dropout_ = _inplace_dropout(
    "feature_alpha_dropout_", lambda x, p, t: _F().feature_alpha_dropout(x, p, t))


# -------------------------------------------------------------- convolution
def convolution(input: Tensor, weight: Tensor, bias: Any, stride: Any,  # noqa: A002
                padding: Any, dilation: Any, transposed: bool, output_padding: Any,
                groups: int) -> Tensor:
    """torch's ``convolution``: ``conv{1,2,3}d`` or ``conv_transpose{1,2,3}d`` by the
    weight's dimensions and ``transposed``."""
    n = weight.ndim - 2
    if n not in (1, 2, 3):
        raise ValueError(f"convolution: expected a weight of 3 to 5 dimensions, got "
                         f"{weight.ndim}")
    F = _F()
    if transposed:
        return getattr(F, f"conv_transpose{n}d")(input, weight, bias, stride, padding,
                                                 output_padding, groups, dilation)
    return getattr(F, f"conv{n}d")(input, weight, bias, stride, padding, dilation, groups)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:  # noqa: A002
    """torch's ``conv_tbc``: a 1-d convolution of a (time, batch, channels) input with a
    (kernel, in, out) weight, padding ``pad`` on both sides of time."""
    if input.ndim != 3 or weight.ndim != 3:
        raise ValueError("conv_tbc: expected a 3-d input (time, batch, channels) and a 3-d "
                         "weight (kernel, in, out)")
    out = _F().conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad)
    return out.permute(2, 0, 1)


def affine_grid_generator(theta: Tensor, size: Any, align_corners: bool) -> Tensor:
    """torch's ``affine_grid_generator``: ``nn.functional.affine_grid``."""
    return _F().affine_grid(theta, list(size), align_corners)


_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDINGS = ("zeros", "border", "reflection")


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int,  # noqa: A002
                 padding_mode: int, align_corners: bool) -> Tensor:
    """torch's ``grid_sampler``: ``grid_sample`` with the modes as torch's enum values
    (interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2
    reflection)."""
    return _F().grid_sample(input, grid, _GRID_MODES[interpolation_mode],
                            _GRID_PADDINGS[padding_mode], align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int,  # noqa: A002
                    padding_mode: int, align_corners: bool) -> Tensor:
    """torch's ``grid_sampler_3d``: ``grid_sample`` of a volume ``(N, C, D, H, W)``, the
    modes as torch's enum values."""
    if input.ndim != 5 or grid.ndim != 5:
        raise RuntimeError(f"grid_sampler_3d(): expected 5D input and grid, but got input "
                           f"with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


# -------------------------------------------------------------------- cells
def _cell_gates(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Any,  # noqa: A002
                b_hh: Any) -> tuple[Tensor, Tensor]:
    gi = input.matmul(w_ih.t()) + (0 if b_ih is None else b_ih)
    gh = hx.matmul(w_hh.t()) + (0 if b_hh is None else b_hh)
    return gi, gh


def lstm_cell(input: Tensor, hx: Any, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
              b_ih: Any = None, b_hh: Any = None) -> tuple[Tensor, Tensor]:
    """torch's ``lstm_cell(input, (h, c), w_ih, w_hh, b_ih, b_hh)``: ``(h', c')``, gates in
    torch's order (input, forget, cell, output)."""
    h, c = hx
    gi, gh = _cell_gates(input, h, w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, -1)
    c2 = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c2.tanh(), c2


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
             b_ih: Any = None, b_hh: Any = None) -> Tensor:
    """torch's ``gru_cell``: gates in torch's order (reset, update, new)."""
    gi, gh = _cell_gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    ir, iz, in_ = gi.chunk(3, -1)
    hr, hz, hn = gh.chunk(3, -1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return (1 - z) * n + z * hx


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
                  b_ih: Any = None, b_hh: Any = None) -> Tensor:
    """torch's ``rnn_tanh_cell``: ``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    gi, gh = _cell_gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).tanh()


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
                  b_ih: Any = None, b_hh: Any = None) -> Tensor:
    """torch's ``rnn_relu_cell``: ``relu(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    gi, gh = _cell_gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).relu()


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float,  # noqa: A002
                      norm_type: float) -> Tensor:
    """torch's ``embedding_renorm_``: each row of ``input`` named in ``indices`` whose
    ``norm_type``-norm exceeds ``max_norm`` is scaled to norm ``max_norm`` (1e-7 below it,
    as torch), in place, outside autograd."""
    from .autograd import no_grad
    with no_grad():
        rows = indices.reshape(-1).unique()
        sel = input.index_select(0, rows)
        norms = sel.abs().pow(norm_type).sum(-1, keepdim=True).pow(1.0 / norm_type)
        scale = (max_norm / (norms + 1e-7)).clamp(max=1.0)
        input[rows] = sel * scale.where(norms > max_norm, scale.new_ones(()))
    return input


# --------------------------------------------------------------- bindings
SPECIAL = ("batch_norm", "instance_norm", "embedding", "kl_div",
           "binary_cross_entropy_with_logits", "cosine_embedding_loss",
           "hinge_embedding_loss", "margin_ranking_loss", "poisson_nll_loss",
           "triplet_margin_loss", "ctc_loss", "adaptive_max_pool1d", "avg_pool1d",
           "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool3d",
           "feature_dropout", "native_dropout", "dropout_", "alpha_dropout_",
           "feature_dropout_", "feature_alpha_dropout_", "convolution", "conv_tbc",
           "affine_grid_generator", "grid_sampler", "grid_sampler_3d", "lstm_cell", "gru_cell",
           "rnn_tanh_cell", "rnn_relu_cell", "embedding_renorm_")


def names() -> dict[str, Any]:
    """Every name this module gives the torch face: the Tensor methods at top, F's agreeing
    ops, and the forms written above."""
    from .nn import functional as F
    out: dict[str, Any] = {}
    for name in TENSOR_METHODS_AT_TOP:
        fn = tensor_method_at_top(name)
        if fn is not None:
            out[name] = fn
    out.update({name: getattr(F, name) for name in AGREEING})
    g = globals()
    out.update({name: g[name] for name in SPECIAL})
    from .nn.functional import batch_norm_kernels  # SyncBatchNorm's kernels: torch.* only
    out.update({name: getattr(batch_norm_kernels, name) for name in batch_norm_kernels.__all__})
    return out
