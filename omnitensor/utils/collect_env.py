"""``omnitensor.utils.collect_env``: torch's environment report (``python -m
omnitensor.utils.collect_env``) for bug reports: the platform, Python, omnitensor and the
backends, versions and devices it finds (``omnitensor info``'s report)."""
from __future__ import annotations

import platform
import sys
from typing import NamedTuple

__all__ = ["SystemEnv", "get_env_info", "get_pretty_env_info", "main"]


class SystemEnv(NamedTuple):
    omnitensor_version: str
    torch_api_version: str
    python_version: str
    python_platform: str
    os: str
    backends: str


def get_env_info() -> SystemEnv:
    """What the report holds, as fields."""
    import omnitensor
    from ..cli import info_report
    from ..version import torch_api_version
    return SystemEnv(omnitensor_version=omnitensor.__version__,
                     torch_api_version=str(torch_api_version),
                     python_version=f"{sys.version.split()[0]} ({sys.maxsize.bit_length() + 1}"
                                    f"-bit runtime)",
                     python_platform=platform.platform(), os=platform.system(),
                     backends=info_report())


def get_pretty_env_info() -> str:
    """The report as text."""
    e = get_env_info()
    return (f"omnitensor version: {e.omnitensor_version}\n"
            f"torch API level: {e.torch_api_version}\n"
            f"Python version: {e.python_version}\n"
            f"Python platform: {e.python_platform}\n"
            f"OS: {e.os}\n\n"
            f"{e.backends}")


def main() -> None:
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
