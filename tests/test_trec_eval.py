"""ssvm's measures against trec_eval itself (``pytrec_eval``, the dev extra's oracle), issue 36 item 2.

trec_eval ranks tied scores by document name in descending order; ssvm by row order. The runs below have
ties (scores rounded to one decimal) and break them explicitly: row i of a query of n rows is named so that
the names fall as the rows rise (``d{n - i}``), which makes trec_eval's order ssvm's.
"""

import numpy as np
import pytest
import pytrec_eval
from sklearn.datasets import dump_svmlight_file

from ssvm.__main__ import main
from ssvm.metrics import evaluate, mean_average_precision, mean_ndcg, ndcg_at_k, precision_at_k

CUTOFFS = (1, 3, 5, 10, 20)
TREC_MEASURES = {"map", "ndcg", *(f"ndcg_cut.{k}" for k in CUTOFFS), *(f"P.{k}" for k in CUTOFFS),
                 "recip_rank", "Rprec"}


def random_run(seed, n_queries=40):
    """Grades 0-3, scores with ties, queries of 1 to 25 rows, some without a relevant row or all relevant."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 26, size=n_queries)
    qid = np.repeat(rng.permutation(1000)[:n_queries], sizes)
    grades = rng.choice(4, size=qid.size, p=[0.6, 0.2, 0.15, 0.05])
    kind = rng.integers(0, 8, size=n_queries)  # 0: no relevant row, 1: all relevant, else as drawn
    grades = np.where(np.repeat(kind == 0, sizes), 0, np.where(np.repeat(kind == 1, sizes), grades + 1, grades))
    scores = np.round(rng.normal(size=qid.size), 1)  # ties within queries
    order = rng.permutation(qid.size)  # the rows of a query scattered over the file
    return grades[order], scores[order], qid[order]


def docnames(qid):
    """Row i of a query of n rows is ``d{n - i}`` (zero-padded): trec_eval's tie order is then the row order."""
    names = np.empty(qid.size, dtype=object)
    for query in np.unique(qid):
        rows = np.flatnonzero(qid == query)
        names[rows] = [f"d{rows.size - i:04d}" for i in range(rows.size)]
    return names


def trec_eval(grades, scores, qid, names, measures=TREC_MEASURES):
    qrels, run = {}, {}
    for g, s, q, name in zip(grades, scores, qid, names):
        qrels.setdefault(str(q), {})[name] = int(g)
        run.setdefault(str(q), {})[name] = float(s)
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


@pytest.mark.parametrize("seed", range(5))
def test_every_query_matches_trec_eval_with_ties_broken_explicitly(seed):
    grades, scores, qid = random_run(seed)
    assert any(np.unique(scores[qid == q]).size < np.count_nonzero(qid == q) for q in np.unique(qid))  # ties
    reference = trec_eval(grades, scores, qid, docnames(qid))
    ours = evaluate(grades, scores, qid=qid, k=CUTOFFS, gain="linear", all_queries=True, per_query=True)
    assert sorted(map(str, ours)) == sorted(reference)
    for query, values in ours.items():
        expected = {name.replace(".", "_"): value for name, value in reference[str(query)].items()}
        assert values == pytest.approx(expected, rel=1e-12, abs=1e-15), query


@pytest.mark.parametrize("seed", range(3))
def test_the_means_match_trec_eval_over_every_query_and_over_the_queries_that_count(seed):
    grades, scores, qid = random_run(seed)
    reference = trec_eval(grades, scores, qid, docnames(qid))
    relevant = {str(q): 0 < np.count_nonzero(grades[qid == q]) < np.count_nonzero(qid == q) for q in np.unique(qid)}
    assert not all(relevant.values())  # some queries do not count by default

    def mean(measure, queries=reference):
        return np.mean([reference[q][measure] for q in queries])

    assert mean_average_precision(grades, scores, qid=qid, all_queries=True) == pytest.approx(mean("map"), rel=1e-12)
    assert mean_average_precision(grades, scores, qid=qid) == pytest.approx(
        mean("map", [q for q, counts in relevant.items() if counts]), rel=1e-12)
    assert mean_ndcg(grades, scores, qid=qid, gain="linear", all_queries=True) == pytest.approx(mean("ndcg"), rel=1e-12)
    assert ndcg_at_k(grades, scores, qid=qid, k=5, gain="linear", all_queries=True) == pytest.approx(
        mean("ndcg_cut_5"), rel=1e-12)
    assert precision_at_k(grades, scores, qid=qid, k=10, all_queries=True) == pytest.approx(mean("P_10"), rel=1e-12)
    means = evaluate(grades, scores, qid=qid, k=CUTOFFS, gain="linear", all_queries=True)
    assert means["num_q"] == len(reference)
    assert means["P_20"] == pytest.approx(mean("P_20"), rel=1e-12)
    assert means["recip_rank"] == pytest.approx(mean("recip_rank"), rel=1e-12)
    assert means["Rprec"] == pytest.approx(mean("Rprec"), rel=1e-12)


def test_trec_eval_ranks_ties_by_descending_document_name_and_ssvm_by_row_order():
    grades, scores = np.array([1, 0, 0]), np.zeros(3)  # all tied, the relevant row first
    ascending = trec_eval(grades, scores, np.zeros(3, int), ["a", "b", "c"], {"map"})["0"]["map"]
    descending = trec_eval(grades, scores, np.zeros(3, int), ["c", "b", "a"], {"map"})["0"]["map"]
    assert (ascending, descending) == (pytest.approx(1 / 3), 1.0)  # "a" ranks last: names descending
    assert mean_average_precision(grades, scores) == 1.0  # ssvm: the first row first


def test_precision_at_k_divides_by_k_as_trec_eval():
    grades, scores = np.array([1, 0, 1, 0, 0, 0]), np.arange(6.0)[::-1]
    assert precision_at_k(grades, scores, k=10) == 0.2
    assert trec_eval(grades, scores, np.zeros(6, int), docnames(np.zeros(6, int)), {"P.10"})["0"]["P_10"] == 0.2


def test_ssvm_eval_prints_trec_evals_numbers(tmp_path, capsys):
    grades, scores, qid = random_run(7, n_queries=25)
    order = np.argsort(qid, kind="stable")  # the file's rows in query order (svmlight files group a qid's rows)
    grades, scores, qid = grades[order], scores[order], qid[order]
    dump_svmlight_file(np.ones((qid.size, 1)), grades, str(tmp_path / "test.dat"), query_id=qid, zero_based=False)
    (tmp_path / "p").write_text("".join(f"{float(s)!r}\n" for s in scores))
    assert main(["eval", "--gain", "linear", "--all-queries", "--per-query", "-k", "1,5", "-k", "10",
                 str(tmp_path / "test.dat"), str(tmp_path / "p")]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    printed = {(name.strip(), query): value for name, query, value in lines}
    reference = trec_eval(grades, scores, qid, docnames(qid),
                          {"map", "ndcg", "ndcg_cut.1,5,10", "P.1,5,10", "recip_rank", "Rprec"})
    assert printed[("num_q", "all")] == str(len(reference))
    for query, values in reference.items():
        for name, value in values.items():
            assert printed[(name, query)] == f"{value:.4f}", (name, query)
    for name in ("map", "ndcg", "ndcg_cut_5", "P_10", "recip_rank", "Rprec"):
        assert printed[(name, "all")] == f"{np.mean([v[name] for v in reference.values()]):.4f}", name
