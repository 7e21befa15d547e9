"""Train an MLP and a small CNN on scikit-learn's digits on every available device (the
README's main job). The code lives in ``omnitensor/demos/train_digits.py`` so that the
installed ``omnitensor train-digits`` command runs it from anywhere.

    python examples/train_digits.py [--device opencl:0] [--help]
"""
import sys

from omnitensor.demos.train_digits import main

if __name__ == "__main__":
    sys.exit(main())
