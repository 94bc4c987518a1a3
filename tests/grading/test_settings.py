"""GradingSettings: made once from the options, typed and frozen, carried whole."""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError

import pytest

from seqlab.config import load_config
from seqlab.grading import GradingError, GradingSettings, grading_settings
from seqlab.student.sandbox import Sandbox


def test_options_are_resolved_once_into_typed_values():
    settings = grading_settings(sandbox="none", seed="3", protected_dirs=("/x", None))
    assert settings.sandbox == Sandbox("none", "--sandbox none was asked for") and settings.isolated
    assert settings.seed == 3 and settings.protected_dirs == ("/x",) and settings.device == "cpu"
    assert grading_settings(isolated=False).sandbox is None
    with pytest.raises(FrozenInstanceError):
        settings.seed = 4


def test_an_unresolved_value_is_refused_where_it_is_made():
    config = load_config()
    with pytest.raises(TypeError, match="resolved Sandbox"):
        GradingSettings(config=config, sandbox="auto")
    with pytest.raises(TypeError, match="resolved device"):
        GradingSettings(config=config, sandbox=None, device="auto")
    with pytest.raises(GradingError, match="unknown device 'tpu'"):
        grading_settings(device="tpu")


def test_the_sandbox_a_worker_receives_is_the_one_resolved_with_its_reason():
    box = Sandbox("none", "a reason only this test gives")
    settings = grading_settings(sandbox=box)
    assert pickle.loads(pickle.dumps(settings)) == settings  # what grade-all sends each worker
    assert settings.sandbox is box
