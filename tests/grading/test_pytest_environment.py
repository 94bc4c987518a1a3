"""The caller's own pytest options stay theirs: a grading (and the graders' index) runs pytest
without PYTEST_ADDOPTS or PYTEST_PLUGINS from the environment. An instructor's CI with
PYTEST_ADDOPTS=-v once made every grading fail with "unrecognized arguments: -v"."""

from __future__ import annotations

import os

from seqlab.grader_index import collect_grader_tests, pytest_alone
from seqlab.grading import grade_submission, grading_settings
from tests.mutants import make_submission


def test_a_grading_ignores_the_callers_pytest_options(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_ADDOPTS", "-v --durations=5")
    monkeypatch.setenv("PYTEST_PLUGINS", "no_such_plugin_module")
    result = grade_submission(make_submission(tmp_path / "s"), grading_settings(seed=3, only="optimizers.sgd"))
    assert result.tests and result.score == result.max_score, [t.output[:200] for t in result.tests]
    assert collect_grader_tests()  # the index, too
    assert os.environ["PYTEST_ADDOPTS"] == "-v --durations=5"  # given back after


def test_the_options_are_given_back_even_when_pytest_raises(monkeypatch):
    monkeypatch.setenv("PYTEST_ADDOPTS", "-x")
    try:
        with pytest_alone():
            assert "PYTEST_ADDOPTS" not in os.environ
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert os.environ["PYTEST_ADDOPTS"] == "-x"
