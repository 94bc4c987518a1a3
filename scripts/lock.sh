#!/usr/bin/env bash
# `make lock`: regenerate the locks from pyproject.toml, on purpose only (a set-up never does).
# Each lock pins every package to one version with the sha256 of its files, so two set-ups a
# month apart install the same bytes, and a changed file on an index fails the install instead
# of running. Resolved for the machines that install them: Linux x86_64 and the Python of
# seqlab/defaults.py; torch is the CPU build of TORCH_VERSION there.
#   LOCK          seqlab[instructor]: the course venv, CI, the tests
#   GRADING_LOCK  seqlab[grading]: the Gradescope image (no nbgrader, no Jupyter)
# (both paths: seqlab/defaults.py)
# Students are not locked: the released repository's pyproject keeps its bounded ranges.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/defaults.sh
TORCH_VERSION="$(defaults TORCH_VERSION)"
PYTHON_VERSION="$(defaults PYTHON_VERSION)"
[ -x .venv/bin/python ] || python3 -m venv .venv
if [ ! -x .venv/bin/uv ]; then
  # a tool for this script only: seqlab never imports it, so it is no dependency of the project
  .venv/bin/pip install -q --disable-pip-version-check uv
fi
# Where the +cpu wheel is: the machine's own wheel folder when pip is configured with one (no
# download), else PyTorch's CPU index. PyPI has only the CUDA build under torch's name.
links="${PIP_FIND_LINKS:-$(.venv/bin/pip config get global.find-links 2>/dev/null || true)}"
links="${links:-$(defaults TORCH_CPU_INDEX)/torch/}"
lock() {
  local extra=$1 out=$2
  shift 2
  # jsonschema imports rfc3987-syntax whenever it is installed (jupyter-events asks for
  # jsonschema[format-nongpl]), only to check "iri" formats, which nothing here uses; the import
  # compiles 38 grammars, ~0.9 s of CPU in every process that loads nbformat: each nbgrader
  # command, notebook grading server and test worker (~20 s of the test suite's CPU). Left out,
  # it is never installed: the locks are installed with --no-deps.
  echo "torch==${TORCH_VERSION}+cpu" | .venv/bin/uv pip compile pyproject.toml - --extra "$extra" \
    --generate-hashes --no-emit-index-url --python-version "$PYTHON_VERSION" \
    --python-platform x86_64-manylinux_2_28 --find-links "$links" --no-emit-package rfc3987-syntax \
    --custom-compile-command "make lock" --quiet --output-file "$out" "$@"
  echo "wrote $out"
}
mkdir -p "$(dirname "$(defaults LOCK)")" "$(dirname "$(defaults GRADING_LOCK)")"
lock instructor "$(defaults LOCK)"
# within the instructor lock: the Gradescope image grades with the versions the tests ran with
lock grading "$(defaults GRADING_LOCK)" --constraint "$(defaults LOCK)"
