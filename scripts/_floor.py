"""The floor of a training round (docs/design.md §11), measured: shared by bench_training and bench_oracles.

* :func:`round_rows`: one cutting-plane round (``StructuredHinge.plane``) fused and two-pass against
  ONE ``X @ w`` in the same run, float64 / float32, on 1 and 2 threads, and the round's
  compute floor (:func:`in_cache_ns_per_row`);
* :func:`oracle_row_rows`: oracle ns per row, many small queries (``Oracle.batch``) against one query
  of 10^6 rows;
* :func:`one_pass_seconds`: the floor itself, the faster of two ways to read X once for ``X @ w``
  at a thread count: numpy's BLAS ``X @ w`` and ssvm's compiled product (row chunks on the
  kernels' threads from 8 MB of X on; what the two-pass round and a large query's round call);
* :func:`simd_sort`: which SIMD sort numpy's ``np.sort`` runs on this CPU.
"""

import time

import numpy as np
from _baseline import kernel_threads

ROUND_TARGET = 1.5  # a round <= 1.5x one pass over X (float64 and float32, 2 threads)
ORACLE_TARGET = 1.5  # small queries <= 1.5x the per-row cost of one large query


def simd_sort():
    """numpy's sort on this CPU, as ``np.show_runtime()`` reports the SIMD extensions."""
    from numpy._core._multiarray_umath import __cpu_features__ as features

    found = [name for name in ("X86_V4", "AVX512_SKX", "X86_V3", "AVX2", "ASIMD", "SVE") if features.get(name)]
    if _sorts_with_avx512():
        kind = "x86-simd-sort, AVX-512"
    elif features.get("AVX2"):
        kind = "x86-simd-sort, AVX2 (AVX-512 not found)"
    elif features.get("ASIMD") or features.get("SVE"):
        kind = "Highway vqsort (ARM)"
    else:
        kind = "none: numpy's scalar introsort (the slow non-SIMD sort)"
    return f"numpy {np.__version__} np.sort: {kind}; SIMD found: {', '.join(found) or 'none'}"


def _sorts_with_avx512():
    """Whether numpy dispatches its AVX-512 sort on this CPU."""
    from numpy._core._multiarray_umath import __cpu_features__ as features

    return bool(features.get("AVX512_SKX") or features.get("X86_V4"))


def one_pass_seconds(X, w, repeats, threads):
    """Median seconds of one pass over dense ``X`` for ``X @ w`` at ``threads`` threads, two ways,
    and the faster: ``{"numpy": ..., "ssvm": ..., "floor": ..., "by": name}``.

    numpy's ``X @ w`` (``w`` in X's dtype) runs with ``threads`` BLAS threads, ssvm's product
    (``ssvm.problem._products.scores``, float64 sums) on ``threads`` threads of its own.
    """
    from threadpoolctl import threadpool_limits

    from ssvm.problem._products import scores

    w_x = w.astype(X.dtype)
    with threadpool_limits(limits=threads, user_api="blas"):
        times = {"numpy": median_seconds(lambda: X @ w_x, repeats)}
    with kernel_threads(threads):
        times["ssvm"] = median_seconds(lambda: scores(X, w), repeats)
    by = min(times, key=times.get)
    return {**times, "floor": times[by], "by": by}


