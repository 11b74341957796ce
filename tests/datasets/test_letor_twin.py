"""The compiled LETOR reader against its slow twin, the pure-Python reader it replaced (``_letor_twin``).

Random files, as bytes: labels, ``qid:`` and ``index:value`` tokens in many spellings (exponents,
signs, leading zeros, huge, tiny, subnormal and underflowing numbers, bad tokens), unsorted and
repeated indices, comments (non-ASCII and invalid UTF-8 in them too), blank lines, ``\\n`` /
``\\r\\n`` / ``\\r`` endings, a byte-order mark, gzip, every index base, ``n_features`` and ``.query``
files; read in chunks as small as one byte, so that a line, a number or a ``\\r\\n`` is cut
anywhere. Both readers must give the same arrays bit for bit, or the same error message. The twin
crashed (StopIteration, OverflowError, a negative shape) on a few inputs where the reader now
raises a ValueError naming the line or returns a matrix without columns; those are checked as such.
"""

import gzip

import numpy as np
import pytest
from _letor_twin import _read_letor as twin_read_letor
from hypothesis import given, settings
from hypothesis import strategies as st

from ssvm.datasets.letor import _read_letor

LABELS = ["0", "1", "2", "3", "4", "+1", "-1", "0.5", "-0", "1e0", ".5", "5.", "2E+0", "1.25e-3", "007"]
ODD_LABELS = ["abc", "nan", "-inf", "1_0", "1e400", "\u0661", "--1", "+", "1e-400", "+-1", "0x1", "1e", "1:2"]
QIDS = [0, 1, 2, 3, 7, 12]
ODD_QIDS = ["qid:-1", "qid:x", "qid:", "qid:+3", "qid:9223372036854775807", "qid:-0", "qid:1.0", "qid:003"]
ODD_INDICES = ["-1", "a", "", "+2", "1.5", "99999999999999999999", "9999999999", "0003", "qid"]
ODD_VALUES = ["x", "inf", "nan", "", "1:2", "+2", "1e-400", "4.9e-324", "1e-310", "1.7976931348623157e308",
              "1e400", "-0", "1_5", "0x10", "1e+", ".", "+.5e-3", "-.0", "12345678901234567890123"]
SEPARATORS = [" ", " ", " ", "\t", "  ", " \t ", "\x0b", "\x0c", "\x1c", "\x1f"]
COMMENTS = [b"# c", b"#docid = GX029-35-5894638 inc = 0.01 prob = 0.8", b"# \xc3\xa9t\xc3\xa9", b"#\xff\xfe",
            b"#", b"# qid:1 1:2"]
BLANK_LINES = [b"", b"   ", b"\t", b"# only a comment", b"  #x", b"\x0c"]
ENDINGS = [b"\n", b"\r\n", b"\r"]
NON_ASCII_SPACES = ["\xa0", "\x85", "\u3000"]


def spell_value(value, style):
    return [repr, lambda v: f"{v:.17g}", lambda v: f"{v:e}", lambda v: f"{v:.3f}", lambda v: f"{v:.6g}",
            lambda v: f"{v:E}"][style](value)


