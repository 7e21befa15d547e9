"""``python -m omnitensor info`` (same as the ``omnitensor`` command)."""
import sys

from .cli import main

sys.exit(main())
