"""Graded-relevance pieces of the ranking experiments: the per-threshold reference of the graded NDCG
hinge (DESIGN §9), the graded metrics, the LambdaLoss baseline and paired differences.

The per-threshold reference builds the graded hinge from the public *binary* NDCG oracle: for every
query and relevance threshold t = 1..max r, the exact binary NDCG hinge of ``[r >= t]`` weighted by
``α_t = (g(t) − g(t−1)) · IDCG_t / IDCG`` (``g`` the gain, ``IDCG_t`` the ideal DCG of ``[r >= t]``,
``IDCG`` the graded one), so ``c = Σ_t α_t c_t`` and ``delta = Σ_t α_t δ_t`` keep the oracles' contract.
It makes one binary oracle call per threshold over all the queries of a batch; a query whose grades
are all equal is skipped.
"""

from __future__ import annotations

import numpy as np
import torch

from ssvm.losses import Oracle, get_oracle
from ssvm.metrics import mean_average_precision, mean_ndcg

GAINS = {"exponential": lambda r: np.exp2(r) - 1.0, "linear": lambda r: r.astype(np.float64),
         "binary": lambda r: (r > 0).astype(np.float64)}


def _discounts(n):
    return 1.0 / np.log2(np.arange(2, n + 2))


def threshold_weights(grades, starts, ends, gain):
    """``α[t-1, k]`` of every threshold t = 1..max r and stacked query ``k`` (0 where ``[r >= t]``
    has no relevant or no irrelevant row, where the threshold cannot move the loss)."""
    sizes = ends - starts
    seg = np.repeat(np.arange(sizes.size), sizes)
    rows = np.concatenate([np.arange(a, b) for a, b in zip(starts, ends)])
    r = grades[rows]
    g = GAINS[gain](r)
    order = np.lexsort((-g, seg))  # each query's gains in decreasing order
    position = np.arange(rows.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    idcg = np.bincount(seg, g[order] * _discounts(int(sizes.max()))[position], minlength=sizes.size)
    cum = np.concatenate([[0.0], np.cumsum(_discounts(int(sizes.max())))])
    top = int(r.max())
    alpha = np.zeros((top, sizes.size))
    for t in range(1, top + 1):
        n_pos = np.bincount(seg, r >= t, minlength=sizes.size).astype(np.int64)
        w = float(GAINS[gain](np.array([t]))[0] - GAINS[gain](np.array([t - 1]))[0])
        informative = (n_pos > 0) & (n_pos < sizes) & (idcg > 0)
        alpha[t - 1, informative] = w * cum[n_pos[informative]] / idcg[informative]
    return alpha


def graded_batch(scores, grades, starts, ends, gain, inner):
    """``(c, delta)`` of the stacked queries, each ``Σ_t α_t`` (inner oracle on ``[r >= t]``).

    ``inner`` is a binary :class:`ssvm.losses.Oracle` (the NDCG hinge's, or the direct loss's);
    every query must have two different grades.
    """
    alpha = threshold_weights(grades, starts, ends, gain)
    c = np.zeros(scores.shape[0])
    delta = np.zeros(starts.shape[0])
    for t in range(1, alpha.shape[0] + 1):
        keep = np.flatnonzero(alpha[t - 1] > 0)
        if keep.size == 0:
            continue
        rows = np.concatenate([np.arange(starts[k], ends[k]) for k in keep])
        sizes = ends[keep] - starts[keep]
        sub_ends = np.cumsum(sizes)
        c_t, delta_t = inner.batch(scores[rows], grades[rows] >= t, sub_ends - sizes, sub_ends)
        c[rows] += np.repeat(alpha[t - 1, keep], sizes) * c_t
        delta[keep] += alpha[t - 1, keep] * delta_t
    return c, delta


def graded_oracle(gain="exponential", inner=None):
    """The per-threshold reference as an :class:`ssvm.losses.Oracle` whose ``y`` is the grades
    (for :class:`ssvm.problem.StructuredHinge` with ``check_input=False``)."""
    return Oracle(single=_graded_single, batched=graded_batch, name=f"graded-{gain}-reference",
                  params={"gain": gain, "inner": get_oracle("ndcg") if inner is None else inner})


def _graded_single(scores, grades, **params):
    c, delta = graded_batch(scores, grades, np.array([0]), np.array([scores.size]), **params)
    return c, float(delta[0])


def graded_queries(grades, qid):
    """Row indices of the queries with two different grades, in order of first appearance."""
    _, first, inverse = np.unique(qid, return_index=True, return_inverse=True)
    queries = []
    for k in np.argsort(first):
        rows = np.flatnonzero(inverse == k)
        if grades[rows].min() < grades[rows].max():
            queries.append(rows)
    return queries


def stack(queries):
    """``(rows, starts, ends)`` of queries laid end to end."""
    sizes = np.array([q.size for q in queries], dtype=np.int64)
    ends = np.cumsum(sizes)
    return np.concatenate(queries), ends - sizes, ends


class _GradedFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scores, grades, qid, gain, inner, hinge):
        s = scores.detach().to(torch.float64).cpu().numpy()
        rows, starts, ends = stack(graded_queries(grades, qid))
        c, delta = graded_batch(s[rows], grades[rows], starts, ends, gain, inner)
        values = delta.copy()
        if hinge:  # H_q = delta_q + s_q · c_q
            values += np.add.reduceat(s[rows] * c, starts)
        grad = np.zeros(s.shape[0])
        grad[rows] = c / starts.size
        ctx.save_for_backward(torch.from_numpy(grad).to(scores.dtype))
        return torch.tensor(values.mean(), dtype=scores.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (grad,) = ctx.saved_tensors
        return grad_output * grad, None, None, None, None, None


class GradedReferenceLoss(torch.nn.Module):
    """The per-threshold reference of the graded NDCG hinge (``inner`` binary NDCG hinge oracle) or
    of the graded direct loss (``inner`` a direct-loss oracle: value 1 − graded NDCG, gradient
    ``Σ_t α_t`` of the per-threshold direct-loss gradients); the mean over the queries whose grades
    are not all equal."""

    def __init__(self, gain="exponential", inner=None, hinge=True):
        super().__init__()
        self.gain, self.hinge = gain, hinge
        self.inner = get_oracle("ndcg") if inner is None else inner

    def forward(self, scores, grades, qid):
        return _GradedFunction.apply(scores, np.asarray(grades), np.asarray(qid), self.gain, self.inner,
                                     self.hinge)


# ------------------------------------------------------------------ pairwise (LambdaLoss) losses


def padded(qid):
    """``(index, mask)``: the rows of each query of ``qid`` in a (Q, L) matrix, padded with 0."""
    _, inverse, counts = np.unique(qid, return_inverse=True, return_counts=True)
    order = np.argsort(inverse, kind="stable")
    position = np.arange(order.size) - np.repeat(np.cumsum(counts) - counts, counts)
    index = np.zeros((counts.size, counts.max()), dtype=np.int64)
    mask = np.zeros(index.shape, dtype=bool)
    index[inverse[order], position] = order
    mask[inverse[order], position] = True
    return torch.from_numpy(index), torch.from_numpy(mask)


def lambda_pair_weights(grades_by_rank, mask_by_rank, mu=10.0):
    """NDCG-Loss2++ weights ``μ·ΔNDCG2 + ΔLambdaRank`` of the pairs (i, j) of each query ranked by
    score (Wang et al., CIKM 2018, eqs. 13-14 and section 4.3; exponential gains; allRank's form)."""
    n = grades_by_rank.shape[1]
    inv_d = 1.0 / torch.log2(torch.arange(2, n + 3, dtype=torch.float64))  # 1/D at positions 1..n+1
    gains = torch.where(mask_by_rank, torch.exp2(grades_by_rank) - 1.0, torch.zeros_like(grades_by_rank))
    ideal = torch.sort(gains, dim=1, descending=True).values
    idcg = (ideal * inv_d[None, :n]).sum(1).clamp(min=1e-12)
    G = gains / idcg[:, None]
    dG = (G[:, :, None] - G[:, None, :]).abs()
    lag = (torch.arange(n)[:, None] - torch.arange(n)[None, :]).abs()
    ndcg2 = (inv_d[(lag - 1).clamp(min=0)] - inv_d[lag]).abs() * (lag > 0)
    lambdarank = (inv_d[None, :n, None] - inv_d[None, None, :n]).abs()
    return mu * ndcg2[None] * dG + lambdarank * dG


def pairwise_loss(scores, grades, index, mask, *, weights="ndcg2++", surrogate="logistic", sigma=1.0):
    """Mean over queries of ``Σ_{r_i > r_j} w_ij ℓ(σ(s_i − s_j))``: LambdaLoss NDCG-Loss2++
    (``weights="ndcg2++"``, ``surrogate="logistic"``, ℓ(x) = log2(1 + e^{−x})), RankNet (uniform
    weights) or a pairwise hinge ``max(0, 1 − x)`` with either weights."""
    s = torch.where(mask, scores[index], torch.full(index.shape, -torch.inf, dtype=scores.dtype))
    order = torch.argsort(s.detach(), dim=1, descending=True)
    s_ranked = torch.gather(s, 1, order)
    r_ranked = torch.gather(grades[index].to(torch.float64), 1, order)
    m_ranked = torch.gather(mask, 1, order)
    pairs = m_ranked[:, :, None] & m_ranked[:, None, :] & (r_ranked[:, :, None] > r_ranked[:, None, :])
    if weights == "ndcg2++":
        w = lambda_pair_weights(r_ranked, m_ranked)
    else:
        w = torch.ones(pairs.shape, dtype=torch.float64)
    diff = (s_ranked[:, :, None] - s_ranked[:, None, :]).masked_fill(~pairs, 0.0) * sigma
    if surrogate == "logistic":
        per_pair = torch.nn.functional.softplus(-diff) / np.log(2.0)
    else:
        per_pair = torch.relu(1.0 - diff)
    total = (w.to(scores.dtype) * per_pair * pairs).sum()
    return total / max(1, int(pairs.any(dim=(1, 2)).sum()))


# ------------------------------------------------------------------ metrics and paired differences

METRICS = ("NDCG", "NDCG@10", "AP")


def graded_metrics(grades, scores, qid):
    """Exponential-gain NDCG (full list), NDCG@10 and mean AP (``r > 0`` relevant) per query, in %."""
    return {"NDCG": 100 * mean_ndcg(grades, scores, qid=qid, gains="exponential"),
            "NDCG@10": 100 * mean_ndcg(grades, scores, qid=qid, gains="exponential", k=10),
            "AP": 100 * mean_average_precision(grades > 0, scores, qid=qid)}


def paired_rows(results, reference, extra=()):
    """One row per model: mean ± standard error over the splits of each metric, and of its paired
    difference to ``reference`` (``results[model]`` is a list of metric dicts, one per split)."""
    rows = []
    base = results[reference]
    for model, runs in results.items():
        row = {"model": model}
        for m in METRICS:
            values = np.array([r[m] for r in runs])
            row[m] = f"{values.mean():.2f} ± {values.std(ddof=1) / np.sqrt(values.size):.2f}"
        for m in METRICS:
            if model == reference:
                row[f"Δ{m} vs ref"] = "-"
                continue
            d = np.array([r[m] - b[m] for r, b in zip(runs, base)])
            row[f"Δ{m} vs ref"] = f"{d.mean():+.2f} ± {d.std(ddof=1) / np.sqrt(d.size):.2f}"
        for key in extra:
            row[key] = runs[0].get(key) if len(runs) == 1 else _summary([r.get(key) for r in runs])
        rows.append(row)
    return rows


def _summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    if all(isinstance(v, (int, float)) for v in values):
        return float(np.median(values))
    counts = {v: values.count(v) for v in dict.fromkeys(values)}
    return "; ".join(f"{v} x{n}" if n > 1 else str(v) for v, n in sorted(counts.items(), key=lambda c: -c[1]))
