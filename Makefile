# Two commands do all the set-up on a fresh machine:
#   make demo   grade the bundled example submission and show the report
#   make test   run the test suite (what CI runs)
# While working:
#   make test-fast   the suite without the slow-marked tests (over a few seconds each: gradings end
#                    to end, nbgrader round trips, fresh venvs, browsers)
#   make lint        ruff check + ruff format --check (what CI runs; `make format` fixes)
PY := .venv/bin/python
# Two workers: this is a 2-core machine, and each worker's grading children need the CPU too.
# The tests of a module that share a module-scoped fixture, and the tests of one xdist_group mark
# (the probe packs), stay on one worker; every other test is spread one by one, the slow ones
# first (tests/conftest.py, which also writes the group where pytest 9.2 reads it: pytest-xdist
# 3.8 alone lost every group, so each worker rebuilt the groups' fixtures).
#
# Measured for issue 14 (2-core machine shared with other work, load average 5-7, so wall times
# are 3-5x a quiet machine's; CPU = user+sys of one pytest process and its waited-for children,
# without the sandboxed children bwrap reaps):
#   before (old names), run alone    CPU s  wall s   what dominates
#   test_gradescope.py                  56     121   the Gradescope image: setup.sh in a fresh venv
#   test_nbgrader.py                    54     251   the nbgrader round trip (one test, 206 s wall)
#   test_nbgrader_autograde.py          44     143   nbgrader autograde vs seqlab's, one test
#   test_grading.py (scoring part)      42     195   40 full gradings in 2 tests; one module group
#   test_isolation.py (runners part)    39     217   28 full gradings in ONE test
#   test_graders_mutants.py             38     107   144 partial gradings, spread
#   test_attacks.py (bank + probes)    20+     232   children uncounted; timeouts (14 s, 13 s) wait
#   grade-all (in test_isolation.py)    18      60
# After: the groups are formed (before, the fresh venv, the Gradescope image and each probe pack
# were built once per worker that ran one of their tests); the runner comparison is 14 tests and
# the scoring, grade-all and attack tests are spread (no module group, canaries per worker); the
# slow tests start first. Same tests and cases (1499 + 13 from splitting the runner comparison,
# + 1 that proves the groups form: tests/project/test_workers.py).
# The same 93 tests (Gradescope, release, classroom, probe packs) on two workers, one run after
# the other on the same busy machine: before 156 CPU s, 332 s wall (the Gradescope image built on
# both workers, 148 s each; a probe pack graded twice); after 117 CPU s, 128 s wall.
# After, with the machine quieter (load average ~1): tests/student (170 tests) 68 CPU s, 104 s
# wall; tests/exam + tests/grading + tests/batch + reports (595 tests) 192 CPU s, 110 s wall.
# Tried and left out: PIP_COMPILE=0 for the Gradescope image's setup.sh (51 CPU s either way:
# the bytecode pip skips is compiled by the first gradings instead).
JOBS ?= 2
XDIST := -n $(JOBS) --dist loadgroup

.PHONY: setup demo test test-fast lint format check bench clean

setup: .venv/.seqlab-installed

.venv/.seqlab-installed: pyproject.toml scripts/setup.sh
	bash scripts/setup.sh
	touch $@

demo: setup
	.venv/bin/seqlab demo

check: setup
	.venv/bin/seqlab build --check
	.venv/bin/seqlab config --check

test: setup check
	$(PY) -m pytest -q $(XDIST)

test-fast: setup
	$(PY) -m pytest -q $(XDIST) -m "not slow"

lint: setup
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

format: setup
	.venv/bin/ruff check --fix .
	.venv/bin/ruff format .

bench: setup
	$(PY) benchmarks/bench_scan.py
	$(PY) benchmarks/bench_grade.py
	$(PY) benchmarks/bench_batch.py

clean:
	rm -rf .venv seqlab-out
