"""Compile tests build fused kernels before the first replay, so plans are deterministic;
``test_background_fusion.py`` turns the default tiered mode back on where it tests it."""
import pytest

from omnitensor import compiler


@pytest.fixture(autouse=True)
def fused_plans_before_first_replay():
    old = compiler.config.fuse_in_background
    compiler.config.fuse_in_background = False
    yield
    compiler.config.fuse_in_background = old
