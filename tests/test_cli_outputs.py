"""Nothing lost (issue 36 item 1): no command writes over one of its inputs, every output is written whole or
not at all (a temporary file renamed into place), and an empty file gets one clear line."""

import os
import stat

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

import ssvm._atomic
from ssvm.__main__ import main
from ssvm._atomic import atomic_write, refuse_overwriting


def run(*args):
    return main([str(a) for a in args])


def one_line(capsys):
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("outputs")
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(80, 4)), 4)
    relevance = (X[:, 0] + 0.3 * rng.normal(size=80) > 0.5).astype(float)
    dump_svmlight_file(X, relevance, str(folder / "tiny.dat"), zero_based=False, query_id=np.repeat(np.arange(8), 10))
    assert run("train", folder / "tiny.dat", folder / "model.json") == 0
    return folder


def test_train_refuses_to_write_its_model_over_the_training_file(folder, tmp_path, capsys):
    data = tmp_path / "tiny.dat"
    data.write_bytes((folder / "tiny.dat").read_bytes())
    os.link(data, tmp_path / "hard.dat")
    (tmp_path / "link.dat").symlink_to(data)
    for output in (data, tmp_path / "." / "tiny.dat", tmp_path / "hard.dat", tmp_path / "link.dat"):
        assert run("train", data, output) == 1
        line = one_line(capsys)
        assert line.startswith(f"ssvm train: error: MODEL {output} is the training file {data}"), line
    assert data.read_bytes() == (folder / "tiny.dat").read_bytes()


def test_predict_refuses_to_write_over_the_test_file_or_the_model(folder, tmp_path, capsys):
    data, model = tmp_path / "t2.dat", tmp_path / "m.json"
    data.write_bytes((folder / "tiny.dat").read_bytes())
    model.write_bytes((folder / "model.json").read_bytes())
    assert run("predict", data, model, data) == 1
    assert f"PREDICTIONS {data} is the test file {data}" in one_line(capsys)
    assert run("predict", data, model, model) == 1
    assert f"PREDICTIONS {model} is the model file {model}" in one_line(capsys)
    assert data.read_bytes() == (folder / "tiny.dat").read_bytes()
    assert model.read_bytes() == (folder / "model.json").read_bytes()
    assert run("predict", data, model, tmp_path / "p") == 0  # another path is fine


def test_refusal_compares_resolved_paths_of_a_file_that_does_not_exist_yet(tmp_path):
    with pytest.raises(ValueError, match="is the training file"):
        refuse_overwriting(tmp_path / "sub" / ".." / "new", "MODEL", [("training", tmp_path / "new")])
    refuse_overwriting(tmp_path / "new", "MODEL", [("training", tmp_path / "other")])


class Interrupted(BaseException):
    """Stands for Ctrl-C or a kill at the worst moment: after the data, before the rename."""


@pytest.mark.parametrize("command", ["train", "predict"])
def test_an_interrupted_command_leaves_the_old_file_and_no_partial_one(folder, tmp_path, monkeypatch, command):
    output = tmp_path / "out"
    output.write_text("the old file\n")

    def interrupted(descriptor):
        raise Interrupted

    monkeypatch.setattr(ssvm._atomic.os, "fsync", interrupted)
    args = (("train", folder / "tiny.dat", output) if command == "train"
            else ("predict", folder / "tiny.dat", folder / "model.json", output))
    with pytest.raises(Interrupted):
        run(*args)
    assert output.read_text() == "the old file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary file left behind


def test_atomic_write_replaces_keeps_permissions_and_writes_through_a_link(tmp_path):
    target = tmp_path / "target"
    target.write_text("old")
    target.chmod(0o640)
    (tmp_path / "link").symlink_to(target)
    atomic_write(tmp_path / "link", "new")
    assert target.read_text() == "new" and (tmp_path / "link").is_symlink()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    atomic_write(tmp_path / "fresh", b"bytes")
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "fresh").read_bytes() == b"bytes"
    assert stat.S_IMODE((tmp_path / "fresh").stat().st_mode) == 0o666 & ~umask
    with pytest.raises(FileNotFoundError):
        atomic_write(tmp_path / "missing" / "file", "x")


@pytest.mark.parametrize("content", ["", "# only a comment\n\n   \n"])
def test_a_file_without_rows_gets_one_clear_line(folder, tmp_path, capsys, content):
    empty, scores = tmp_path / "empty.dat", tmp_path / "p"
    empty.write_text(content)
    scores.write_text("")
    for args in (("train", empty, tmp_path / "m.json"), ("predict", empty, folder / "model.json", scores),
                 ("eval", empty, scores)):
        assert run(*args) == 1
        assert one_line(capsys).endswith(f"{empty} has no data rows (it is empty, or holds only comments and "
                                          "blank lines): nothing to rank")
    assert not (tmp_path / "m.json").exists() and scores.read_text() == ""
