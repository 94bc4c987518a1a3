# Two commands do all the set-up on a fresh machine:
#   make demo   grade the bundled example submission and show the report
#   make test   run the test suite (what CI runs)
# Both first run `make setup`: the Debian packages of scripts/system-packages.sh (installed when
# root, else it stops with the apt-get command to run; SEQLAB_NO_SYSTEM_PACKAGES=1 goes on without
# them), then .venv from the lock (scripts/setup.sh). Once done, a second run only checks.
# While working:
#   make test-banks  the attack banks, the runners' agreement on every known-wrong variant, the
#                    labs on twenty seeds (bank-marked: a few hundred sandboxed gradings) and the
#                    fresh-venv end-to-end runs (e2e-marked); CI runs both
#   make test-fast   make test without the slow-marked tests (over a few seconds each: gradings end
#                    to end, nbgrader round trips, fresh venvs, browsers)
#   make lint        ruff check + ruff format --check, mypy (pyproject.toml's [tool.mypy]) and
#                    the commit subjects after scripts/commit-base (scripts/check-commits.sh);
#                    what CI runs (`make format` fixes the first two)
#   make typecheck   mypy over seqlab/ (pyproject.toml's [tool.mypy])
#   make regenerate  everything derived, rewritten (seqlab regenerate): the stubs, the docs'
#                    generated tables, docs/coverage.md, the exam digests; `make regenerate-all`
#                    adds the recorded grades of the banks (a few hundred gradings)
#   make check-exercise NAME=positional.sinusoidal_encoding
#                    what one new or changed exercise trips, in a minute or two
#   make docs        the documentation site of docs/ into site/ (mkdocs build --strict)
#   make lock        regenerate the pinned, hashed locks from pyproject.toml (scripts/lock.sh), on
#                    purpose only: after changing a dependency or TORCH_VERSION; commit the result
# On a machine with an NVIDIA GPU: bash scripts/gpu-check.sh (the CUDA path, one summary line).
PY := .venv/bin/python
# Two workers: this is a 2-core machine, and each worker's grading children need the CPU too.
# The tests of a module that share a module-scoped fixture, and the tests of one xdist_group mark
# (the probe packs), stay on one worker; every other test is spread one by one, the slow ones
# first (tests/conftest.py, which also writes the group where pytest 9.2 reads it: pytest-xdist
# 3.8 alone lost every group, so each worker rebuilt the groups' fixtures).
# Two is also the measured best: the suite's CPU over two cores is its floor (both workers stay
# busy to the end), and a third worker's collection and fork server cost what the idle time gives
# back. `benchmarks/bench_suite.py` measures the suite's wall and CPU time for any JOBS.
# The build and config checks run inside the suite (tests/course/test_contract.py,
# tests/grading/test_config.py, tests/project/test_light_commands.py), in parallel with the
# rest; `make check` runs them alone.
JOBS ?= 2
XDIST := -n $(JOBS) --dist loadgroup
LOCK := $(shell . scripts/defaults.sh && defaults LOCK)

.PHONY: setup system-packages bytecode demo test test-banks test-measures test-fast lint typecheck docs format check bench lock clean \
	regenerate regenerate-all check-exercise

# The system packages are checked on every run (one dpkg-query): a stamp would not see one removed.
setup: system-packages .venv/.seqlab-installed

system-packages:
	@bash scripts/system-packages.sh

.venv/.seqlab-installed: pyproject.toml $(LOCK) scripts/setup.sh
	bash scripts/setup.sh
	touch $@

demo: setup
	.venv/bin/seqlab demo

check: setup
	.venv/bin/seqlab build --check
	.venv/bin/seqlab config --check
	.venv/bin/seqlab regenerate --check --only docs coverage

# The fast parts here; the recorded grades (regenerate-all) only on purpose, after deciding that
# a grade change is right: a recording that moves is a regrade, said in the commit.
regenerate: bytecode
	.venv/bin/seqlab regenerate

regenerate-all: bytecode
	.venv/bin/seqlab regenerate --recorded --jobs $(JOBS)

check-exercise: bytecode
	@test -n "$(NAME)" || { echo "usage: make check-exercise NAME=module.function"; exit 2; }
	.venv/bin/seqlab check-exercise $(NAME) --jobs $(JOBS)

# The project's own modules compiled before the tests (nothing to do when they are fresh). This
# image sets PYTHONDONTWRITEBYTECODE, so every process the tests start (the graders' children,
# nbgrader's kernels) would compile seqlab from source again, in a new clone most of all.
# compileall writes the .pyc files whatever that variable says.
bytecode: setup
	@$(PY) -m compileall -q -j 0 seqlab graders solutions tests >/dev/null

test: bytecode
	$(PY) -m pytest -q $(XDIST) -m "not bank and not e2e and not measure"

test-banks: bytecode
	$(PY) -m pytest -q $(XDIST) -m "(bank or e2e) and not measure"

# The measurements CI leaves out (marker `measure`): the development banks of lab mistakes, whose
# findings the catalogue and the feedback were fixed from, graded whole again (about 35 minutes of CPU). Run them
# before changing what the labs name; the fourth blind bank, which measures it, runs in make test-banks.
test-measures: bytecode
	$(PY) -m pytest -q $(XDIST) -m measure

# make test without its slow-marked tests. It selected "not slow" alone, so the banks and the
# measures ran in it too: a blind maintainer trial stopped it at 62% after 45 minutes.
test-fast: bytecode
	$(PY) -m pytest -q $(XDIST) -m "not slow and not bank and not e2e and not measure"

lint: setup
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy
	bash scripts/check-commits.sh

# mypy alone (make lint runs it too): seqlab/, strictly on the student and grading sides.
typecheck: setup
	.venv/bin/mypy

# The site of docs/ (mkdocs.yml) into site/; --strict: a warning or a broken link fails it.
docs: setup
	.venv/bin/mkdocs build --strict

format: setup
	.venv/bin/ruff check --fix .
	.venv/bin/ruff format .

bench: setup
	$(PY) benchmarks/bench_scan.py
	$(PY) benchmarks/bench_grade.py
	$(PY) benchmarks/bench_subset.py
	$(PY) benchmarks/bench_batch.py

lock:
	bash scripts/lock.sh

clean:
	rm -rf .venv seqlab-out site
