"""Transforms (torch.distributions.transforms): maps with their inverse and the log
absolute determinant of their Jacobian, for TransformedDistribution and the constraint
registry. ``_base`` holds the protocol and the combinators, ``_elementwise`` the monotone
elementwise maps, ``_structured`` the maps onto the simplex and onto matrix sets."""
from ._base import (CatTransform, ComposeTransform, CumulativeDistributionTransform,
                    IndependentTransform, ReshapeTransform, StackTransform, Transform,
                    _InverseTransform, identity_transform)
from ._elementwise import (AbsTransform, AffineTransform, ExpTransform, PowerTransform,
                           SigmoidTransform, SoftplusTransform, TanhTransform)
from ._structured import (CorrCholeskyTransform, LowerCholeskyTransform,
                          PositiveDefiniteTransform, SoftmaxTransform, StickBreakingTransform)
from ..utils import _clipped_sigmoid

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
           "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform",
           "Transform", "identity_transform"]