@st.composite
def data_line(draw, with_qid, uses_zero):
    odd = draw(st.integers(0, 19)) == 0  # one line in 20 has an odd or bad token somewhere
    tokens = [draw(st.sampled_from(ODD_LABELS if odd and draw(st.booleans()) else LABELS))]
    if draw(st.integers(0, 60)) == 0:
        with_qid = not with_qid  # a row that breaks the file's qid: rule
    qid = None
    if with_qid:
        if odd and draw(st.booleans()):
            tokens.append(draw(st.sampled_from(ODD_QIDS)))
        else:
            qid = draw(st.sampled_from(QIDS))
            tokens.append(f"qid:{qid}")
    indices = draw(st.lists(st.integers(0 if uses_zero else 1, 12), unique=True, max_size=6))
    if draw(st.booleans()):
        indices.sort()
    if indices and draw(st.integers(0, 15)) == 0:
        indices.insert(draw(st.integers(0, len(indices))), draw(st.sampled_from(indices)))  # a repeat
    for index in indices:
        index_text = draw(st.sampled_from(ODD_INDICES)) if odd and draw(st.integers(0, 3)) == 0 else str(index)
        if draw(st.integers(0, 4)) == 0:
            value_text = draw(st.sampled_from(ODD_VALUES)) if odd else draw(st.sampled_from(["0", "1", "-0", "2.5"]))
        else:
            value = draw(st.floats(-1e300, 1e300, allow_nan=False, allow_subnormal=True)
                         | st.floats(-1e-300, 1e-300) | st.integers(-1000, 1000).map(float))
            value_text = spell_value(value, draw(st.integers(0, 5)))
        tokens.append(f"{index_text}:{value_text}")
    if odd and draw(st.integers(0, 3)) == 0:
        tokens.insert(draw(st.integers(1, len(tokens))), draw(st.sampled_from(["qid:4", "3", "1:2:3", "\u0661:1"])))
    separators = [draw(st.sampled_from(SEPARATORS)) for _ in tokens]
    if odd and draw(st.integers(0, 3)) == 0:
        separators[-1] = draw(st.sampled_from(NON_ASCII_SPACES))  # a space outside ASCII
    text = draw(st.sampled_from(["", " ", "\t"]))
    text += "".join(token + separator for token, separator in zip(tokens, separators))
    line = text.rstrip(" \t") if draw(st.booleans()) else text
    raw = line.encode("utf-8")
    if draw(st.integers(0, 3)) == 0:
        raw += draw(st.sampled_from([b"", b" "])) + draw(st.sampled_from(COMMENTS))
    return raw, qid


@st.composite
def letor_file(draw):
    with_qid, uses_zero = draw(st.booleans()), draw(st.integers(0, 2)) == 0
    lines, qids = [], []
    for _ in range(draw(st.integers(0, 12))):
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(BLANK_LINES)))
        else:
            raw, qid = draw(data_line(with_qid, uses_zero))
            lines.append(raw)
            qids.append(qid)
    endings = [draw(st.sampled_from(ENDINGS)) for _ in lines]
    if lines and draw(st.booleans()):
        endings[-1] = b""  # no terminator on the last line
    content = b"".join(line + ending for line, ending in zip(lines, endings))
    if draw(st.integers(0, 5)) == 0:
        content = b"\xef\xbb\xbf" + content
    return content, qids


def query_sizes(choice, qids, data):
    """Sizes for a .query file: one query, the runs of the generated qids, or random ones."""
    if choice == "one" and qids:
        return [len(qids)]
    if choice == "runs" and qids:
        runs = np.flatnonzero(np.r_[True, [a != b for a, b in zip(qids[1:], qids[:-1])], True])
        return np.diff(runs).tolist()
    return data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))


def read_both(path, query_path, n_features, zero_based, chunk_bytes):
    """(reader's result or error, twin's result or error)."""
    outcomes = []
    for read, kwargs in ((_read_letor, {"chunk_bytes": chunk_bytes}), (twin_read_letor, {})):
        try:
            outcomes.append(read(path, query_path, n_features, zero_based, **kwargs))
        except Exception as exc:  # the twin's crashes are checked below
            outcomes.append(exc)
    return outcomes


def assert_same_result(got, expected, *, columns=None):
    X, relevance, qid, zero_based = got
    X_twin, relevance_twin, qid_twin, zero_based_twin = expected
    assert X.format == "csr" and X.dtype == np.float64
    assert X.shape == (X_twin.shape if columns is None else (X_twin.shape[0], columns))
    assert X.indices.dtype == X_twin.indices.dtype and X.indptr.dtype == X_twin.indptr.dtype
    np.testing.assert_array_equal(X.indptr, X_twin.indptr)
    np.testing.assert_array_equal(X.indices, X_twin.indices)
    np.testing.assert_array_equal(X.data.view(np.int64), X_twin.data.view(np.int64))  # bit for bit (-0.0)
    np.testing.assert_array_equal(relevance.view(np.int64), relevance_twin.view(np.int64))
    assert relevance.dtype == np.float64 and qid.dtype == np.int64
    np.testing.assert_array_equal(qid, qid_twin)
    assert zero_based == zero_based_twin


