"""The generated bank of malformed answers files (``make test-banks``): 500 files through the
reader and the marker, 200 classes with one of them (under a generated file name) beside the
honest students, through grade-all's grading of the folder. Every bad file is graded as its
owner's or named in an error row, the honest students are graded every time, and the gradebook
is always written; never a traceback."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from tests.exam._faults import GENERATED, bad_answers_bytes, bad_names
from tests.exam.test_answers_faults import check_answers_file, check_class

pytestmark = [pytest.mark.bank, pytest.mark.slow]


@settings(GENERATED, max_examples=500)
@given(bad_answers_bytes())
def test_bank_generated_answers_files_are_read_or_refused_by_name(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("answers") / "s9.yaml"
    path.write_bytes(content)
    check_answers_file(path)


@settings(GENERATED, max_examples=200)
@given(bad_names, bad_answers_bytes())
def test_bank_a_generated_bad_file_in_a_class_costs_its_student_only(tmp_path_factory, name, content):
    check_class(tmp_path_factory.mktemp("class"), name, content)
