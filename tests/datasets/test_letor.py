"""Tests of the SVMlight / LETOR reader against sklearn's reader and on malformed files."""

import gzip
import logging

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from ssvm.datasets import load_letor, read_query_sizes
from ssvm.datasets.samples import DATA_DIR

SAMPLE = DATA_DIR / "letor_sample"


def write(tmp_path, text, name="data.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_real_sample_matches_sklearn_and_query_file():
    X, relevance, qid = load_letor(SAMPLE / "rank.train.gz")  # picks up rank.train.query
    X_ref, y_ref = load_svmlight_file(str(SAMPLE / "rank.train.gz"), zero_based=False)
    assert X.shape == (3005, 300) and X.dtype == np.float64 and sp.isspmatrix_csr(X)
    assert (X != X_ref[:, :300]).nnz == 0
    np.testing.assert_array_equal(relevance, y_ref)
    sizes = read_query_sizes(SAMPLE / "rank.train.query")
    assert sizes.size == 201 and sizes.sum() == 3005
    np.testing.assert_array_equal(np.bincount(qid), sizes)
    assert (np.diff(qid) >= 0).all()
    X_test, rel_test, qid_test = load_letor(SAMPLE / "rank.test.gz", n_features=X.shape[1])
    assert X_test.shape == (768, 300) and np.unique(qid_test).size == 50


def slow_parse(text, zero_based=False):
    """Obvious reference parser: returns dense rows, labels, qids."""
    rows, labels, qids = [], [], []
    for line in text.splitlines():
        tokens = line.split("#")[0].split()
        if not tokens:
            continue
        labels.append(float(tokens[0]))
        row = {}
        for token in tokens[1:]:
            key, value = token.split(":")
            if key == "qid":
                qids.append(int(value))
            else:
                row[int(key) - (0 if zero_based else 1)] = float(value)
        rows.append(row)
    return rows, labels, qids


@settings(max_examples=30, deadline=None)
@given(
    n_rows=st.integers(1, 12),
    n_cols=st.integers(1, 7),
    density=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**31 - 1),
    scale=st.sampled_from([1e-12, 1.0, 1e12]),
)
def test_random_files_match_slow_parser(tmp_path_factory, n_rows, n_cols, density, seed, scale):
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(n_rows, n_cols)) * scale * (rng.random((n_rows, n_cols)) < density)
    labels = rng.integers(0, 5, n_rows).astype(float)
    query_sizes = np.diff(np.r_[0, np.sort(rng.choice(np.arange(1, n_rows), min(n_rows - 1, 3),
                                                        replace=False)), n_rows])
    qid_written = np.repeat(rng.permutation(50)[: query_sizes.size] + 1, query_sizes)
    path = tmp_path_factory.mktemp("letor") / "f.txt"
    dump_svmlight_file(dense, labels, str(path), zero_based=False, query_id=qid_written,
                       comment="a comment")
    text = path.read_text()
    X, relevance, qid = load_letor(path, n_features=n_cols)
    rows, ref_labels, ref_qids = slow_parse(text)
    expected = np.zeros((len(rows), n_cols))
    for i, row in enumerate(rows):
        for j, value in row.items():
            expected[i, j] = value
    np.testing.assert_array_equal(X.toarray(), expected)
    np.testing.assert_array_equal(relevance, ref_labels)
    np.testing.assert_array_equal(qid, ref_qids)
    np.testing.assert_allclose(X.toarray(), dense, rtol=1e-15, atol=0)  # dump writes %.16g


def test_qid_rows_comments_and_blank_lines(tmp_path):
    path = write(tmp_path, "# header comment\n"
                           "2 qid:7 1:0.5 3:-1 # doc a\n"
                           "\n"
                           "0 qid:7 2:1e-3\n"
                           "1 qid:3 3:2 1:4\n"  # unsorted indices are fine
                           "0.5 qid:3\n")
    X, relevance, qid = load_letor(path)
    np.testing.assert_array_equal(X.toarray(), [[0.5, 0, -1], [0, 1e-3, 0], [4, 0, 2], [0, 0, 0]])
    np.testing.assert_array_equal(relevance, [2, 0, 1, 0.5])
    np.testing.assert_array_equal(qid, [7, 7, 3, 3])
    assert load_letor(path, n_features=5)[0].shape == (4, 5)


