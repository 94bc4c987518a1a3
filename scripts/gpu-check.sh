#!/usr/bin/env bash
# The GPU path in one command, on a machine with an NVIDIA GPU; a few minutes with the set-up.
#   sandbox    a child started in the bwrap sandbox as the grading starts one, on the CUDA plan
#              (the driver's nodes and files passed in): torch there sees the GPU and computes
#   tests      every test that takes a device, on the CPU and on CUDA (SEQLAB_TEST_DEVICES=cpu,cuda)
#   grade      the references and the example submission of `seqlab demo` (its bugs), each
#              graded with --sandbox bwrap on CUDA and on the CPU with one seed: each must score
#              the same on both devices, the references full marks
#   reference  of those tests, the references against PyTorch on CUDA: how many ran in float32
#              and in float64 (none is a failure: the CUDA cases were not collected)
# and one summary line at the end:
#   gpu-check: PASS|FAIL sandbox=... tests=... grade=... reference=... (N s).
# Exit 0 when all pass, 1 when one fails, 2 without a CUDA device (nothing is checked).
#
# Set-up: `make setup` (the system packages, .venv from the lock) when .venv is missing. The lock's
# torch is the CPU build, so the checks run in .venv-gpu, a venv that sees the machine's own
# packages (--system-site-packages): the machine's torch when it has CUDA, else torch==TORCH_VERSION
# from PyPI, whose default Linux build is the CUDA one (several GB). The lock's other packages are
# installed there with their hashes. SEQLAB_GPU_PYTHON=/path/to/python uses that interpreter as is.
#
# A machine that cannot download (a lent GPU machine with its own torch): on a machine with the
# network, of the same architecture, `scripts/gpu-check.sh --prepare DIR` puts in DIR the wheels
# of CARRY_PACKAGES (pure Python, the lock's pins and hashes) and this machine's bubblewrap with
# the libraries it and libseccomp need. There, SEQLAB_GPU_CARRY=DIR installs the wheels into
# SEQLAB_GPU_PYTHON's environment (hash-checked, no index), and the bubblewrap and libraries the
# machine lacks into /usr/local (as root: that machine is a throwaway). So the whole check is
#   SEQLAB_GPU_PYTHON=python3 SEQLAB_GPU_CARRY=DIR bash scripts/gpu-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
. scripts/defaults.sh
# What the grading needs that a machine with its own torch, numpy, pytest, PyYAML, jinja2, rich,
# matplotlib and safetensors may lack (the lent GPU machines' image has all of those).
CARRY_PACKAGES="restrictedpython pyseccomp"

