"""Grading answers: points, partial credit, feedback, injections, batches and report formats."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml

from seqlab.exam.answers import answers_from_data, load_answers
from seqlab.exam.draws import format_answer
from seqlab.exam.errors import AnswersError
from seqlab.exam.examfile import exam_from_dict, load_exam
from seqlab.exam.grading import grade_folder, gradebook_csv
from seqlab.exam.paper import grade_answers, grade_file
from seqlab.exam.render import key_answers
from seqlab.exam.variants import make_instance
from seqlab.paths import COURSE_ROOT, DEFAULT_EXAM

EXAM = load_exam(DEFAULT_EXAM)
SMALL = exam_from_dict(
    {
        "title": "small",
        "seed": 5,
        "visibility": "visible",
        "parts": [
            {
                "title": "p",
                "questions": [
                    {
                        "id": "opt.adam_steps",
                        "points": 4,
                        "partial": {"per_element": True, "mistakes": {"no_bias_correction": 0.5}},
                    },
                    {"id": "opt.sgd_step", "points": 3},
                    {"id": "attn.var_qk", "points": 2, "partial": {"mistakes": {"std": 0.5}}},
                    {"id": "rnn.linear_power", "points": 2},
                    {"id": "concept.bottleneck", "points": 1},
                    {"id": "concept.birnn_online", "points": 1},
                    {"id": "rnn.shapes", "points": 2, "tolerance": {"rel": 0, "abs": 0}},
                ],
            }
        ],
    }
)


def _by_id(result):
    return {t.name.split(":", 1)[0][len("exam.") :]: t for t in result.tests}


def test_partial_credit_feedback_and_zero_for_wrong():
    inst = make_instance(SMALL, "s42")
    v = inst.by_id()
    adam, sgd = v["opt.adam_steps"], v["opt.sgd_step"]
    no_bc = adam.question.mistakes(adam.params)["no_bias_correction"].value
    first_only = [adam.answer[0], adam.answer[1] + 1.0]
    wrong_sgd = [x + 1 for x in sgd.answer[:-1]] + [sgd.answer[-1]]
    qk = v["attn.var_qk"]
    answers = {
        "opt.adam_steps": format_answer("numeric", no_bc),
        "opt.sgd_step": format_answer("numeric", wrong_sgd),
        "attn.var_qk": format_answer("symbolic", qk.question.mistakes(qk.params)["std"].value),
        "rnn.linear_power": "k*w",
        "concept.bottleneck": next(c for c in "ABCD" if c != v["concept.bottleneck"].answer),
        "concept.birnn_online": "maybe",
        "rnn.shapes": format_answer("numeric", v["rnn.shapes"].answer),
    }
    r = _by_id(grade_answers(SMALL, "s42", answers, instance=inst))
    assert r["opt.adam_steps"].score == 2.0 and "bias correction" in r["opt.adam_steps"].output
    assert r["opt.sgd_step"].score == 0.0 and "entries 1, 2" in r["opt.sgd_step"].output  # no per-element rule
    assert r["attn.var_qk"].score == 1.0 and "standard deviation" in r["attn.var_qk"].output
    assert r["rnn.linear_power"].score == 0 and "unknown name 'k'" in r["rnn.linear_power"].output
    assert r["concept.bottleneck"].score == 0 and "the answer is" in r["concept.bottleneck"].output
    assert r["concept.birnn_online"].score == 0 and "true or false" in r["concept.birnn_online"].output
    assert r["rnn.shapes"].score == 2.0

    answers["opt.adam_steps"] = format_answer("numeric", first_only)
    r = _by_id(grade_answers(SMALL, "s42", answers, instance=inst))
    assert r["opt.adam_steps"].score == 2.0 and "1 of 2 entries" in r["opt.adam_steps"].output


def test_tolerance_and_arithmetic_in_numeric_answers():
    inst = make_instance(SMALL, "s7")
    sgd = inst.by_id()["opt.sgd_step"]
    close = ", ".join(repr(x * (1 + 5e-4)) for x in sgd.answer)  # inside 0.1%
    far = ", ".join(repr(x * 1.01 + 0.01) for x in sgd.answer)  # outside
    as_list = [float(x) for x in sgd.answer]  # a YAML list is fine too
    for answer, score in ((close, 3.0), (far, 0.0), (as_list, 3.0), (sgd.key + ", 1", 0.0)):
        assert (
            _by_id(grade_answers(SMALL, "s7", {"opt.sgd_step": answer}, instance=inst))["opt.sgd_step"].score == score
        )
    w = inst.by_id()["rnn.linear_power"]
    k = w.params["k"]
    for answer in (f"w^{k}", f"w**({k}-1)*w", f"sqrt(w)^{2 * k}", f"exp({k}*log(w))"):
        assert (
            _by_id(grade_answers(SMALL, "s7", {"rnn.linear_power": answer}, instance=inst))["rnn.linear_power"].score
            == 2
        )


INJECTIONS = [
    "__import__('os').system('touch {canary}')",
    '__import__("os").system("touch {canary}")',
    "eval(\"__import__('os').system('touch {canary}')\")",
    'exec(\'open("{canary}", "w")\')',
    "(lambda: __import__('os').system('touch {canary}'))()",
    "[x for x in ().__class__.__base__.__subclasses__() if x.__name__ == 'Popen'][0](['touch', '{canary}'])",
    "().__class__.__bases__[0].__subclasses__()",
    "d.__class__.__init__.__globals__['os'].system('touch {canary}')",
    "getattr(__builtins__, 'open')('{canary}', 'w')",
    "Symbol('x').__class__",
    "globals()",
    "x" * 10_000_000,
    "(" * 100_000 + "d" + ")" * 100_000,
    "sqrt(" * 50 + "d" + ")" * 50,
    "9**9**9**9**9",
    "lambda: 0",
]


def test_injection_answers_score_zero_with_a_message_and_run_nothing(tmp_path, monkeypatch):
    canary = tmp_path / "canary"
    monkeypatch.chdir(tmp_path)
    ids = [eq.id for eq in EXAM.questions]
    kinds = {eq.id: eq.question.kind for eq in EXAM.questions}
    # every injection against one question of each kind
    targets = [next(q for q in ids if kinds[q] == k) for k in ("numeric", "symbolic", "choice", "truefalse")]
    # s1's paper drawn once: the injections are in the answers, and drawing the whole exam anew for
    # each of them was most of this test's time
    inst = make_instance(EXAM, "s1")
    for target in targets:
        for text in INJECTIONS:
            answer = text.replace("{canary}", str(canary))
            result = grade_answers(EXAM, "s1", {target: answer}, instance=inst)
            t = _by_id(result)[target]
            assert t.score == 0, (target, answer[:60])
            assert t.output and t.output != "no answer", (target, answer[:60])
            assert len(t.details["answer"]) < 300  # a 10 MB answer is not copied into reports
            assert not canary.exists(), f"code ran for {answer[:60]!r}"
    assert not canary.exists()


def test_injection_through_answers_files(tmp_path, monkeypatch):
    canary = tmp_path / "canary"
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "answers"
    folder.mkdir()
    (folder / "yaml-tag.yaml").write_text(f"student: s9\nanswers: !!python/object/apply:os.system ['touch {canary}']\n")
    (folder / "json.json").write_text(json.dumps({"student": "s8", "answers": {"attn.var_qk": "__import__('os')"}}))
    (folder / "dunder.yaml").write_text(yaml.safe_dump({"student": "s7", "answers": {"attn.var_qk": "d.__class__"}}))
    rows = {r.file: r for r in grade_folder(EXAM, folder)}
    assert rows["yaml-tag.yaml"].status == "error" and "not valid YAML" in rows["yaml-tag.yaml"].reason
    assert rows["json.json"].result.score == 0 and rows["dunder.yaml"].result.score == 0
    assert not canary.exists()


def test_answers_file_problems_are_named_and_the_batch_goes_on(tmp_path):
    folder = tmp_path / "answers"
    folder.mkdir()
    good = ["s100", "s101", "s104"]
    for s in good:
        inst = make_instance(EXAM, s)
        (folder / f"{s}.yaml").write_text(yaml.safe_dump(key_answers(inst)))
    (folder / "broken.yaml").write_text("student: s102\nanswers: [unclosed\n")
    (folder / "nostudent.yaml").write_text("answers: {}\n")
    (folder / "badid.yaml").write_text("student: ../../etc\nanswers: {}\n")
    (folder / "list.yaml").write_text("- 1\n- 2\n")
    (folder / "answers-list.yaml").write_text("student: s103\nanswers: [1, 2]\n")
    (folder / "dup.yaml").write_text(yaml.safe_dump({"student": "s104", "answers": {}}))
    (folder / "notes.txt").write_text("ignored")
    (folder / "answers-s106.yaml").write_text(yaml.safe_dump(key_answers(make_instance(EXAM, "s106"))))
    (folder / "s105").mkdir()  # a per-student hand-in folder
    (folder / "s105" / "answers.yaml").write_text(yaml.safe_dump(key_answers(make_instance(EXAM, "s105"))))
    rows = grade_folder(EXAM, folder)
    by_file = {r.file: r for r in rows}
    assert len(rows) == 11
    for name in ("s100.yaml", "s101.yaml", "s104.yaml", "s105/answers.yaml", "answers-s106.yaml"):
        assert by_file[name].result.percent == 100.0 and not by_file[name].flag
    assert by_file["s105/answers.yaml"].student == "s105"
    reasons = {f: by_file[f].reason for f in by_file if by_file[f].status == "error"}
    assert "not valid YAML at line 3" in reasons["broken.yaml"]
    assert "must be a mapping" in reasons["list.yaml"]
    assert "'answers' must map" in reasons["answers-list.yaml"]
    assert all(f in r for f, r in reasons.items())  # each message names its file
    # identity comes from the file name: no 'student' inside is fine, a foreign claim is flagged
    assert by_file["nostudent.yaml"].status == "graded" and not by_file["nostudent.yaml"].flag
    assert "claims student '../../etc'" in by_file["badid.yaml"].flag
    assert by_file["dup.yaml"].student == "dup" and "claims student 's104'" in by_file["dup.yaml"].flag

    book = list(csv.reader(io.StringIO(gradebook_csv(EXAM, rows))))
    header = book[0]
    assert header[:5] == ["student", "status", "total", "max_score", "percent"]
    assert [h.split(" ")[-1] for h in header[5:-3]] == EXAM.ids() and header[-3:] == ["flag", "file", "reason"]
    assert header[5] == f"Q1 {EXAM.ids()[0]}"  # each column by its number on the paper and its id
    graded = [row for row in book[1:] if row[1] == "graded"]
    assert [row[0] for row in graded if row[4] == "100.0"] == ["s100", "s101", "s104", "s105", "s106"]
    assert sum(1 for row in book[1:] if row[1] == "error") == 3


def test_a_file_claiming_another_id_is_graded_as_its_owner_and_flagged(tmp_path):
    """s201 hands in a copy of s200's key, which says student: s200. It is graded
    against s201's own variant (so it does not score s200's 100%), and the gradebook flags it."""
    folder = tmp_path / "answers"
    folder.mkdir()
    for s in ("s200", "s201"):
        (folder / f"{s}.yaml").write_text(yaml.safe_dump(key_answers(make_instance(EXAM, "s200"))))
    rows = {r.student: r for r in grade_folder(EXAM, folder)}
    assert rows["s200"].result.percent == 100.0 and not rows["s200"].flag
    impostor = rows["s201"]
    assert impostor.result.submission == "s201" and impostor.result.percent < 100.0
    assert "claims student 's200'" in impostor.flag and impostor.result.meta["claimed_student"] == "s200"
    book = {r["student"]: r for r in csv.DictReader(io.StringIO(gradebook_csv(EXAM, list(rows.values()))))}
    assert "claims student 's200'" in book["s201"]["flag"] and book["s200"]["flag"] == ""
    # a roster maps file names to ids instead: the same file now belongs to whoever the roster says
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student\ns200.yaml,s300\ns201.yaml,s200\n")
    from seqlab.exam.grading import load_roster

    rows = {r.file: r for r in grade_folder(EXAM, folder, load_roster(roster))}
    assert rows["s201.yaml"].student == "s200" and rows["s201.yaml"].result.percent == 100.0
    assert rows["s200.yaml"].student == "s300" and "claims student 's200'" in rows["s200.yaml"].flag


def test_grade_file_checks_the_student(tmp_path):
    inst = make_instance(EXAM, "s5")
    path = tmp_path / "a.yaml"
    path.write_text(yaml.safe_dump(key_answers(inst)))
    assert grade_file(EXAM, path).percent == 100.0
    assert grade_file(EXAM, path, student="s5").percent == 100.0
    with pytest.raises(AnswersError, match="for student 's5', not 's6'"):
        grade_file(EXAM, path, student="s6")
    with pytest.raises(AnswersError, match="cannot read"):
        load_answers(tmp_path / "missing.yaml")
    with pytest.raises(AnswersError, match="unknown key"):
        answers_from_data({"student": "s5", "answers": {}, "extra": 1})


def test_unknown_question_ids_are_reported_not_fatal():
    result = grade_answers(EXAM, "s5", {"no.such.question": "1"})
    assert result.score == 0 and any("no.such.question" in e for e in result.errors)


def test_results_json_matches_the_gradescope_schema(tmp_path):
    import jsonschema

    from seqlab.reports import gradescope

    inst = make_instance(EXAM, "s77")
    answers = key_answers(inst)["answers"]
    answers[EXAM.ids()[0]] = "oops"
    result = grade_answers(EXAM, "s77", answers, instance=inst)
    path = gradescope.write(result, tmp_path / "results.json")
    data = json.loads(path.read_text())
    schema = json.loads((COURSE_ROOT / "schemas" / "gradescope_results.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert data["max_score"] == EXAM.max_score
    assert data["tests"][0]["name"].startswith(f"exam.{EXAM.ids()[0]}: ")
    assert data["tests"][0]["status"] == "failed" and data["tests"][1]["status"] == "passed"
    assert all(t["visibility"] == "after_published" for t in data["tests"])
    assert result.tests[0].function == f"exam.{EXAM.ids()[0]}" and result.tests[0].module == "exam"


def test_grading_is_deterministic():
    inst = make_instance(EXAM, "s3")
    answers = {q: "1" for q in EXAM.ids()}
    a = grade_answers(EXAM, "s3", answers, instance=inst)
    b = grade_answers(EXAM, "s3", answers)
    assert [(t.score, t.output) for t in a.tests] == [(t.score, t.output) for t in b.tests]


def test_key_file_round_trip(tmp_path):
    from seqlab.exam.render import write_key

    inst = make_instance(EXAM, "s12")
    paths = write_key(inst, tmp_path)
    assert grade_file(EXAM, paths[0]).percent == 100.0
    text = Path(paths[1]).read_text()
    assert "Answer key" in text and all(f"`{v.id}`" in text for v in inst.variants)


def test_nested_yaml_answers_are_refused_cheaply(tmp_path):
    """A YAML alias bomb expands to 10**9 leaves when printed; it must never be printed."""
    import time

    level = ["x"] * 10
    for _ in range(8):
        level = [level] * 10  # shared references, as YAML aliases build them
    ids = EXAM.ids()
    start = time.perf_counter()
    result = grade_answers(EXAM, "s1", {q: level for q in ids[:8]})
    assert all(t.score == 0 and t.output.startswith("answer rejected") for t in result.tests[:8])
    assert all(len(str(t.details["answer"])) <= 200 for t in result.tests)
    assert time.perf_counter() - start < 10

    anchors = ["  a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    anchors += [f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    path = tmp_path / "bomb.yaml"
    path.write_text(
        "anchors:\n" + "\n".join(anchors) + "\nstudent: s1\nanswers:\n" + "".join(f"  {q}: *a8\n" for q in ids[:8])
    )
    with pytest.raises(AnswersError, match="anchors and aliases"):  # refused before anything is built
        load_answers(path)
    assert time.perf_counter() - start < 10


def test_entries_copied_from_the_question_earn_nothing():
    """Per-entry credit pays for the idea, not for B and T copied into a shape or the
    zero of a masked row; only a fully right answer reaches full marks."""
    from seqlab.exam.examfile import Exam, ExamQuestion
    from seqlab.exam.marking import grade_variant
    from seqlab.exam.model import REGISTRY
    from seqlab.exam.variants import make_variant

    def variant(qid, form=None):
        eq = ExamQuestion(question=REGISTRY[qid], points=3.0, part="p", per_element=True, form=form)
        return make_variant(Exam(title="t", seed=5, questions=(eq,), parts=("p",)), eq, "s1", 1)

    shape = variant("rnn.shapes", "bidirectional")
    B, T, twice_h = shape.answer
    assert grade_variant(shape, f"{B:g}, {T:g}, 1").score == 0.0  # only the copied B and T
    assert grade_variant(shape, f"0, 0, {twice_h:g}").score == 1.0  # the computed 2H: 1/3 of 3
    assert grade_variant(shape, f"{B:g}, {T:g}, {twice_h:g}").score == 3.0
    masked = variant("attn.causal_weights")
    first, second, zero = masked.answer
    assert zero == 0.0
    mark = grade_variant(masked, "0.9, 0.9, 0")
    assert mark.score == 0.0 and "entry 3 can be copied" in mark.output
    assert grade_variant(masked, f"{first!r}, 0.9, 0").score == 1.0
