"""Graded-relevance pieces of the ranking experiments: the LambdaLoss baseline (and its pairwise
variants), the graded metrics and paired differences.

The graded NDCG hinge itself is the library's (``RankSVM(loss="ndcg", gain=...)``,
``ssvm.nn.RankHingeLoss("ndcg", gain=...)``, docs/design.md §9). The experiments first ran on a slow
per-threshold reference of it written here from the binary oracle (one binary NDCG oracle call per
threshold, weighted by α_t; commit 07d831b), which the library matched to 1e-15 on the LETOR sample
before the reference was deleted (docs/results/graded_relevance.md).
"""

from __future__ import annotations

import numpy as np
import torch

from ssvm.metrics import mean_average_precision, mean_ndcg

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
    return {"NDCG": 100 * mean_ndcg(grades, scores, qid=qid, gain="exponential"),
            "NDCG@10": 100 * mean_ndcg(grades, scores, qid=qid, gain="exponential", k=10),
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
