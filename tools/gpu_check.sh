#!/usr/bin/env bash
# GPU verification of the cuda backend, for a machine with an NVIDIA (or ROCm) GPU and CuPy:
# the whole suite on cuda:0, the CUDA benchmarks and an NCCL all_reduce. Writes results
# under $OUT (or ./gpu_results). Run from the repository root; needs no install
# (PYTHONPATH), only CuPy, NumPy and pytest (present on the lent H200 image).
set -u
OUT=${OUT:-gpu_results}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  $PY -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__)"
  $PY -m omnitensor info; } 2>&1 | tee "$OUT/env.txt"
OMNITENSOR_TEST_DEVICES=cuda:0 timeout "${SUITE_TIMEOUT:-360}" $PY -m pytest -q -p no:cacheprovider \
  tests --ignore=tests/dist -x --maxfail=30 2>&1 | tee "$OUT/tests.txt" | tail -n 40
timeout 180 $PY benchmarks/cuda_backend.py ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.txt"
if [ -f tools/gpu_check_nccl.py ]; then
  timeout 120 $PY tools/gpu_check_nccl.py 2>&1 | tee "$OUT/nccl.txt"
fi
