"""warm_up: the oracles' kernels compiled in one known place, with a log line while it happens;
``ssvm warmup``; and the compile-time script's smoke test."""

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from ssvm.losses import warm_up
from ssvm.losses import warmup as warmup_module

ROOT = Path(__file__).resolve().parents[2]


def test_a_cold_cache_is_announced_before_compiling(monkeypatch, caplog):
    monkeypatch.setattr(warmup_module, "_cache_is_cold", lambda: True)
    log = logging.getLogger("test_warmup")
    with caplog.at_level(logging.INFO, logger="test_warmup"):
        seconds = warm_up(("ap",), few_positives=False, log=log)
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0] == "compiling ssvm's kernels, once (about 10 s); numba caches them for later runs"
    assert messages[1] == f"compiled ssvm's kernels in {seconds:.1f} s"


def test_a_warm_cache_loads_quietly(monkeypatch, caplog):
    warm_up(("ap", "ndcg"))  # compiled (or loaded) once
    assert warmup_module._cache_is_cold() is False  # its index is on disk now
    monkeypatch.setattr(warmup_module, "_cache_is_cold", lambda: False)
    with caplog.at_level(logging.INFO, logger="ssvm.losses.warmup"):
        warm_up(("ap", "ndcg"), notice_after=60.0)
    assert not caplog.records


def test_unknown_losses_are_refused_before_any_work():
    with pytest.raises(ValueError, match="unknown loss 'auc'"):
        warm_up(("ap", "auc"))


def test_the_warmup_command():
    proc = subprocess.run([sys.executable, "-m", "ssvm", "warmup"], capture_output=True, text=True, timeout=600,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "ssvm's kernels are compiled and cached" in proc.stdout


def test_bench_compile_quick(tmp_path):
    out = tmp_path / "compile.json"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_compile.py"), "--quick", "--json", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "warm_up(demo losses)" in proc.stdout
    (row,) = json.loads(out.read_text())["rows"]
    assert row["cold CPU s"] > row["warm CPU s"] > 0  # a cold cache compiles: it costs more than loading


FIT_AFTER_WARMUP = """
import json
import numpy as np, scipy.sparse as sp
from ssvm import RankSVM
from ssvm.problem import _fused, _products
from ssvm.problem.warmup import warm_up_rounds

warm_up_rounds()
kernels = {f.__name__: f for f in (_fused._chunk, _fused._round, _fused._positives, _products._dense_scores,
                                   _products._csr_scores, _products._dense_transpose, _products._csr_transpose,
                                   _products._dense_scores_chunks, _products._csr_scores_chunks,
                                   _products._dense_transpose_chunks, _products._csr_transpose_chunks)}
warmed = {name: sorted(map(str, f.signatures)) for name, f in kernels.items()}
rng = np.random.default_rng(0)
X, y, qid = rng.normal(size=(600, 4)), rng.random(600) < 0.3, np.arange(600) // 60
grades = rng.integers(0, 4, 600)  # graded NDCG's fused round
for parallel in (False, True):  # one chunk in the calling thread; numba's parallel loops
    if parallel:
        _fused._BLOCK_BYTES, _fused._PARALLEL_BYTES, _products._PARALLEL_BYTES = 200, 1000, 1000
    for dtype in (np.float64, np.float32):
        for csr in (False, True):
            Xd = X.astype(dtype)
            for loss, labels in (("ap", y), ("zero_one", y), ("ndcg", grades)):
                RankSVM(loss=loss, max_iter=30).fit(sp.csr_matrix(Xd) if csr else Xd, labels, qid=qid)
print(json.dumps({"warmed": warmed,
                  "after": {name: sorted(map(str, f.signatures)) for name, f in kernels.items()}}))
"""


def test_warmup_compiles_what_a_first_fit_compiles():
    """In a fresh process, fits after ``warm_up_rounds`` (dense and CSR, float64 and float32, one
    chunk and the parallel loops) add no compiled signature to the round's kernels."""
    proc = subprocess.run([sys.executable, "-c", FIT_AFTER_WARMUP], capture_output=True, text=True, timeout=900,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert all(out["warmed"].values())  # every kernel compiled (or loaded) by the warm-up
    assert out["after"] == out["warmed"]
