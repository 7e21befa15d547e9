"""``torch.version`` and ``torch.__version__`` under the torch alias.

omnitensor follows the API of one torch release, the one its tests compare against (the
``torch`` pin of the ``test`` extra). Libraries check ``torch.__version__`` against the
features they need (``>= "1.13"``, ``packaging.version.parse(...)``), so the torch face
reports that release, with omnitensor's own version as the local label:
``2.13.0+omnitensor.0.1.0``. ``cuda`` and ``hip`` are None: no CUDA toolkit is linked (the
``cuda`` device name still works: see :mod:`omnitensor.core.accelerators`).
"""
from __future__ import annotations

import re
from typing import Any

__all__ = ["TorchVersion", "__version__", "torch_api_version", "cuda", "hip", "debug",
           "git_version"]

#: the torch release whose API omnitensor follows and is tested against
torch_api_version = "2.13.0"


class TorchVersion(str):
    """A version string that compares as a version (``"2.13.0" > "2.9"``) with strings,
    tuples and other versions, as torch's ``torch.torch_version.TorchVersion``."""

    @staticmethod
    def _key(v: Any) -> tuple:
        if isinstance(v, (tuple, list)):
            parts = tuple(int(p) for p in v)
        else:
            release = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(v))
            if release is None:
                raise TypeError(f"cannot compare a version with {v!r}")
            parts = tuple(int(p) for p in release.group(1).split("."))
        while len(parts) > 1 and parts[-1] == 0:
            parts = parts[:-1]
        return parts

    def _cmp(self, other: Any) -> int:
        a, b = self._key(self), self._key(other)
        return (a > b) - (a < b)

    def __lt__(self, other: Any) -> bool:
        return self._cmp(other) < 0

    def __le__(self, other: Any) -> bool:
        return self._cmp(other) <= 0

    def __gt__(self, other: Any) -> bool:
        return self._cmp(other) > 0

    def __ge__(self, other: Any) -> bool:
        return self._cmp(other) >= 0

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, str) and str.__eq__(self, other):
            return True
        try:
            return self._cmp(other) == 0
        except (TypeError, ValueError):
            return False

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__


def _own_version() -> str:
    from . import __version__ as own
    return own


__version__ = TorchVersion(f"{torch_api_version}+omnitensor.{_own_version()}")
cuda: str | None = None
hip: str | None = None
debug = False
git_version = "omnitensor"
