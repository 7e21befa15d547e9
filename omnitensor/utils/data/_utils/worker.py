"""``_utils.worker``: ``get_worker_info`` and ``WorkerInfo`` (from
:mod:`omnitensor.data._worker`)."""
from ....data._worker import WorkerInfo, get_worker_info

__all__ = ["WorkerInfo", "get_worker_info"]
