"""The fuzz suite: seeded, hypothesis-drawn bad (and good) calls over the public API on
every device, each in a worker subprocess under a timeout, judged against torch (see
``runner.py``). CI runs a bounded slice per device; ``-m slow`` runs thousands.
``OMNITENSOR_FUZZ_CASES`` / ``OMNITENSOR_FUZZ_SEED`` change the slice."""
from __future__ import annotations

import io
import os
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
pytest.importorskip("hypothesis")

from cases import draw_cases
from program_files import mutated_jit_programs, mutated_onnx_models
from runner import run_cases, summary

CI_CASES = int(os.environ.get("OMNITENSOR_FUZZ_CASES", "120"))
SEED = int(os.environ.get("OMNITENSOR_FUZZ_SEED", "21"))


def _check(device: str, cases: list) -> None:
    records = run_cases(device, cases)
    counts = summary(records)
    print(f"\nfuzz {device}: {len(records)} cases: {counts}")
    bad = [r for r in records if r["kind"] != "pass" and not r["gap"]]
    assert len(records) == len(cases)
    assert not bad, f"{len(bad)} of {len(records)} cases failed on {device} ({counts}):\n" + \
        "\n".join(f"  [{r['kind']}] {r['case']['op']}{tuple(r['case']['args'])}: {r['why']}"
                  for r in bad[:40])


def test_fuzz_api_slice(device):
    _check(device, draw_cases(CI_CASES, SEED))


@pytest.mark.slow
def test_fuzz_api_thousands(device):
    _check(device, draw_cases(int(os.environ.get("OMNITENSOR_FUZZ_SLOW_CASES", "2000")),
                              SEED + 1))


def _mutated_checkpoints(n: int, seed: int, fmt: str = "torch") -> list[dict]:
    import omnitensor as ot
    buf = io.BytesIO()
    ot.save({"model": {"w": ot.randn(4, 3), "b": ot.zeros(3, dtype=ot.int64)},
             "step": 7, "names": ["a", "b"], "lr": 0.1}, buf, format=fmt)
    good = buf.getvalue()
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        data = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            how = rng.choice(["flip", "flip", "truncate", "insert", "digit", "length"])
            pos = rng.randrange(len(data)) if data else 0
            if how == "flip" and data:
                data[pos] = rng.randrange(256)
            elif how == "truncate":
                del data[pos:]
            elif how == "insert":
                data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
            elif how == "digit":  # numbers in the JSON header: shapes, offsets, lengths
                digits = [i for i, c in enumerate(data[:600]) if 48 <= c <= 57]
                if digits:
                    data[rng.choice(digits)] = rng.choice(b"0123456789")
            elif how == "length" and len(data) >= 8:
                data[:8] = rng.randrange(1 << 40).to_bytes(8, "little")
        out.append({"op": "ckpt_load", "seed": 0, "args": [bytes(data).hex()]})
    return out


def test_fuzz_mutated_checkpoints(device):
    # decoding is device-independent; restoring onto the device is exercised by cpu
    if device != "cpu":
        pytest.skip("checkpoint decoding runs once, on cpu")
    # torch's zip format (the default) and omnitensor's safetensors format (JSON header)
    _check(device, _mutated_checkpoints(75, SEED) +
           _mutated_checkpoints(75, SEED, "safetensors"))


@pytest.mark.slow
def test_fuzz_mutated_checkpoints_thousands(device):
    if device != "cpu":
        pytest.skip("checkpoint decoding runs once, on cpu")
    _check(device, _mutated_checkpoints(1000, SEED + 1) +
           _mutated_checkpoints(1000, SEED + 1, "safetensors"))


def test_fuzz_mutated_programs(device):
    # a jit program and an ONNX model changed structurally, loaded and run on the device:
    # a clear error or a result, never a crash, hang, heap read or unclear internal error
    pytest.importorskip("onnx")
    _check(device, mutated_jit_programs(60, SEED) + mutated_onnx_models(40, SEED))


@pytest.mark.slow
def test_fuzz_mutated_programs_thousands(device):
    pytest.importorskip("onnx")
    _check(device, mutated_jit_programs(1000, SEED + 1) + mutated_onnx_models(1000, SEED + 1))
