"""A topic whose module lacks a function costs the functions that use it, not every module
importing it: the labs import other topics' functions inside themselves."""

from __future__ import annotations

import shutil

from seqlab import contract
from seqlab.paths import SOLUTIONS_DIR
from seqlab.student.loader import load_submission


def test_an_optimizers_module_without_clip_grad_norm_leaves_rnn_loaded(tmp_path):
    exercises = tmp_path / "exercises"
    shutil.copytree(SOLUTIONS_DIR, exercises)
    optimizers = exercises / "optimizers.py"
    optimizers.write_text(optimizers.read_text().replace("def clip_grad_norm(", "def clip_grad_norm_2("))
    modules, errors = load_submission(exercises)
    # at module top, `from .optimizers import adam, clip_grad_norm` failed rnn.py as a whole
    assert errors == {} and set(modules) == set(contract.MODULES)
    assert callable(modules["rnn"].rnn_cell)
