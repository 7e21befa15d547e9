"""A real Array API client: scikit-learn's array-API dispatch fitting PCA and LDA on
omnitensor tensors, on every device, matching the NumPy result. Runs in a subprocess
because SCIPY_ARRAY_API must be set before SciPy is first imported."""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("sklearn")

SCRIPT = r"""
import json, sys
import numpy as np, sklearn
from sklearn.datasets import load_iris
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA
import omnitensor as ot
dev = sys.argv[1]
X, y = load_iris(return_X_y=True)
X = X.astype(np.float32)
ref_pca = PCA(n_components=2, svd_solver="full").fit(X)
ref_lda = LDA().fit(X, y)
sklearn.set_config(array_api_dispatch=True)
Xt, yt = ot.tensor(X, device=dev), ot.tensor(y, device=dev)
pca = PCA(n_components=2, svd_solver="full").fit(Xt)
lda = LDA().fit(Xt, yt)
pred = lda.predict(Xt)
print(json.dumps({
    "type": type(pca.components_).__name__, "device": str(pca.components_.device),
    "components_close": bool(np.allclose(np.abs(pca.components_.cpu().numpy()),
                                          np.abs(ref_pca.components_), atol=1e-4)),
    "ratio_close": bool(np.allclose(pca.explained_variance_ratio_.cpu().numpy(),
                                     ref_pca.explained_variance_ratio_, atol=1e-5)),
    "pred_device": str(pred.device),
    "pred_equal": bool((pred.cpu().numpy() == ref_lda.predict(X)).all()),
}))
"""


def test_sklearn_pca_and_lda_on_device(device):
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    out = subprocess.run([sys.executable, "-c", SCRIPT, device], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["type"] == "Tensor" and r["device"] == str(r["pred_device"])
    assert r["components_close"] and r["ratio_close"] and r["pred_equal"], r
