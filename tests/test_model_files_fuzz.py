"""Model files fuzzed (issue #37): every kind of model round-trips bit for bit, and a file with one field
corrupted is refused with one line naming the field, or loads a model that answers exactly as the saved
one — never a model that fails or answers differently later.

The models are fitted once per module (``model_file_cases``); hypothesis draws the corruption
(``model_file_corruptions``), derandomized so that CI runs the same examples every time. To fuzz
harder, set ``SSVM_MODEL_FUZZ_EXAMPLES`` (examples per kind of model and kind of corruption, 12 by
default).
"""

import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model_file_cases import CASES, answers, assert_same_answers, fit_case
from model_file_corruptions import HOW, corruptions

from ssvm import RankSVM, load_model, save_model

EXAMPLES = int(os.environ.get("SSVM_MODEL_FUZZ_EXAMPLES", 12))  # per kind of model and of corruption


class _Saved(dict):
    """Per case: the model, its inputs, its answers, its file parsed as JSON and the file's path."""

    def __repr__(self):  # hypothesis prints the arguments of a failing example
        return f"<{len(self)} saved models>"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model_files")
    cases = _Saved()
    for name in CASES:
        model, inputs = fit_case(name)
        path = folder / f"{name}.json"
        save_model(model, path, metadata={"case": name})
        cases[name] = (model, inputs, answers(model, inputs), json.loads(path.read_text()), path)
    return cases


@pytest.mark.parametrize("case", CASES)
def test_every_kind_of_model_loads_to_the_same_answers(saved, case):
    model, inputs, expected, document, path = saved[case]
    loaded = load_model(path)
    assert type(loaded) is (RankSVM if type(model).__name__ == "RankSVMCV" else type(model))
    assert_same_answers(answers(loaded, inputs), expected)
    if case != "rank_svm_cv":  # a search is saved as its refitted RankSVM, with that one's parameters
        assert loaded.get_params(deep=True).keys() == model.get_params(deep=True).keys()
    assert load_model(path, with_metadata=True)[1] == {"case": case}


def names_a_field(message, names):
    """Whether ``message`` holds one of ``names`` as a whole word (``C`` is not the C of ``RankSVMCV``)."""
    return any(re.search(rf"(?<!\w){re.escape(str(name))}(?!\w)", message) for name in names)


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("case", CASES)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_a_corrupted_field_is_refused_by_name_or_changes_no_answer(saved, tmp_path_factory, case, how, data):
    model, inputs, expected, document, _ = saved[case]
    corruption = data.draw(corruptions(document, how), label="corruption")
    path = tmp_path_factory.getbasetemp() / f"corrupt_{case}.json"
    path.write_text(corruption.text)
    try:
        loaded = load_model(path)
    except ValueError as error:
        message = str(error)
        assert "\n" not in message and message.startswith(f"{path}: not a valid ssvm model file: ")
        assert names_a_field(message, corruption.names), f"{corruption.what}: {message}"
    else:
        assert_same_answers(answers(loaded, inputs), expected)