def test_query_file_auto_detected_and_explicit(tmp_path):
    path = write(tmp_path, "1 1:1\n0 2:1\n0 1:2\n1 2:2\n0 1:3\n")
    _, _, qid = load_letor(path)
    np.testing.assert_array_equal(qid, 0)  # no query structure: one query
    write(tmp_path, "2\n3\n", name="data.txt.query")
    _, _, qid = load_letor(path)
    np.testing.assert_array_equal(qid, [0, 0, 1, 1, 1])
    other = write(tmp_path, "1\n\n4\n", name="sizes.txt")
    _, _, qid = load_letor(path, other)
    np.testing.assert_array_equal(qid, [0, 1, 1, 1, 1])


def test_gzip_file_reads_like_the_plain_one_and_finds_its_query_file(tmp_path):
    text = "1 1:1\n0 2:1 # comment\n0 1:2\n1 2:2\n0 1:3\n"
    plain = write(tmp_path, text)
    zipped = tmp_path / "data.txt.gz"
    zipped.write_bytes(gzip.compress(text.encode()))
    write(tmp_path, "2\n3\n", name="data.txt.query")  # <name>.query beside <name>.gz
    for got, expected in zip(load_letor(zipped), load_letor(plain)):
        assert (got != expected).nnz == 0 if sp.issparse(got) else np.array_equal(got, expected)
    np.testing.assert_array_equal(load_letor(zipped)[2], [0, 0, 1, 1, 1])
    write(tmp_path, "1\n4\n", name="data.txt.gz.query")  # <path>.query wins
    np.testing.assert_array_equal(load_letor(zipped)[2], [0, 1, 1, 1, 1])
    zipped.write_bytes(gzip.compress(b"1 1:1\n0 2:x\n"))
    with pytest.raises(ValueError, match=r"data\.txt\.gz, line 2: bad feature value"):
        load_letor(zipped, query_path=write(tmp_path, "2\n", name="two.query"))


def test_mq2007_style_lines_crlf_and_bom(tmp_path):
    path = tmp_path / "mq.txt"
    path.write_bytes("\ufeff2 qid:10032 1:0.056537 3:1 #docid = GX029-35-5894638 inc = 0.01\r\n"
                     "0 qid:10032 2:0.5 #docid = GX030\r\n".encode("utf-8"))
    X, relevance, qid = load_letor(path)
    np.testing.assert_array_equal(X.toarray(), [[0.056537, 0, 1], [0, 0.5, 0]])
    np.testing.assert_array_equal(relevance, [2, 0])
    np.testing.assert_array_equal(qid, [10032, 10032])


def test_zero_based(tmp_path):
    path = write(tmp_path, "1 0:1 2:3\n")
    with pytest.raises(ValueError, match=r"data\.txt, line 1: .*index 0 .*zero_based=True"):
        load_letor(path, zero_based=False)
    for zero_based in (True, "auto"):
        X, _, _ = load_letor(path, zero_based=zero_based)
        np.testing.assert_array_equal(X.toarray(), [[1, 0, 3]])
    with pytest.raises(ValueError, match=r"zero_based must be True, False or 'auto'"):
        load_letor(path, zero_based="yes")


def test_zero_based_auto_reads_sklearn_dumps_and_svmrank_files_alike(tmp_path):
    rng = np.random.default_rng(0)
    dense = np.round(rng.normal(size=(6, 4)), 3) * (rng.random((6, 4)) < 0.6)
    dense[2, 0] = 1.5  # feature 0 is used: the 0-based file has an index 0
    labels, qid = rng.integers(0, 3, 6).astype(float), np.repeat([3, 1], 3)
    for zero_based in (True, False):
        path = tmp_path / f"dump_{zero_based}.txt"
        dump_svmlight_file(dense, labels, str(path), zero_based=zero_based, query_id=qid)
        X, relevance, got_qid = load_letor(path)  # zero_based="auto"
        np.testing.assert_array_equal(X.toarray(), dense)
        np.testing.assert_array_equal(got_qid, qid)
    path = write(tmp_path, "1 qid:1 4:2\n0 qid:1 1:1\n")  # 1-based, no index 0: column 3 is index 4
    np.testing.assert_array_equal(load_letor(path)[0].toarray(), [[0, 0, 0, 2], [1, 0, 0, 0]])
    with pytest.raises(ValueError, match=r"line 1: feature index 4 is beyond n_features=3"):
        load_letor(path, n_features=3)
    with pytest.raises(ValueError, match=r"line 1: feature index -1 in token '-1:2' is negative"):
        load_letor(write(tmp_path, "1 -1:2\n"))


