"""Every loss's batch form reads only its queries' rows: rows between the queries (the queries a fit skips,
which stay in the stacked arrays) change nothing, whatever their labels."""

import numpy as np
import pytest

from ssvm.losses import LOSS_NAMES, get_oracle, loss_entry


def _batch_forms():
    for name in LOSS_NAMES:
        entry = loss_entry(name)
        for oracle, spec in entry.oracles.items():
            if spec.batched is not None:
                yield pytest.param(name, oracle, id=f"{name}-{oracle}")


@pytest.mark.parametrize("name, oracle", list(_batch_forms()))
@pytest.mark.parametrize("gap_label", [True, False])
def test_rows_between_queries_are_not_read(name, oracle, gap_label):
    solver = get_oracle(name, oracle)
    assert solver.batched is not None
    rng = np.random.default_rng(3)
    sizes, gaps = [5, 8, 6, 7], [3, 0, 4, 2]  # gap rows after each query
    scores, y, starts, ends, at = [], [], [], [], 0
    for size, gap in zip(sizes, gaps):
        labels = np.zeros(size, bool)
        # as many positives as would make the query look one-class if the gap's positives were counted in
        labels[rng.choice(size, max(1, min(size - 1, size - gap)), replace=False)] = True
        scores.append(rng.normal(size=size + gap))
        y.append(np.concatenate([labels, np.full(gap, gap_label)]))
        starts.append(at)
        ends.append(at + size)
        at += size + gap
    scores, y = np.concatenate(scores), np.concatenate(y)
    starts, ends = np.array(starts, np.int64), np.array(ends, np.int64)
    c, delta = solver.batch(scores, y, starts, ends)
    for q, (a, b) in enumerate(zip(starts, ends)):
        c_q, delta_q = solver(scores[a:b], y[a:b])
        np.testing.assert_allclose(c[a:b], c_q, rtol=1e-12, atol=1e-15)
        assert delta[q] == pytest.approx(delta_q, rel=1e-12, abs=1e-15)
    inside = np.zeros(scores.size, bool)
    for a, b in zip(starts, ends):
        inside[a:b] = True
    assert not np.any(c[~inside])
