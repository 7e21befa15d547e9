"""``omnitensor.nn.utils.stateless``: torch's older path of ``functional_call`` (the one
implementation is :func:`omnitensor.func.functional_call`)."""
from ...func import functional_call

__all__ = ["functional_call"]
