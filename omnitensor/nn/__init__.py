"""``omnitensor.nn``: modules, losses, init and functional ops (torch's nn)."""
from . import functional  # noqa: F401
