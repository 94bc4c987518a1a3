"""The optimizers class the two nbgrader end-to-end tests share (``_class.py``)."""

from __future__ import annotations

import pytest

from tests.nbgrader._class import HandedIn, hand_in_optimizers


@pytest.fixture(scope="session")
def optimizers_class(tmp_path_factory) -> HandedIn:
    """Built and autograded by the real nbgrader once per worker; its users carry NBGRADER_CLASS."""
    return hand_in_optimizers(tmp_path_factory.mktemp("nbgrader-class"))
