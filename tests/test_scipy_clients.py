"""SciPy on omnitensor tensors (``SCIPY_ARRAY_API=1``), on every device.

SciPy computes many functions with the array's own namespace, so the result stays on the
input's device. Where SciPy falls back to NumPy (p-values, ``dct``, ``convolve``,
``gaussian_filter``, ``vq``, ``block_diag``) it converts back with ``xp.asarray(result)``
and no ``device=``: the result lands on omnitensor's default device. The rule we document
is torch's: make the device the default for the block, ``with ot.device(d): ...``, and every
call below stays on ``d``. Each result is compared with SciPy on NumPy arrays in float64.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("scipy")

# SciPy reads SCIPY_ARRAY_API when it is first imported, so these checks run in a fresh
# interpreter (the rest of the suite may already have imported SciPy without it).
_PROBE = textwrap.dedent(r'''
    import json, os, sys
    os.environ["SCIPY_ARRAY_API"] = "1"
    import numpy as np
    import omnitensor as ot
    import scipy.special as sp, scipy.stats as st, scipy.fft as sfft, scipy.signal as sig
    import scipy.ndimage as ndi, scipy.cluster.vq as vq, scipy.linalg as sla
    import scipy.integrate as si

    rng = np.random.default_rng(0)
    A = rng.standard_normal((6, 5)); B = rng.standard_normal((6, 5)) + 0.3
    P = rng.random((6, 5)) + 0.1; v = rng.standard_normal(16); w = rng.standard_normal(5)
    CALLS = {
        "special.erf": lambda t: sp.erf(t(A)),
        "special.erfc": lambda t: sp.erfc(t(A)),
        "special.expit": lambda t: sp.expit(t(A)),
        "special.logit": lambda t: sp.logit(t(P / 2)),
        "special.xlogy": lambda t: sp.xlogy(t(P), t(P)),
        "special.entr": lambda t: sp.entr(t(P)),
        "special.rel_entr": lambda t: sp.rel_entr(t(P), t(P[::-1].copy())),
        "special.ndtr": lambda t: sp.ndtr(t(A)),
        "special.ndtri": lambda t: sp.ndtri(t(P / 2)),
        "special.log_ndtr": lambda t: sp.log_ndtr(t(A)),
        "special.gammaln": lambda t: sp.gammaln(t(P)),
        "special.i0": lambda t: sp.i0(t(A)),
        "special.erfinv": lambda t: sp.erfinv(t(P / 2)),
        "special.logsumexp": lambda t: sp.logsumexp(t(A), axis=1),
        "special.softmax": lambda t: sp.softmax(t(A), axis=1),
        "special.log_softmax": lambda t: sp.log_softmax(t(A), axis=1),
        "stats.ttest_ind": lambda t: st.ttest_ind(t(A), t(B), axis=0).statistic,
        "stats.ttest_ind.pvalue": lambda t: st.ttest_ind(t(A), t(B), axis=0).pvalue,
        "stats.pearsonr": lambda t: st.pearsonr(t(v), t(v[::-1] ** 2)).statistic,
        "stats.pearsonr.pvalue": lambda t: st.pearsonr(t(v), t(v[::-1] ** 2)).pvalue,
        "stats.zscore": lambda t: st.zscore(t(A), axis=0),
        "stats.moment": lambda t: st.moment(t(A), order=3, axis=0),
        "stats.skew": lambda t: st.skew(t(A), axis=0),
        "stats.kurtosis": lambda t: st.kurtosis(t(A), axis=0),
        "stats.entropy": lambda t: st.entropy(t(P), axis=0),
        "stats.variation": lambda t: st.variation(t(P), axis=0),
        "stats.sem": lambda t: st.sem(t(A), axis=0),
        "stats.gmean": lambda t: st.gmean(t(P), axis=0),
        "stats.hmean": lambda t: st.hmean(t(P), axis=0),
        "stats.pmean": lambda t: st.pmean(t(P), 2.0, axis=0),
        "fft.fft": lambda t: sfft.fft(t(v)).real,
        "fft.rfft": lambda t: sfft.rfft(t(v)).imag,
        "fft.dct": lambda t: sfft.dct(t(v)),
        "signal.convolve": lambda t: sig.convolve(t(v), t(w)),
        "signal.fftconvolve": lambda t: sig.fftconvolve(t(v), t(w)),
        "ndimage.gaussian_filter": lambda t: ndi.gaussian_filter(t(A), 1.0),
        "cluster.vq.vq": lambda t: vq.vq(t(A), t(A[:2].copy()))[1],
        "cluster.vq.whiten": lambda t: vq.whiten(t(A)),
        "linalg.block_diag": lambda t: sla.block_diag(t(A[:2, :2].copy()), t(B[:3, :3].copy())),
        "integrate.trapezoid": lambda t: si.trapezoid(t(A), axis=0),
        "integrate.cumulative_trapezoid": lambda t: si.cumulative_trapezoid(t(A), axis=0),
    }
    dev = sys.argv[1]
    out = {}
    for name, call in CALLS.items():
        try:
            ref = np.asarray(call(lambda a: a), dtype=np.float64)
            with ot.device(dev):
                r = call(lambda a: ot.asarray(a, device=dev))
            err = float(np.max(np.abs(r.cpu().numpy() - ref) / np.maximum(np.abs(ref), 1e-300))) \
                if ref.size else 0.0
            out[name] = {"device": str(r.device), "relerr": err}
        except Exception as e:  # reported to the test, which fails on it
            out[name] = {"error": f"{type(e).__name__}: {e}"}
    print(json.dumps(out))
''')


@pytest.fixture(scope="module")
def scipy_results(request):
    cache: dict = {}

    def get(dev: str) -> dict:
        if dev not in cache:
            env = dict(os.environ, SCIPY_ARRAY_API="1")
            p = subprocess.run([sys.executable, "-c", _PROBE, dev], capture_output=True,
                               text=True, timeout=600, env=env)
            assert p.returncode == 0, p.stderr[-3000:]
            import json
            cache[dev] = json.loads(p.stdout.strip().splitlines()[-1])
        return cache[dev]
    return get


def test_scipy_calls_stay_on_device_and_match_numpy(device, scipy_results):
    import omnitensor as ot
    dev = str(ot.device(device))
    float64 = ot.device(dev).supports_dtype("float64")
    res = scipy_results(dev)
    assert len(res) == 41
    bad = {k: v for k, v in res.items() if "error" in v}
    assert not bad, bad
    moved = {k: v["device"] for k, v in res.items() if v["device"] != dev}
    assert not moved, f"results left {dev}: {moved}"
    tol = 1e-9 if float64 else 1e-4
    wrong = {k: v["relerr"] for k, v in res.items() if not v["relerr"] <= tol}
    assert not wrong, wrong
    assert np.isfinite([v["relerr"] for v in res.values()]).all()
