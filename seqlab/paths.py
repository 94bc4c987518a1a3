"""Where the course lives on disk.

The course (solutions/, graders/, templates/, grading_config.yaml) sits beside the package
in the repository; ``SEQLAB_COURSE`` points elsewhere when an instructor keeps a fork.
"""

from __future__ import annotations

import os
from pathlib import Path

COURSE_ROOT = Path(os.environ.get("SEQLAB_COURSE", Path(__file__).resolve().parent.parent))
SOLUTIONS_DIR = COURSE_ROOT / "solutions"
EXERCISES_DIR = COURSE_ROOT / "exercises"
GRADERS_DIR = COURSE_ROOT / "graders"
TEMPLATES_DIR = COURSE_ROOT / "templates"
CONFIG_PATH = COURSE_ROOT / "grading_config.yaml"
EXAMPLES_DIR = COURSE_ROOT / "examples"
DEFAULT_EXAM = COURSE_ROOT / "exams" / "final.yaml"  # the exam `seqlab exam` works on without --exam
