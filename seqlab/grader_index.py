"""What the hidden graders hold -- each test's function and the metadata of its ``@grades``
marker (title, weight, visibility) -- read by collecting them the way ``seqlab grade`` does,
without running a single test.

``seqlab config`` uses it to refuse a ``test_weights`` or ``test_visibility`` pattern that
matches no test: a title reworded in a grader would otherwise silently move points (or the
hiding) back to the marker's.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

from .errors import SeqlabError
from .paths import GRADERS_DIR

# What pytest reads from the environment on every pytest.main: the instructor's own options for
# *their* test runs (PYTEST_ADDOPTS="-v", extra plugins) are not the graders' options. Seen when a
# CI run with PYTEST_ADDOPTS=-v made every grading fail ("unrecognized arguments: -v": the
# graders' run turns the terminal plugin off).
_PYTEST_ENVIRONMENT = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")


@contextlib.contextmanager
def pytest_alone():
    """pytest.main as the grader calls it: without the caller's pytest options from the environment."""
    saved = {name: os.environ.pop(name) for name in _PYTEST_ENVIRONMENT if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


class GraderCollectionError(SeqlabError):
    """The graders could not be collected (a syntax error, an import that fails)."""


def collect_grader_tests(graders_dir: Path = GRADERS_DIR) -> list:
    """Every grader test as a ``TestRecord`` (function, title, weight, visibility), in collection order.

    The grading plugin itself does the collecting, so a title here is exactly the title that
    ``grading_config.yaml``'s patterns are matched against when grading.
    """
    import pytest

    from .grading.plugin import SeqlabPlugin

    graders_dir = Path(graders_dir)
    # Nothing runs, so nothing needs a student, the references or a config.
    plugin = SeqlabPlugin(student=None, reference=None, config=None, device="cpu", seed=0)
    args = [
        str(graders_dir),
        "--collect-only",
        "--import-mode=importlib",
        f"--rootdir={graders_dir}",
        "-c",
        str(graders_dir / "pytest.ini"),
        "-p",
        "no:cacheprovider",
        "-p",
        "no:terminal",
        "-W",
        "ignore::UserWarning",
    ]
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), pytest_alone():
        exit_code = pytest.main(args, plugins=[plugin])
    if exit_code not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED) or plugin.collection_errors:
        detail = "; ".join(plugin.collection_errors) or sink.getvalue()[-2000:].strip()
        raise GraderCollectionError(
            f"{graders_dir}: the graders could not be collected (pytest exit {int(exit_code)}): {detail}"
        )
    return list(plugin.records.values())


def titles_by_function(graders_dir: Path = GRADERS_DIR) -> dict[str, list[str]]:
    """``{"optimizers.adam": ["matches torch.optim.Adam [float64]", ...], ...}``."""
    titles: dict[str, list[str]] = {}
    for record in collect_grader_tests(graders_dir):
        titles.setdefault(record.function, []).append(record.title)
    return titles
