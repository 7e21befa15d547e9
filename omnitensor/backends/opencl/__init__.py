"""The OpenCL backend (device type ``opencl``), on PyOpenCL.

Importing this package imports PyOpenCL; ``import omnitensor`` never does (the registry
imports it the first time an ``opencl`` device is used). Devices are every OpenCL device of
every platform: ``opencl:i`` is the i-th device when platforms are taken in
``pyopencl.get_platforms()`` order and each platform's devices in ``get_devices()`` order.
With ``pip install pocl-binary-distribution`` a CPU device is always available.
"""
from __future__ import annotations

from .array import CLArray
from .backend import OpenCLBackend

__all__ = ["OpenCLBackend", "CLArray"]
