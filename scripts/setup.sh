#!/usr/bin/env bash
# One-time set-up: a venv in .venv with the CPU build of torch and seqlab[instructor].
# Idempotent: a second run only checks. torch is pinned first so pip never resolves the
# multi-GB CUDA build while a CPU wheel that satisfies the range lies on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
TORCH_VERSION="${SEQLAB_TORCH:-$(sed -n 's/^TORCH_VERSION = "\(.*\)"$/\1/p' seqlab/defaults.py)}"  # one source: seqlab/defaults.py
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  # Only ever a CPU build: the +cpu wheel by name (found on the course machines' local wheel
  # folder, no download), else from PyTorch's CPU index. A plain `torch` from PyPI would be the
  # multi-GB CUDA build on Linux.
  .venv/bin/pip install -q --disable-pip-version-check "torch==${TORCH_VERSION}+cpu" 2>/dev/null \
    || .venv/bin/pip install -q --disable-pip-version-check "torch==${TORCH_VERSION}" \
         --index-url "$(sed -n 's/^TORCH_CPU_INDEX = "\(.*\)"$/\1/p' seqlab/defaults.py)" --extra-index-url https://pypi.org/simple
fi
# Re-install whenever pyproject.toml changed since the last install (a new dependency), not only
# when an import fails: an existing .venv must pick up what a pull added.
stamp=.venv/.pyproject.sha256
if ! sha256sum -c --status "$stamp" 2>/dev/null; then
  .venv/bin/pip install -q --disable-pip-version-check -e ".[instructor]"
  # jsonschema imports rfc3987-syntax whenever it is installed (jupyter-events asks for
  # jsonschema[format-nongpl]), only to check "iri" formats, which nothing here uses; the import
  # compiles 38 grammars, ~0.9 s of CPU in every process that loads nbformat: each nbgrader
  # command, notebook grading server and test worker (~20 s of the test suite's CPU).
  .venv/bin/pip uninstall -q -y rfc3987-syntax
  sha256sum pyproject.toml > "$stamp"
fi
