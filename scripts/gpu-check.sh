#!/usr/bin/env bash
# The GPU path in one command, on a machine with an NVIDIA GPU; about 5 minutes with the set-up.
#   tests      every test that takes a device, on the CPU and on CUDA (SEQLAB_TEST_DEVICES=cpu,cuda)
#   grade      the example submission of `seqlab demo`, graded with --device cuda --sandbox bwrap:
#              the score of the same seed on the CPU, or a failure
#   reference  of those tests, the references against PyTorch on CUDA: how many ran in float32
#              and in float64 (none is a failure: the CUDA cases were not collected)
# and one summary line at the end: gpu-check: PASS|FAIL tests=... grade=... reference=... (N s).
# Exit 0 when all three pass, 1 when one fails, 2 without a CUDA device (nothing is checked).
#
# Set-up: `make setup` (the system packages, .venv from the lock) when .venv is missing. The lock's
# torch is the CPU build, so the checks run in .venv-gpu, a venv that sees the machine's own
# packages (--system-site-packages): the machine's torch when it has CUDA, else torch==TORCH_VERSION
# from PyPI, whose default Linux build is the CUDA one (several GB). The lock's other packages are
# installed there with their hashes. SEQLAB_GPU_PYTHON=/path/to/python uses that interpreter as is.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q "^GPU "; then
  echo "gpu-check: no CUDA device here (nvidia-smi lists no GPU); nothing checked" >&2
  exit 2
fi
. scripts/defaults.sh
has_cuda() { "$1" -c "import sys, torch; sys.exit(not torch.cuda.is_available())" 2>/dev/null; }
PY="${SEQLAB_GPU_PYTHON:-}"
if [ -z "$PY" ]; then
  [ -x .venv/bin/python ] || make setup
  PY=.venv-gpu/bin/python
  if [ ! -x "$PY" ]; then
    "${PYTHON:-python3}" -m venv --system-site-packages .venv-gpu
    # the lock without its CPU torch block (the pin and its --hash lines)
    awk '/^torch==/ { skip = 1 } skip { if (!/\\$/) skip = 0; next } { print }' "$(defaults LOCK)" >.venv-gpu/lock-without-torch.txt
    .venv-gpu/bin/pip install -q --require-hashes --no-deps -r .venv-gpu/lock-without-torch.txt
    .venv-gpu/bin/pip install -q --no-deps --no-build-isolation -e .
  fi
  if ! has_cuda "$PY"; then
    .venv-gpu/bin/pip install -q "torch==$(defaults TORCH_VERSION)"
  fi
fi
if ! has_cuda "$PY"; then
  echo "gpu-check: torch in $PY sees no CUDA device: $("$PY" -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>&1)" >&2
  exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
verdict=PASS

# tests and reference: one run of every test file with a test that takes the device fixture
mapfile -t files < <(grep -rlE --include='test_*.py' 'def test_[a-z0-9_]*\([^)]*\bdevice\b' tests | sort)
if SEQLAB_TEST_DEVICES=cpu,cuda timeout 240 "$PY" -m pytest -q -p no:randomly -n 4 \
  --junitxml="$work/tests.xml" "${files[@]}" >"$work/tests.log" 2>&1; then
  tests_ok=1
else
  tests_ok=0
  verdict=FAIL
  tail -30 "$work/tests.log" >&2
fi
read -r tests reference < <("$PY" - "$work/tests.xml" <<'PY'
import os
import sys
import xml.etree.ElementTree as ET

# pytest may have died before writing its report: then nothing ran, and that is a failure
cases = list(ET.parse(sys.argv[1]).iter("testcase")) if os.path.exists(sys.argv[1]) else []
bad = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
passed = len(cases) - len(bad) - sum(c.find("skipped") is not None for c in cases)
ref = [c for c in cases if "cuda" in c.get("name", "") and c.get("classname", "").startswith("tests.reference.")]
counts = {d: [c for c in ref if d in c.get("name", "")] for d in ("float32", "float64")}
ok = {d: sum(c.find("failure") is None and c.find("error") is None and c.find("skipped") is None for c in cs) for d, cs in counts.items()}
reference = ",".join(f"{d}:{ok[d]}/{len(counts[d])}" for d in counts)
print(f"{passed}/{len(cases)}", "OK:" + reference if all(counts.values()) and all(ok[d] == len(counts[d]) for d in counts) else "FAIL:" + reference)
PY
)
if [ "$tests_ok" = 0 ]; then tests="FAIL:$tests"; fi
case "$reference" in FAIL:*) verdict=FAIL ;; esac

# grade: the example submission, sandboxed (--sandbox bwrap fails rather than fall back), on CUDA
# and on the CPU with one seed: the same bugs must cost the same points on both devices
"$PY" -c "import sys; from pathlib import Path; from seqlab.demo import assemble; assemble(Path(sys.argv[1]))" "$work/submission"
score() {
  timeout 240 "$PY" -m seqlab grade "$work/submission" --out "$work/$1" --device "$1" --sandbox bwrap \
    --seed 1 --quiet >"$work/$1.log" 2>&1 && grep -q "\"device\": \"$1" "$work/$1/seqlab_result.json" \
    && tail -1 "$work/$1.log" | cut -d' ' -f1-3 | tr -d ' '
}
cuda_score="$(score cuda)" || cuda_score=""
cpu_score="$(score cpu)" || cpu_score=""
if [ -n "$cuda_score" ] && [ "$cuda_score" = "$cpu_score" ]; then
  grade="OK:$cuda_score"
else
  grade="FAIL:cuda=${cuda_score:-none},cpu=${cpu_score:-none}"
  verdict=FAIL
  tail -20 "$work/cuda.log" >&2
fi
echo "gpu-check: $verdict tests=$tests grade=$grade reference=$reference ($((SECONDS - started)) s)"
[ "$verdict" = PASS ]
