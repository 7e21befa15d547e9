"""``omnitensor.distributions``: torch.distributions' core families, written with Tensor ops
so they sample, score and differentiate on every device.

Normal, Uniform, Bernoulli, Categorical, Gamma, Beta, MultivariateNormal and Independent, with
``sample``/``rsample``/``log_prob``/``entropy``/``mean``/``variance``/``stddev``, torch's
``validate_args`` (on by default), constraints, and ``kl_divergence`` with the pairwise
``register_kl`` registry. Reparameterised sampling (``rsample``; gradients flow to the
parameters): Normal, Uniform, MultivariateNormal (and Independent of them). Gamma and Beta
draw with ``sample`` (Marsaglia-Tsang) but have ``has_rsample = False``: their
reparameterised gradient needs implicit differentiation that is not implemented, and
``rsample`` says so rather than returning samples without correct gradients.
"""
from . import constraints
from .continuous import Beta, Gamma, Normal, Uniform
from .discrete import Bernoulli, Categorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .multivariate import Independent, MultivariateNormal

__all__ = ["Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "Gamma", "Beta",
           "MultivariateNormal", "Independent", "kl_divergence", "register_kl", "constraints"]
