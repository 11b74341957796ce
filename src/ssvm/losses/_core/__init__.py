"""The compiled core of the QS family of oracles (Cython, built with the package; see meson.build).

One home per algorithm, each file opening with the paper step it implements:

* :mod:`.reference` — a readable pure-Python reference of Mohapatra et al.'s Algorithm 1 (sort the
  positives), Algorithm 2 (OptRanks: recursive SELECT with the interval of Observation 4) and Lemma 6
  (the coefficients), for any QS loss by its discrete derivative: the tests' oracle.
* ``derivative`` — the discrete derivative d_j(i) of each built-in loss, written once
  (``loss_step``; the sum table is built from it), ``best_rank`` (opt_j over a range of ranks), the
  ``objective_t`` of a query, Lemma 6's coefficients, Δ from a ± pattern, NDCG's discount and the kept
  table of 1/log2.  The sorting baselines (``ssvm/losses/_sorted_scan.pyx``: Yue, Chakrabarti, SEARCH)
  and the dask giant query (``ssvm/problem/_giant_query.pyx``) cimport it too: there is no other copy.
* ``sorting`` — the sorting primitives shared by the walk, the graded kernel, the ranking by score and
  the dask giant query: packed keys, their radix and bucket sorts, repair, unpack.
* ``opt_ranks`` — Algorithm 2 itself, and its divide and conquer over monotone chains (``chain_opts``).
* ``grid`` (steps 1–2 and the path), ``grid_bins`` (step 3), ``grid_settle`` (step 4) — the score grid:
  Algorithm 2's first levels as one multi-pivot SELECT, the path ``oracle="qs"`` takes with few
  positives (P < N / 50).
* ``sort_walk`` — the sort-and-walk path: one sort and a certified monotone walk, the path
  ``oracle="qs"`` takes for AP and NDCG with many positives (P ≥ N / 50); ``set_aside`` — the negatives
  certified to rank last, set aside before its sort.
* ``graded`` — graded NDCG: one sort per query, one walk per grade level.
* ``score_ranking`` — the outputs by score of the direct-loss gradient (the ranking R_w, the 0-1
  labelling).
* ``numerics.pxd`` — the rounding margins of the fast paths, in one place.

The nogil functions that serve a block of queries (for the fused training round) are declared in the
``.pxd`` files: ``grid.grid_queries``, ``sort_walk.walk_queries`` and ``graded.graded_queries``, each
with a work struct the caller owns (one per thread); the fused round (``ssvm/problem/_fused_round.pyx``)
calls them inside its OpenMP loop.  The Python modules :mod:`ssvm.losses.qs`,
:mod:`ssvm.losses.graded`, :mod:`ssvm.losses.rank_losses` and :mod:`ssvm.losses._score_ranking` keep
the public entry points and call in here.
"""
