"""Differential conformance against PyTorch's own op database (``op_db``).

PyTorch describes ~700 ops as OpInfos with sample inputs. For each OpInfo with an omnitensor
counterpart (found by :func:`resolve`), up to 8 samples per dtype run through torch and
omnitensor on a device and are compared: values (torch.testing's tolerances), dtypes,
shapes, errors (torch's error inputs must raise here too) and gradients (the
vector-Jacobian product for a random cotangent).

One op, each sample's diff::

    python -m omnitensor.conformance.torch_opinfo --op addmm --device cpu

A device's figures into a certificate: ``omnitensor conformance --torch --device opencl:0
--json cert.json``. The test suite (``tests/torch_opinfo``) runs the same driver. torch and
its op database are imported only when a check runs.
"""
from .driver import KINDS, CheckResult, SampleResult, check
from .oracle import (MAX_SAMPLES, TorchUnavailable, forward_dtypes, grad_dtype, op_db,
                     opinfo_key, select)
from .report import (as_json, evaluate, figures, gap_key, gap_lines, plan, print_check,
                     read_gaps, reason, run_checks, table, write_summary)
from .resolve import counterpart_paths, face, missing_paths, resolve

__all__ = ["KINDS", "MAX_SAMPLES", "CheckResult", "SampleResult", "TorchUnavailable",
           "as_json", "check", "evaluate", "print_check", "counterpart_paths", "face", "figures", "forward_dtypes", "gap_key",
           "gap_lines", "grad_dtype", "missing_paths", "op_db", "opinfo_key", "plan", "read_gaps",
           "reason", "resolve", "run_checks", "select", "table", "write_summary"]
