"""A submission's module, loaded in this process, is checked once per text and still names its
own file: identical stubs in two students' folders share the check, not the traceback."""

from __future__ import annotations

import traceback

import pytest

from seqlab.student.loader import load_submission, unload
from seqlab.subset.transform import check

SOURCE = """
import torch


def causal_mask(T):
    raise ValueError("looked at " + str(T))
"""


def _failing_frame(folder):
    exercises = folder / "exercises"
    exercises.mkdir(parents=True)
    (exercises / "attention.py").write_text(SOURCE)
    modules, errors = load_submission(exercises, ("attention",))
    assert errors == {}
    with pytest.raises(ValueError) as raised:
        modules["attention"].causal_mask(3)
    return traceback.extract_tb(raised.value.__traceback__)[-1]


def test_the_same_text_in_two_folders_is_checked_once_and_names_each_folder(tmp_path):
    try:
        first = _failing_frame(tmp_path / "alice")
        before = check.cache_info()
        second = _failing_frame(tmp_path / "bob")
        after = check.cache_info()
    finally:
        unload()
    assert after.misses == before.misses and after.hits > before.hits
    assert first.filename == str(tmp_path / "alice" / "exercises" / "attention.py")
    assert second.filename == str(tmp_path / "bob" / "exercises" / "attention.py")
    assert second.line == 'raise ValueError("looked at " + str(T))' and second.lineno == 6
