#!/usr/bin/env bash
# One-time set-up: a venv in .venv holding exactly the lock (seqlab/defaults.py's LOCK: every
# package of seqlab[instructor] pinned with its hashes, torch the CPU build), then seqlab itself.
# Idempotent: a second run only checks. `make lock` regenerates the lock; this never does.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
. scripts/defaults.sh
LOCK="$(defaults LOCK)"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# Re-install whenever the lock or pyproject.toml changed since the last install, not only when an
# import fails: an existing .venv must pick up what a pull added.
stamp=.venv/.lock.sha256
if ! sha256sum -c --status "$stamp" 2>/dev/null; then
  # --no-deps: the lock is the whole environment, so pip resolves nothing of its own (and leaves
  # out what the lock leaves out on purpose, see scripts/lock.sh).
  install=(.venv/bin/pip install -q --disable-pip-version-check --require-hashes --no-deps -r "$LOCK")
  # The +cpu torch wheel comes from the machine's wheel folder when pip is configured with one (no
  # download), else from PyTorch's CPU index, asked only then: PyPI has only the CUDA build.
  "${install[@]}" 2>/dev/null || "${install[@]}" --extra-index-url "$(defaults TORCH_CPU_INDEX)"
  # The lock's setuptools builds seqlab: nothing outside the lock is downloaded.
  .venv/bin/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
  # pip keeps what the lock no longer lists; this one costs every nbgrader process 0.9 s.
  .venv/bin/pip uninstall -q -y rfc3987-syntax 2>/dev/null || true
  sha256sum pyproject.toml "$LOCK" >"$stamp"
fi