def median_seconds(fn, repeats, clock=time.perf_counter):
    """Median time of ``fn()`` over ``repeats`` calls, after one untimed call: wall time, or with
    ``clock=time.thread_time`` the calling thread's CPU time (one-thread work on a shared machine)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return float(np.median(times))


def ranking_queries(n, query_size, frac_pos, d, dtype, rng):
    """``X`` (n x d, ``dtype``), relevance (positives shifted by 0.3) and queries of ``query_size``
    rows, those without a positive or a negative dropped."""
    X = rng.standard_normal((n, d), dtype=np.float32 if dtype == np.float32 else np.float64)
    y = rng.random(n) < frac_pos
    X[y] += 0.3
    starts = np.arange(0, n, query_size)
    queries = [np.arange(a, min(a + query_size, n)) for a in starts]
    return X, y, [q for q in queries if y[q].any() and not y[q].all()]


def round_rows(sizes, d, repeats, rng, query_size=1000, frac_pos=0.05, threads=(1, 2)):
    """Rows ``(N, dtype, w, threads, one pass ms (and which), fused ms, ratio, two-pass ms, ratio,
    target)`` for AP: the ratios are against the fastest one pass over X at that thread count
    (:func:`one_pass_seconds`), at two ``w``: random (scores interleaved: every negative walked)
    and fitted (:func:`fitted_w`: the scores a training round meets near the optimum)."""
    rows = []
    for n in sizes:
        for dtype in (np.float64, np.float32):
            rows += _round_cells(ranking_queries(n, query_size, frac_pos, d, dtype, rng), query_size, rng,
                                 repeats, threads)
    return rows


def fitted_w(X, y, query_size, n_fit=100_000):
    """``RankSVM(loss="ap")`` (default C) fitted on the first ``n_fit`` rows of the data (queries of
    ``query_size`` rows, i.i.d. with the rest): its coefficients."""
    from ssvm import RankSVM

    n = min(n_fit, X.shape[0])
    return RankSVM(loss="ap").fit(X[:n], y[:n], qid=np.arange(n) // query_size).coef_.ravel()


def _round_cells(data, query_size, rng, repeats, threads):
    """The cells of :func:`round_rows` for one ``(X, y, queries)`` (freed on return)."""
    from ssvm.losses import get_oracle
    from ssvm.problem import StructuredHinge
    X, y, queries = data
    fused = StructuredHinge(X, y, queries, get_oracle("ap"))
    plain = StructuredHinge(X, y, queries, get_oracle("ap"), fused=False)
    rows = []
    for w_name, w in (("random", rng.normal(size=X.shape[1]) * 0.1), ("fitted", fitted_w(X, y, query_size))):
        in_cache = in_cache_ns_per_row(X, y, queries, w, repeats)
        for n_threads in threads:
            one = one_pass_seconds(X, w, repeats, n_threads)
            t_xw = one["floor"]
            with kernel_threads(n_threads):
                t_fused = median_seconds(lambda w=w: fused.plane(w), repeats)
                t_plain = median_seconds(lambda w=w: plain.plane(w), repeats)
            floor = 1e-9 * in_cache * X.shape[0] / n_threads  # the round's CPU work, on every thread, no memory
            rows.append({"N": X.shape[0], "d": X.shape[1], "X": X.dtype.name, "w": w_name, "threads": n_threads,
                         "numpy X@w ms": 1e3 * one["numpy"], "ssvm X@w ms": 1e3 * one["ssvm"],
                         "one pass ms": 1e3 * t_xw, "pass by": one["by"],
                         "fused round ms": 1e3 * t_fused, "fused / pass": t_fused / t_xw,
                         "two-pass round ms": 1e3 * t_plain, "two-pass / pass": t_plain / t_xw,
                         "in-cache ns/row": in_cache, "compute floor / pass": floor / t_xw,
                         "target": f"<= {ROUND_TARGET:g}x at 2 threads" if n_threads == 2 else ""})
    return rows


def in_cache_ns_per_row(X, y, queries, w, repeats):
    """CPU ns per row of one thread's fused round (AP) on the first whole queries of ``X`` that fit
    in the fused round's one-chunk size (``_fused._PARALLEL_BYTES``, 4 MB), run again and again:
    the round's compute (scores, oracles, ``Xᵀ c``) with X in the cache, not in memory. That cost,
    times N, over the threads, is the round's compute floor: no prefetch or overlap of memory can
    take a round below it."""
    from ssvm.losses import get_oracle
    from ssvm.problem import StructuredHinge
    from ssvm.problem._fused import _PARALLEL_BYTES

    fit = _PARALLEL_BYTES // (X.shape[1] * X.itemsize)  # in L3, and one chunk: the fused loop in this thread
    head = [q for q in queries if q[-1] < fit] or queries[:1]  # whole queries; at least one
    n = head[-1][-1] + 1
    small = StructuredHinge(X[:n], y[:n], head, get_oracle("ap"))
    with kernel_threads(1):
        small.plane(w)
        seconds = median_seconds(lambda: [small.plane(w) for _ in range(10)], repeats, clock=time.thread_time)
    return 1e9 * seconds / 10 / sum(q.size for q in head)  # per row of the queries (a dropped query's are not)


def _stack(sizes, frac_pos, rng):
    ends = np.cumsum(sizes).astype(np.int64)
    starts = ends - sizes
    y = rng.random(int(ends[-1])) < frac_pos
    y[starts], y[ends - 1] = True, False
    return rng.normal(size=y.size) + 0.5 * y, y, starts, ends


def oracle_row_rows(n_queries, big_n, repeats, rng, frac_pos=0.05, k=10):
    """ns per row of ``Oracle.batch`` (CPU time of the calling thread): ``n_queries`` queries of
    100-1000 rows against one query of ``big_n`` rows (the target's reference, ``ratio``) and against
    one query of as many rows as the small ones together (``same-rows ratio``: the same working set,
    so what is left is the cost of many queries, not of the caches), per loss, 5% positives."""
    from ssvm.losses import get_oracle

    small = _stack(rng.integers(100, 1001, n_queries), frac_pos, rng)
    big = _stack(np.array([big_n]), frac_pos, rng)
    same = _stack(np.array([small[0].size]), frac_pos, rng)
    rows = []
    for loss in ("ap", "ndcg", "precision_at_k", "zero_one"):
        oracle = get_oracle(loss, **({"k": k} if loss == "precision_at_k" else {}))
        ns = [1e9 * median_seconds(lambda s=s: oracle.batch(*s), repeats, time.thread_time) / s[0].size  # noqa: B023
              for s in (small, big, same)]
        rows.append({"loss": loss, "small queries ns/row": ns[0], "1 query ns/row": ns[1], "ratio": ns[0] / ns[1],
                     "target": f"<= {ORACLE_TARGET:g}", "met": bool(ns[0] / ns[1] <= ORACLE_TARGET),
                     "1 query, same rows ns/row": ns[2], "same-rows ratio": ns[0] / ns[2]})
    return rows


_NO_AVX512 = "AVX512_SKX AVX512_ICL AVX512_SPR X86_V4"  # numpy's AVX-512 dispatch targets (numpy 2.x)
_CHILD_SORT = """
import sys, time
import numpy as np
neg, repeats = np.load(sys.argv[1]), int(sys.argv[2])
np.sort(neg)
times = []
for _ in range(repeats):
    t0 = time.thread_time()
    np.sort(neg)
    times.append(time.thread_time() - t0)
print(float(np.median(times)))
"""


def sort_without_avx512_seconds(neg, repeats):
    """Median thread CPU seconds of ``np.sort(neg)`` with numpy's AVX-512 dispatch turned off (its
    AVX2 path), timed in a child process (numpy reads ``NPY_DISABLE_CPU_FEATURES`` at import); None
    when this numpy does not sort with AVX-512 here anyway. On AMD Zen 4 numpy's AVX-512 sort is
    several times slower than its AVX2 sort (a microcoded ``vpcompress`` store; numpy/x86-simd-sort#6),
    so a target "against numpy's SIMD sort" is checked against the faster of the two."""
    import os
    import subprocess
    import sys
    import tempfile

    if not _sorts_with_avx512():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "neg.npy")
        np.save(path, neg)
        env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": _NO_AVX512}
        out = subprocess.run([sys.executable, "-c", _CHILD_SORT, path, str(repeats)], env=env, check=True,
                             capture_output=True, text=True, timeout=600)
    return float(out.stdout.split()[-1])


def public_entry_rows(n_pos, n_neg, repeats, rng):
    """At ``P``, ``N``, integer labels, through ``loss_augmented_inference``: QS (AP) against np.sort
    of the negatives — numpy's default SIMD sort and, where that is its AVX-512 sort, its AVX2 sort
    (:func:`sort_without_avx512_seconds`); the target is checked against the faster — and QS (NDCG)
    against Chakrabarti et al.'s sort-and-scan, per score regime (medians of the calling thread's CPU
    time)."""
    from ssvm.losses import loss_augmented_inference

    rows = []
    for regime, (mu_pos, mu_neg) in {"interleaved": (1.0, 0.0), "trained": (2.0, -2.0)}.items():
        s = np.concatenate([rng.normal(mu_pos, 1.0, n_pos), rng.normal(mu_neg, 1.0, n_neg)])
        y = np.zeros(s.size, dtype=np.int64)
        y[:n_pos] = 1
        perm = rng.permutation(s.size)
        s, y = s[perm], y[perm]
        neg = s[y == 0]
        clock = time.thread_time  # one-thread calls on a shared machine: the thread's CPU time
        t_sort = median_seconds(lambda: np.sort(neg), repeats, clock)  # noqa: B023
        t_avx2 = sort_without_avx512_seconds(neg, repeats)
        t_bar = min(t_sort, t_avx2) if t_avx2 else t_sort
        t_ap = median_seconds(lambda: loss_augmented_inference(s, y, "ap", "qs"), repeats, clock)  # noqa: B023
        t_ndcg = median_seconds(lambda: loss_augmented_inference(s, y, "ndcg", "qs"), repeats, clock)  # noqa: B023
        t_ch = median_seconds(lambda: loss_augmented_inference(s, y, "ndcg", "chakrabarti"), 1, clock)  # noqa: B023
        rows.append({"regime": regime, "np.sort(neg) ms": 1e3 * t_sort,
                     "np.sort, AVX-512 off ms": 1e3 * t_avx2 if t_avx2 else None, "QS AP ms": 1e3 * t_ap,
                     "AP / faster sort": t_ap / t_bar, "sort target": "<= 1", "QS NDCG ms": 1e3 * t_ndcg,
                     "Chakrabarti ms": 1e3 * t_ch, "Chakrabarti / QS": t_ch / t_ndcg, "NDCG target": ">= 100"})
    return rows