def test_scattered_query_rows_form_one_query_as_in_ranksvm(tmp_path):
    from ssvm._queries import queries_from_qid

    path = write(tmp_path, "1 qid:5 1:1\n0 qid:2 1:2\n0 qid:5 1:3\n1 qid:2 1:4\n0 qid:5 1:5\n")
    X, relevance, qid = load_letor(path)
    np.testing.assert_array_equal(qid, [5, 2, 5, 2, 5])
    queries = queries_from_qid(qid, qid.size)  # the rule RankSVM.fit applies
    assert [q.tolist() for q in queries] == [[0, 2, 4], [1, 3]]
    with pytest.raises(ValueError, match=r"line 3: qid:5 reappears .*line 1.*\.query file"):
        load_letor(path, write(tmp_path, "1\n1\n1\n1\n1\n", "q.txt"))


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("1 1:1\nabc 1:2\n", 2, "label 'abc' is not a number"),
        ("1 1:1\nnan 1:2\n", 2, "not finite"),
        ("1 1:1\n1 1:2 3\n", 2, r"bad token '3'"),
        ("1 1:1\n1 1:1_0\n", 2, r"bad token '1:1_0' \(underscore"),
        ("1 1:1\n\u0661 1:1\n", 2, r"bad token '\u0661' \(underscore or non-ASCII"),
        ("1 1:1\n1 1:2 3:4:5\n", 2, r"bad token '3:4:5'"),
        ("1 1:x\n", 1, r"bad feature value in token '1:x'"),
        ("1 1:inf\n", 1, r"not finite"),
        ("1 a:1\n", 1, r"bad feature index in token 'a:1'"),
        ("1 1.5:1\n", 1, r"bad feature index"),
        ("1 -2:1\n", 1, r"negative"),
        ("1 2:1 2:3\n", 1, r"feature index 2 appears more than once"),
        ("1 qid:x 1:1\n", 1, r"query id 'qid:x' is not an integer"),
        ("1 qid:-1 1:1\n", 1, r"negative"),
        ("1 1:1 qid:2\n", 1, r"must come right after the label"),
        ("1 qid:1 1:1\n0 1:1\n", 2, r"no 'qid:' but earlier rows do"),
        ("1 1:1\n0 qid:1 1:1\n", 2, r"has 'qid:' but earlier rows do not"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(ValueError, match=rf"data\.txt, line {line}: .*{message}"):
        load_letor(path)


def test_query_file_errors(tmp_path):
    path = write(tmp_path, "1 1:1\n0 1:1\n1 1:1\n")
    with pytest.raises(ValueError, match=r"q\.txt: query sizes sum to 2 but .*3 data rows"):
        load_letor(path, write(tmp_path, "1\n1\n", "q.txt"))
    with pytest.raises(ValueError, match=r"q2\.txt, line 2: query size 'x'"):
        load_letor(path, write(tmp_path, "1\nx\n", "q2.txt"))
    with pytest.raises(ValueError, match=r"q4\.txt, line 1: query size '1_0'"):
        load_letor(path, write(tmp_path, "1_0\n", "q4.txt"))
    with pytest.raises(ValueError, match=r"q5\.txt, line 1: query size '-1'"):
        load_letor(path, write(tmp_path, "-1\n4\n", "q5.txt"))
    with pytest.raises(ValueError, match=r"q3\.txt, line 1: query size 0 is not positive"):
        load_letor(path, write(tmp_path, "0\n3\n", "q3.txt"))
    with_qid = write(tmp_path, "1 qid:1 1:1\n0 qid:1 1:1\n1 qid:2 1:1\n", "qid.txt")
    np.testing.assert_array_equal(load_letor(with_qid, write(tmp_path, "2\n1\n", "ok.txt"))[2],
                                  [1, 1, 2])
    with pytest.raises(ValueError, match=r"bad\.txt: query sizes disagree"):
        load_letor(with_qid, write(tmp_path, "1\n2\n", "bad.txt"))


def test_n_features_errors(tmp_path):
    path = write(tmp_path, "1 1:1\n0 5:1\n")
    with pytest.raises(ValueError, match=r"data\.txt, line 2: feature index 5 is beyond n_features=4"):
        load_letor(path, n_features=4)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="n_features"):
            load_letor(path, n_features=bad)