if [ "${1:-}" = --prepare ]; then
  dir="${2:?usage: scripts/gpu-check.sh --prepare DIR}"
  mkdir -p "$dir/wheels" "$dir/bin" "$dir/lib"
  want="^($(echo "$CARRY_PACKAGES" | tr ' ' '|'))=="
  # each package's block of the lock: its pin and its --hash lines
  awk -v want="$want" '$0 ~ want { keep = 1 } keep { print; if (!/\\$/) keep = 0 }' "$(defaults LOCK)" >"$dir/requirements.txt"
  "${PYTHON:-.venv/bin/python}" -m pip download -q --no-deps --only-binary=:all: --require-hashes \
    -r "$dir/requirements.txt" -d "$dir/wheels"
  bwrap="$(command -v bwrap || echo /usr/bin/bwrap)"
  cp "$bwrap" "$dir/bin/bwrap"
  # its libraries but the C library's own (the loader, libc: the other machine's are used)
  for lib in $(ldd "$bwrap" | awk '$3 ~ /^\// { print $3 }') $(ldconfig -p | awk '/libseccomp\.so\.2 .*x86-64/ { print $NF; exit }'); do
    case "$(basename "$lib")" in libc.so.* | ld-linux*) ;; *) cp -L "$lib" "$dir/lib/" ;; esac
  done
  echo "gpu-check: prepared $dir:" "$dir"/wheels/* "$dir/bin/bwrap" "$dir"/lib/*
  exit 0
fi

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q "^GPU "; then
  echo "gpu-check: no CUDA device here (nvidia-smi lists no GPU); nothing checked" >&2
  exit 2
fi
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
if [ -n "${SEQLAB_GPU_CARRY:-}" ]; then
  carry="$SEQLAB_GPU_CARRY"
  if [ "$(id -u)" = 0 ]; then
    # only what the machine lacks: /usr/local/lib comes first, so a copy would shadow its own
    cache="$(ldconfig -p)"
    for lib in "$carry"/lib/*; do
      [ -e "$lib" ] || continue
      grep -q "^[[:space:]]$(basename "$lib") " <<<"$cache" || cp "$lib" /usr/local/lib/
    done
    ldconfig
    if [ ! -x "${SEQLAB_BWRAP:-/usr/bin/bwrap}" ] && ! command -v bwrap >/dev/null; then
      install -m 755 "$carry/bin/bwrap" /usr/local/bin/bwrap
    fi
  fi
  "$PY" -m pip install -q --no-index --no-deps --require-hashes --find-links "$carry/wheels" -r "$carry/requirements.txt"
fi
if [ -z "${SEQLAB_BWRAP:-}" ] && [ ! -x /usr/bin/bwrap ] && command -v bwrap >/dev/null; then
  SEQLAB_BWRAP="$(command -v bwrap)"
  export SEQLAB_BWRAP
fi
if ! has_cuda "$PY"; then
  echo "gpu-check: torch in $PY sees no CUDA device: $("$PY" -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>&1)" >&2
  exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
verdict=PASS
"$PY" -c "import torch; print('gpu-check: torch', torch.__version__, 'CUDA', torch.version.cuda, 'on', torch.cuda.get_device_name(0))"

# sandbox: one child on the CUDA plan, started as the grading starts one (bwrap, seccomp, rlimits,
# the minimal environment); it says what it saw, and its stderr comes here when it fails
sandbox="$("$PY" - <<'PY'
import os, sys, tempfile
from pathlib import Path

from seqlab.errors import SeqlabError
from seqlab.student import sandbox, spawn
from seqlab.student.seccomp import filter_fd

try:
    box = sandbox.resolve("bwrap").for_device("cuda")
except SeqlabError as exc:  # no bwrap, or no driver's nodes to pass in: it says which
    print("FAIL:" + str(exc).replace(" ", "_"))
    sys.exit()
print("gpu-check: passed into the sandbox:", *(seen for _, seen in box.gpu.devices + box.gpu.read_only), file=sys.stderr)
read, write = os.pipe()
code = (
    "import os, torch\n"
    "try:\n"
    "    x = torch.arange(6.0, device='cuda').reshape(2, 3)\n"
    "    said = 'OK:' + torch.cuda.get_device_name(0).replace(' ', '_') + ',sum=' + str(float((x @ x.T).sum()))\n"
    "except Exception as exc:\n"
    "    said = 'FAIL:' + type(exc).__name__ + ':' + str(exc).replace(' ', '_')[:300]\n"
    f"os.write({write}, said.encode())\n"
)
scratch = Path(tempfile.mkdtemp(prefix="seqlab-student-"))
child_err = Path(tempfile.mkdtemp()) / "stderr"
os.environ["SEQLAB_CHILD_STDERR"] = str(child_err)  # the child's own stderr, read on a failure
seccomp = filter_fd()
fds = [write] + ([seccomp] if seccomp is not None else [])
proc = spawn.launch(code, scratch=scratch, sandbox=box, pass_fds=fds, seccomp_fd=seccomp)
os.close(write)
said = os.read(read, 4096).decode() or "FAIL:nothing_said"
status = proc.wait(timeout=180)
if status:
    said = f"FAIL:exit_{status}:{said}"
if not said.startswith("OK:") and child_err.exists():
    print(child_err.read_text()[-3000:], file=sys.stderr)
print(said)
PY
)" || sandbox="FAIL:the_check_itself_failed"
# [[0,1,2],[3,4,5]] times its transpose: 5 + 14 + 14 + 50
case "$sandbox" in OK:*,sum=83.0) ;; *) verdict=FAIL ;; esac

# grade: the references and the example submission, sandboxed (--sandbox bwrap fails rather than
# fall back), on CUDA and on the CPU with one seed, the four gradings at once: the same code must
# earn the same points on both devices, and the references all of them
"$PY" - "$work" <<'PY'
import sys
from pathlib import Path

from seqlab.demo import assemble
from seqlab.paths import SOLUTIONS_DIR
from seqlab.regions import strip_markers

work = Path(sys.argv[1])
assemble(work / "demo")
exercises = work / "references" / "exercises"
exercises.mkdir(parents=True)
for path in sorted(SOLUTIONS_DIR.glob("*.py")):  # as a student would hand them in: no markers
    (exercises / path.name).write_text(strip_markers(path.read_text(encoding="utf-8")), encoding="utf-8")
PY
score() {  # SUBMISSION DEVICE: writes "points/max" to SUBMISSION-DEVICE.score, nothing on a failure
  SEQLAB_CHILD_STDERR="$work/$1-$2.child" timeout 240 "$PY" -m seqlab grade "$work/$1" --out "$work/$1-$2" \
    --device "$2" --sandbox bwrap --seed 1 --quiet >"$work/$1-$2.log" 2>&1 \
    && grep -q "\"device\": \"$2" "$work/$1-$2/seqlab_result.json" \
    && tail -1 "$work/$1-$2.log" | cut -d' ' -f1-3 | tr -d ' ' >"$work/$1-$2.score"
}
for submission in references demo; do
  for device in cuda cpu; do score "$submission" "$device" & done
done
wait
graded="" failed=""
for submission in references demo; do
  cuda_score="$(cat "$work/$submission-cuda.score" 2>/dev/null)" || cuda_score=""
  cpu_score="$(cat "$work/$submission-cpu.score" 2>/dev/null)" || cpu_score=""
  full=yes  # the references earn every point
  if [ "$submission" = references ] && ! echo "$cuda_score" | awk -F/ '{ exit !($1 + 0 == $2 + 0) }'; then full=no; fi
  if [ -n "$cuda_score" ] && [ "$cuda_score" = "$cpu_score" ] && [ "$full" = yes ]; then
    graded="$graded,$submission=$cuda_score"
  else
    failed="$failed,$submission:cuda=${cuda_score:-none},cpu=${cpu_score:-none}"
    echo "gpu-check: $submission on cuda, the log's end and the sandboxed child's stderr:" >&2
    tail -20 "$work/$submission-cuda.log" >&2
    tail -20 "$work/$submission-cuda.child" >&2 2>/dev/null || true
  fi
done
if [ -z "$failed" ]; then grade="OK:${graded#,}"; else grade="FAIL:${failed#,}"; verdict=FAIL; fi

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

echo "gpu-check: $verdict sandbox=$sandbox tests=$tests grade=$grade reference=$reference ($((SECONDS - started)) s)"
[ "$verdict" = PASS ]
