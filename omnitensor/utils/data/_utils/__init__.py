"""``omnitensor.utils.data._utils``: torch's private path that some programs import
(``from torch.utils.data._utils.collate import default_collate``)."""
from . import collate, worker