@pytest.mark.parametrize("zero_based, base", [(False, 1), ("auto", 1), (True, 0)])
def test_the_index_base_read_is_the_one_reported(tmp_path, zero_based, base):
    """What the command line keeps in the model file, and what an error names: the index as written."""
    from ssvm.datasets.letor import _read_letor

    path = write(tmp_path, "1 qid:1 4:2\n0 qid:1 1:1\n")
    X, _, _, read_zero_based = _read_letor(path, None, None, zero_based)
    assert read_zero_based is (base == 0)
    assert X.shape == (2, 5 - base)
    with pytest.raises(ValueError, match=r"line 1: feature index 4 is beyond n_features=2"):
        load_letor(path, zero_based=zero_based, n_features=2)


def test_a_query_file_beside_a_plain_file_is_its_name_plus_query(tmp_path):
    """``rank.txt`` takes ``rank.txt.query``, never ``rank.query`` (that one is a ``rank.gz``'s)."""
    path = write(tmp_path, "1 1:1\n0 1:2\n1 1:3\n", name="rank.txt")
    write(tmp_path, "1\n2\n", name="rank.query")
    np.testing.assert_array_equal(load_letor(path)[2], [0, 0, 0])
    write(tmp_path, "2\n1\n", name="rank.txt.query")
    np.testing.assert_array_equal(load_letor(path)[2], [0, 0, 1])


@pytest.mark.parametrize("n_features", [True, False, 2.5, "3", 0, -1])
def test_n_features_must_be_a_positive_integer(tmp_path, n_features):
    path = write(tmp_path, "1 1:1\n")
    with pytest.raises(ValueError, match=f"n_features must be a positive integer, got {n_features!r}"):
        load_letor(path, n_features=n_features)


@pytest.mark.parametrize("zero_based", [True, False, "auto"])
def test_rows_with_a_label_only(tmp_path, zero_based):
    path = write(tmp_path, "1\n0 2:3\n2\n")  # rows with a label and nothing else
    X, relevance, _ = load_letor(path, zero_based=zero_based)
    np.testing.assert_array_equal(relevance, [1, 0, 2])
    np.testing.assert_array_equal(X.toarray(), [[0, 0, 0], [0, 0, 3], [0, 0, 0]] if zero_based is True
                                  else [[0, 0], [0, 3], [0, 0]])
    X, relevance, _ = load_letor(write(tmp_path, "1\n0\n"), zero_based=zero_based)  # no feature at all
    assert X.shape == (2, 0) and relevance.tolist() == [1, 0]


@pytest.mark.parametrize("zero_based", [False, True, "auto"])
def test_a_repeated_index_is_named_as_written_in_the_file(tmp_path, zero_based):
    path = write(tmp_path, "1 qid:1 1:1 3:1 3:2\n")
    with pytest.raises(ValueError, match=r"line 1: feature index 3 appears more than once"):
        load_letor(path, zero_based=zero_based)


def test_index_0_in_a_file_read_one_based_says_where_indices_start(tmp_path):
    path = write(tmp_path, "1 qid:1 0:1 2:1\n")
    with pytest.raises(ValueError, match=r"line 1: feature index 0 in token '0:1' is out of range "
                                         r"\(indices start at 1; pass zero_based=True"):
        load_letor(path, zero_based=False)


def test_scattered_queries_are_logged_once_per_file(tmp_path, caplog):
    path = write(tmp_path, "1 qid:5 1:1\n0 qid:2 1:2\n0 qid:5 1:3\n1 qid:2 1:4\n0 qid:5 1:5\n")
    with caplog.at_level(logging.INFO, logger="ssvm.datasets.letor"):
        load_letor(path)
    logged = [r.getMessage() for r in caplog.records if "reappears" in r.getMessage()]
    assert logged == [f"{path}, line 3: qid:5 reappears after other queries (first block starts at line 1); "
                      "its rows form one query, as RankSVM groups rows by qid"]


@pytest.mark.parametrize("n_features, shape", [(None, (0, 0)), (3, (0, 3))])
def test_a_file_without_rows_reads_as_no_rows(tmp_path, n_features, shape):
    X, relevance, qid = load_letor(write(tmp_path, "# only a comment\n\n"), n_features=n_features)
    assert X.shape == shape and X.nnz == 0
    assert relevance.shape == qid.shape == (0,)