def check_against_twin(path, query_path, n_features, zero_based, chunk_bytes):
    got, expected = read_both(path, query_path, n_features, zero_based, chunk_bytes)
    columns = None
    if isinstance(expected, ValueError) and "'shape' elements cannot be negative" in str(expected):
        # no index anywhere, read 1-based: the twin asked scipy for -1 columns; the reader gives 0
        expected, columns = read_both(path, query_path, 1, zero_based, chunk_bytes)[1], 0
    if isinstance(expected, StopIteration):  # the twin's crash on a non-ASCII space
        assert isinstance(got, ValueError) and "(non-ASCII whitespace)" in str(got), got
    elif isinstance(expected, OverflowError):  # the twin's crash on a 20-digit index
        assert isinstance(got, ValueError) and ", line " in str(got), got
    elif isinstance(expected, Exception):
        assert isinstance(expected, ValueError), repr(expected)
        assert isinstance(got, ValueError) and str(got) == str(expected), (got, expected)
    else:
        assert not isinstance(got, Exception), (got, path.read_bytes())
        assert_same_result(got, expected, columns=columns)


@settings(max_examples=400, deadline=None)
@given(
    file=letor_file(),
    zero_based=st.sampled_from([True, False, "auto"]),
    n_features=st.none() | st.integers(1, 12),
    chunk_bytes=st.sampled_from([1, 2, 3, 5, 16, 1 << 20]),
    compressed=st.booleans(),
    query=st.sampled_from([None, None, "one", "runs", "random"]),
    data=st.data(),
)
def test_random_files_read_as_the_python_reader_reads_them(tmp_path_factory, file, zero_based, n_features,
                                                            chunk_bytes, compressed, query, data):
    content, qids = file
    folder = tmp_path_factory.mktemp("twin")
    path = folder / ("data.txt.gz" if compressed else "data.txt")
    path.write_bytes(gzip.compress(content) if compressed else content)
    query_path = None
    if query is not None:
        query_path = folder / "sizes.query"
        query_path.write_text("".join(f"{size}\n" for size in query_sizes(query, qids, data)))
    check_against_twin(path, query_path, n_features, zero_based, chunk_bytes)


@pytest.mark.parametrize("chunk_bytes", [1 << 20, 4096, 97])
def test_a_large_mslr_like_file_in_chunks(tmp_path, chunk_bytes):
    rng = np.random.default_rng(5)
    lines = []
    for row in range(3000):
        present = np.flatnonzero(rng.random(136) < 0.8) + 1
        values = np.where(rng.random(present.size) < 0.5, rng.integers(0, 500, present.size),
                          np.round(rng.lognormal(0, 3, present.size) * rng.choice([-1, 1], present.size), 6))
        rng.shuffle(present) if row % 97 == 0 else None  # an unsorted row now and then
        features = " ".join(f"{i}:{v:.6g}" if row % 2 else f"{i}:{float(v)!r}" for i, v in zip(present, values))
        comment = f" #docid = {row}" if row % 3 == 0 else ""
        lines.append(f"{rng.integers(0, 5)} qid:{row // 120 + 1} {features}{comment}")
    path = tmp_path / "mslr.txt"
    path.write_bytes(("\r\n" if chunk_bytes == 97 else "\n").join(lines).encode())
    got, expected = read_both(path, None, None, "auto", chunk_bytes)
    assert_same_result(got, expected)
    assert got[0].shape == (3000, 136)


def test_what_the_twin_crashed_on(tmp_path):
    cases = {
        "1 qid:1 1:2\xa0\n": r"line 1: bad separator '\\xa0' \(non-ASCII whitespace\)",
        "1 1:1\n1 99999999999999999999:1\n": r"line 2: feature index 99999999999999999999 in token "
                                             r"'99999999999999999999:1' does not fit in 64 bits",
        "1 qid:1 1:1\n1 qid:99999999999999999999 1:1\n": r"line 2: query id 'qid:99999999999999999999' does not "
                                                           "fit in 64 bits",
    }
    for text, message in cases.items():
        path = tmp_path / "data.txt"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=rf"data\.txt, {message}"):
            _read_letor(path, None, None, "auto")
    for text in ("", "# nothing but a comment\n\n", "1\n0 # labels only\n", "1 qid:4\n0 qid:4\n"):
        path.write_text(text)
        X, relevance, qid, _ = _read_letor(path, None, None, "auto")
        assert X.shape == (relevance.size, 0) and qid.size == relevance.size
