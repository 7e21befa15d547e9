"""Runnable jobs shipped with the package (``omnitensor train-digits``); the scripts in
``examples/`` call them."""
