"""`seqlab check-exercise NAME` catches a broken reference in a real copy of the course.

The copy's ``positional.sinusoidal_encoding`` is made 1 % off (the real body kept under another
name, the new one calling it), its stub rebuilt as a maintainer would. Graded against its own
grader the reference still scores full marks (the grader compares with it); the command must
fail where a wrong reference shows: against the PyTorch built-in (tests/reference/), in the public
tests, and in the mutants' recorded grades. The whole command on the clean course
takes about 90 s on the 2-core machine, so this is bank-marked.
"""

from __future__ import annotations

import pytest

from seqlab import contract
from tests.course._checkout import checkout, seqlab_in

NAME = "positional.sinusoidal_encoding"


def _break_reference(copy) -> None:
    topic, function = contract.split(NAME)
    path = copy / "solutions" / f"{topic}.py"
    text = path.read_text(encoding="utf-8")
    assert text.count(f"def {function}(") == 1
    params = contract.SIGNATURES[NAME].strip("()")
    names = [p.split("=")[0].strip() for p in params.split(",")]
    broken = f'''

def {function}({params}):
    """{function}, 1 % off: a broken reference (tests/course/test_check_exercise.py)."""
    ### BEGIN SOLUTION
    return _{function}_right({", ".join(names)}) * 1.01
    ### END SOLUTION
'''
    # the broken def goes where the real one was, so the contract's order (and the docs) stay
    at = text.index(f"def {function}(")
    fixed = (
        text[:at] + broken.strip("\n") + "\n\n\n" + text[at:].replace(f"def {function}(", f"def _{function}_right(", 1)
    )
    path.write_text(fixed, encoding="utf-8")


@pytest.mark.bank
def test_check_exercise_catches_a_broken_reference(tmp_path):
    copy = checkout(tmp_path / "course")
    _break_reference(copy)
    built = seqlab_in(copy, "build")
    assert built.returncode == 0, built.stderr
    run = seqlab_in(copy, "check-exercise", NAME)
    lines = {line.split()[0]: line for line in run.stdout.splitlines() if line[:1].isalpha()}
    assert run.returncode == 1, run.stdout + run.stderr
    assert " ok " in lines["config"] and " ok " in lines["stub"] and " ok " in lines["notebook"], run.stdout
    assert " ok " in lines["docs"] and " ok " in lines["reference"], run.stdout  # graded against itself
    # what catches it: the reference against PyTorch, the public tests, the recorded mutant grades
    for step in ("torch", "public", "mutants"):
        assert "FAILED" in lines[step], run.stdout


def test_check_exercise_refuses_a_name_outside_the_contract(capsys):
    from seqlab.cli import main

    assert main(["check-exercise", "positional.no_such_function"]) == 2
    assert "is not a contract function" in capsys.readouterr().err
