"""The implementations behind :mod:`omnitensor.special` (torch.special), one module per
family, each written once from Tensor ops so it runs on every device:

* :mod:`.bessel`: J0, J1, Y0, Y1, Airy Ai, spherical j0
* :mod:`.modified_bessel`: I0, I1 (and their scaled forms), K0, K1 (and scaled)
* :mod:`.polynomials`: Chebyshev T/U/V/W (and shifted), Hermite H/He, Laguerre, Legendre
* :mod:`.gamma`: log-gamma, digamma, trigamma, polygamma, Hurwitz zeta
* :mod:`.incomplete_gamma`: the regularised incomplete gamma functions
* :mod:`.error_functions`: erfcx, erfinv, ndtr, ndtri, log_ndtr
* :mod:`._coefficients`: the Cephes tables torch evaluates (data)

``omnitensor.special`` is the public face; these modules are not.
"""
