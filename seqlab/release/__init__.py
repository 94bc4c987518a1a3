"""The student repository: ``seqlab release OUT_DIR``.

Three steps, one module each, in the order the data flows:

* :mod:`.render` -- every file a student gets, in memory: the stubs ``seqlab build`` writes, the
  public tests, a README, a minimal ``pyproject.toml`` and ``.github/workflows/check.yml``;
* :mod:`.leaks` -- the leak check every one of those files (and every file already in the
  target folder) must pass before anything ships;
* :mod:`.write` -- writing into the folder, byte-reproducibly, with a manifest so a later
  release removes only what an earlier one wrote.

The instructor's side of GitHub autograding (the grading workflow, its matrix, the gradebook of
its results) is :mod:`seqlab.classroom`.
"""

from __future__ import annotations

from ..defaults import PYTHON_VERSION as DEFAULT_PYTHON
from ..defaults import TORCH_CPU_INDEX as CPU_INDEX
from ..defaults import TORCH_VERSION as DEFAULT_TORCH
from .leaks import Leak, LeakError, ReleaseError, Secrets, collect_secrets, read_tree, scan
from .render import PUBLIC_TESTS_DIR, course_view, render_release, template_environment
from .write import MANIFEST, ReleaseReport, manifest_text, release

__all__ = [
    "CPU_INDEX",
    "DEFAULT_PYTHON",
    "DEFAULT_TORCH",
    "MANIFEST",
    "PUBLIC_TESTS_DIR",
    "Leak",
    "LeakError",
    "ReleaseError",
    "ReleaseReport",
    "Secrets",
    "collect_secrets",
    "course_view",
    "manifest_text",
    "read_tree",
    "release",
    "render_release",
    "scan",
    "template_environment",
]
