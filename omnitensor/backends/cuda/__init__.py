"""The CUDA backend (device type ``cuda``), on CuPy (also its ROCm build): ``backend`` (the
adapter, ``CupyBackend``, over the shared ``namespace_backend``), ``fused`` (the
``fused_kernels`` hook: NVRTC builds of fused kernels), ``kernels`` (NVRTC builds of the
generated eager kernels), ``profiling`` (CUDA-event device time for ``omnitensor.profiler``).
Importing this package imports nothing; CuPy loads with ``backend``, the first time a
``cuda`` device is used."""
