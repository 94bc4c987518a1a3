"""Defaults that several parts of seqlab must agree on, each written down once with its reason.

The student workflow, the grading workflow, the Gradescope image and ``scripts/setup.sh`` all
install torch; grade-all, the grading workflow and nbgrader all give up on a submission after
a while. Change a value here and every one of them follows (the scripts and the Makefile read
``TORCH_VERSION``, ``TORCH_CPU_INDEX``, ``PYTHON_VERSION`` and the lock paths from this file with
sed, so keep those lines plain string assignments).
"""

from __future__ import annotations

# The CPU build the course machines carry and the graders are validated against; both GitHub
# workflows and the course venv install exactly this one.
TORCH_VERSION = "2.13.0"
# PyTorch's index of CPU-only wheels: a plain `pip install torch` on Linux pulls the multi-GB
# CUDA build, which neither students nor graders need.
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# The Python of both workflows: the newest the pinned torch ships wheels for on every runner.
PYTHON_VERSION = "3.11"
# The locks (scripts/lock.sh writes them, `make lock`): every package pinned with its hashes,
# resolved for Linux x86_64 and PYTHON_VERSION. The course venv and CI install LOCK; the
# Gradescope image, which grades only, installs GRADING_LOCK. Students get no lock.
LOCK = "requirements/lock.txt"
GRADING_LOCK = "requirements/grading-lock.txt"

# Seconds one submission (or one nbgrader cell, which grades a whole topic) may take before it
# is given up. A correct submission grades in well under a minute of CPU on one core; 900 s
# leaves room for a slow shared runner and a student's O(T^2) loop, and still ends a hang
# inside a 15-minute CI slot.
SUBMISSION_TIMEOUT_S = 900
