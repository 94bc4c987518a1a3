# Two commands do all the set-up on a fresh machine:
#   make demo   grade the bundled example submission and show the report
#   make test   run the test suite (what CI runs)
# While working:
#   make test-fast   the suite without the slow-marked tests (nbgrader round trip, fresh venv)
#   make lint        ruff check + ruff format --check (what CI runs; `make format` fixes)
PY := .venv/bin/python
# Two workers: this is a 2-core machine, and each worker's grading children need the CPU too.
# Modules that share a fixture or a folder stay on one worker (tests/conftest.py).
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
