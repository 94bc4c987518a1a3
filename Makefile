# Two commands do all the set-up on a fresh machine:
#   make demo   grade the bundled example submission and show the report
#   make test   run the test suite (what CI runs)
PY := .venv/bin/python

.PHONY: setup demo test check bench clean

setup: .venv/.seqlab-installed

.venv/.seqlab-installed: pyproject.toml scripts/setup.sh
	bash scripts/setup.sh
	touch $@

demo: setup
	.venv/bin/seqlab demo

check: setup
	.venv/bin/seqlab build --check

test: setup check
	$(PY) -m pytest -q

bench: setup
	$(PY) benchmarks/bench_scan.py
	$(PY) benchmarks/bench_grade.py
	$(PY) benchmarks/bench_batch.py

clean:
	rm -rf .venv seqlab-out
