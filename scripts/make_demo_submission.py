"""Regenerate examples/demo_submission/ from the solutions plus a few realistic bugs.

The demo is a snapshot of a plausible student: most functions right, a handful wrong in the
ways students really get them wrong. Run after changing solutions or mutants:
    .venv/bin/python scripts/make_demo_submission.py
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.mutants import all_variants, replace_function  # noqa: E402

# (function, mutant description): the bugs the demo student has.
BUGS = [
    ("optimizers.adam", "no bias correction"),
    ("attention.scaled_dot_product_attention", "scales by d instead of sqrt(d)"),
    ("lstm_gru.gru_cell", "the notes' form: r before W_hn"),
    ("positional.sinusoidal_encoding", "sin and cos swapped"),
    ("selective_scan.linear_scan", "correct sequential loop over time (loses only the complexity points)"),
    ("rnn.rnn_bptt", "no recursion through W_hh"),
]


def pick(function, description):
    candidates = [m for m in all_variants("MUTANTS") if m.function == function]
    if description:
        candidates = [m for m in candidates if m.description == description] or candidates
    if not candidates:
        raise SystemExit(f"no mutant for {function}")
    return candidates[0]


def main() -> None:
    target = ROOT / "examples" / "demo_submission" / "exercises"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for path in sorted((ROOT / "solutions").glob("*.py")):
        shutil.copy(path, target / path.name)
    for function, description in BUGS:
        mutant = pick(function, description)
        module, name = function.split(".")
        path = target / f"{module}.py"
        path.write_text(replace_function(path.read_text(), name, mutant.source))
        print(f"{function}: {mutant.description}")
    # A student's file has no solution markers: strip them like a real submission.
    from seqlab.build import strip_markers

    for path in target.glob("*.py"):
        path.write_text(strip_markers(path.read_text()))


if __name__ == "__main__":
    main()
