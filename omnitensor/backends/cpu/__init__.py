"""The cpu backend (device type ``cpu``), on NumPy: ``backend`` (the adapter,
``NumpyBackend``, over the shared ``namespace_backend``), ``threads`` (intra-op threads for
large elementwise calls; ``omnitensor.set_num_threads``), ``fused`` (the ``fused_kernels``
hook: fused loop nests compiled by numba). Importing this package imports nothing; the
registry loads ``backend`` the first time a ``cpu`` device is used."""
