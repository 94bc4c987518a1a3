"""The generated bank of malformed notebooks (``make test-banks``): 800 notebooks through the reader,
200 classes with one of them mixed into the honest students, through autograde's reader stage.

Each generated notebook is either read into a notebook that every later step takes without an
exception, or refused with an ExportError naming the file; in a class, the honest students are
exported for grading every time and the bad one is named or exported, never a traceback.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from tests.nbgrader._faults import (
    GENERATED,
    assert_honest_exported,
    bad_notebook_bytes,
    hand_in,
    make_course,
    reader_stage,
)
from tests.nbgrader.test_handin import check_reader

pytestmark = [pytest.mark.bank, pytest.mark.slow]


@settings(GENERATED, max_examples=800)
@given(bad_notebook_bytes())
def test_bank_generated_notebooks_are_read_or_refused_by_name(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("nb") / "optimizers.ipynb"
    path.write_bytes(content)
    check_reader(path)


@pytest.fixture(scope="module")
def bank_course(tmp_path_factory):
    return make_course(tmp_path_factory.mktemp("bank-course"))


@settings(GENERATED, max_examples=200)
@given(bad_notebook_bytes())
def test_bank_one_generated_notebook_in_a_class_costs_only_its_student(bank_course, tmp_path_factory, content):
    hand_in(bank_course, "mallory", content)
    exports = tmp_path_factory.mktemp("exports")
    stage = reader_stage(bank_course, exports)
    assert_honest_exported(stage, exports)
    mallory = stage["outcomes"]["mallory"]
    if mallory.reason:  # refused: named, and nothing of it handed to grade-all
        assert "mallory" in mallory.reason and "mallory" not in stage["folders"]
        mallory.reason.encode("utf-8")
    else:  # read: exported like anyone's
        assert (exports / stage["folders"]["mallory"] / "exercises" / "optimizers.py").is_file()
