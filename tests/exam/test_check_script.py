"""The check a student runs bare (``check-ID.py``): standard Python only, the grader's verdicts.

Run as ``python -I -S`` (no site packages, so no seqlab, sympy or yaml importable) on the key
and on planted mistakes; it must find the answers the grader's own check finds, by number.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from seqlab.exam.answers import check_readable, load_answers
from seqlab.exam.errors import AnswersError
from seqlab.exam.examfile import load_exam
from seqlab.exam.marking import answer_shapes
from seqlab.exam.render import answers_yaml, check_script, key_answers
from seqlab.exam.variants import make_instance
from seqlab.paths import DEFAULT_EXAM


def _run(folder, answers_file):
    done = subprocess.run(
        [sys.executable, "-I", "-S", "check-c7.py", answers_file],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        env={},
    )
    return done.returncode, done.stdout


def test_the_standalone_check_agrees_with_the_grader_by_question_number(tmp_path):
    inst = make_instance(load_exam(DEFAULT_EXAM), "c7")
    (tmp_path / "check-c7.py").write_text(check_script(inst), encoding="utf-8")  # what render writes
    (tmp_path / "key-c7.yaml").write_text(answers_yaml(inst, "key", key_answers(inst)["answers"]), encoding="utf-8")
    script = (tmp_path / "check-c7.py").read_text(encoding="utf-8")
    assert "import seqlab" not in script and "sympy" not in script.split('"""', 2)[2]
    numbers_and_formulas = [v for v in inst.variants if v.question.kind in ("numeric", "symbolic") and len(v.key) > 4]
    assert numbers_and_formulas and not any(v.key in script for v in numbers_and_formulas)  # never the key
    assert _run(tmp_path, "key-c7.yaml") == (0, "all answers readable\n")

    answers = yaml.safe_load((tmp_path / "key-c7.yaml").read_text())["answers"]
    number = {v.id: v.number for v in inst.variants}
    vector = next(v for v in inst.variants if isinstance(v.answer, list))
    planted = {
        vector.id: "1",
        "opt.bias_correction": "1/(1 - beta1^t",
        "attn.var_qk": "2d",
        "concept.bottleneck": "Z",
        "concept.birnn_online": "perhaps",
        "gru.param_count": "",
        "rnn.ce_loss": "1.5 2",
        "tf.decoder_params": "12 + foo",
    }
    # a number asked: the exponentials are the student's to compute, on the screen as on paper
    scalar = next(
        v
        for v in inst.variants
        if v.question.kind == "numeric" and not isinstance(v.answer, list) and v.id not in planted
    )
    planted[scalar.id] = "-log(exp(0.8)/3)"
    aid = {v.id: v.answer_id for v in inst.variants}  # the paper's ids (q1, ...), as the file has them
    answers.update({aid[q]: text for q, text in planted.items()})
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump({"student": "c7", "answers": answers}))
    code, out = _run(tmp_path, "mine.yaml")
    assert code == 1
    graders = check_readable(answer_shapes(inst), answers, quiet=True)
    flagged = {line.split(" ", 2)[1].rstrip(":") for line in out.splitlines() if line.startswith("answer ")}
    assert flagged == {line.split(" ", 2)[1].rstrip(":") for line in graders if line.startswith("answer ")}
    assert flagged == {str(number[q]) for q in planted if planted[q]}
    assert f"no answer yet to question(s) {number['gru.param_count']} (1 of {len(inst.variants)})" in out
    assert "implicit multiplication" in out.split(f"answer {number['attn.var_qk']}: ")[1].splitlines()[0]
    assert "a number is asked" in out.split(f"answer {number[scalar.id]}: ")[1].splitlines()[0]
    # the notebook's JSON, a quote left open, a foreign id
    (tmp_path / "nb.json").write_text(json.dumps({"student": "c7", "answers": {}}))
    assert f"(0 of {len(inst.variants)})" not in _run(tmp_path, "nb.json")[1]
    (tmp_path / "open.yaml").write_text('student: c7\nanswers:\n  rnn.ce_loss: "1.5\n  attn.var_qk: "d"\n')
    assert _run(tmp_path, "open.yaml")[1].startswith("open.yaml: line 3: a quoted string opened on this line")
    with pytest.raises(AnswersError, match="not valid YAML at line 3: a quoted string opened on this line"):
        load_answers(tmp_path / "open.yaml")  # the grader names the same line
    (tmp_path / "other.yaml").write_text("student: c8\nanswers: {}\n")
    assert "write student: 'c7'" in _run(tmp_path, "other.yaml")[1]
