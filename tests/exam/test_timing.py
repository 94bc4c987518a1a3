"""The time model (``seqlab.exam.timing``): it reproduces the audit's timings, refuses a paper
longer than its duration in every medium, and the final fits with points that follow length."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from seqlab.cli import main
from seqlab.exam import timing
from seqlab.exam.examfile import ExamError, exam_from_dict, load_exam
from seqlab.exam.markdown import rules_markdown
from seqlab.exam.model import NUMERIC, SYMBOLIC
from seqlab.exam.qti import assessment_xml
from seqlab.exam.render import write_exam
from seqlab.exam.variants import make_instance
from seqlab.paths import DEFAULT_EXAM

AUDITED = Path(__file__).with_name("final_audited.yaml")
STUDENTS = ["s001", "s002", "s003"]


@pytest.fixture(scope="module")
def audited():
    return load_exam(AUDITED)


@pytest.fixture(scope="module")
def final():
    return load_exam(DEFAULT_EXAM)


def test_words_counts_prose_and_every_number_and_symbol_of_a_formula():
    # 4 prose words; the formula reads h, t, tanh, a, 0.5 (the layout command \left is not read)
    assert timing.words(r"What is $h_t = \tanh\left(a + 0.5\right)$ here?") == 3 + 5
    assert timing.words("$$\\begin{pmatrix} 1 & -2 \\\\ 3.5 & 4 \\end{pmatrix}$$") == 4


def test_a_pace_adds_reading_operations_and_writing():
    work = timing.Work(words=130, operations=6, values=15)
    assert work.minutes(timing.MEDIAN) == pytest.approx(1 + 1 + 2)  # 130 words, 60 s, 120 s
    assert work.minutes(timing.STRONG) == pytest.approx(0.65 + 0.6 + 1.25)


def test_the_model_reproduces_the_audit_of_the_final(audited):
    """The audit timed this paper: a strong student 80-91 minutes, a median one 135-146, and its
    BPTT item (declared 6 minutes) about 11 for a median student."""
    for student in STUDENTS[:1]:  # one paper here; every paper of 1000 below, in make test-banks
        inst = make_instance(audited, student)
        est = timing.estimate(inst)
        assert 80 <= est["strong"] <= 91 and 135 <= est["median"] <= 146, (student, est)
        bptt = next((v, eq) for v, eq in zip(inst.variants, inst.questions) if v.id == "rnn.bptt_param_grads")
        # "about 11": within a minute and a half, the spread of the audit's two methods
        assert 9.5 <= timing.work(*bptt).minutes(timing.MEDIAN) <= 12.5


def test_every_calculation_of_the_finals_is_counted_from_its_derivation(audited, final):
    """Every numeric or formula question of the finals has its operations counted (``WORK``), not
    the solution-text lower bound; pools' candidates included."""
    ids = {eq.id for exam in (audited, final) for eq in exam.questions if eq.question.kind in (NUMERIC, SYMBOLIC)}
    assert ids and not ids - set(timing.WORK)


def _exam(duration: float) -> dict:
    return {
        "title": "t",
        "seed": 1,
        "duration": duration,
        "parts": [{"questions": ["opt.momentum_steps", "rnn.bptt_param_grads", "concept.adaptive"]}],
    }


def test_a_paper_longer_than_its_duration_is_refused_in_every_medium(tmp_path, capsys):
    inst = make_instance(exam_from_dict(_exam(10)), "s1")
    median = timing.estimate(inst)["median"]
    assert 10 < median < 30  # the three questions take a median student longer than 10 minutes
    message = f"about {median:.0f} minutes .* more than its 10 minutes"
    with pytest.raises(ExamError, match=message):
        write_exam(inst, tmp_path / "o")
    with pytest.raises(ExamError, match=message):
        assessment_xml(inst)
    assert not (tmp_path / "o").exists()
    (tmp_path / "short.yaml").write_text(yaml.safe_dump(_exam(10)))
    assert (
        main(["exam", "render", "--exam", str(tmp_path / "short.yaml"), "--student", "s1", "--out", str(tmp_path)]) != 0
    )
    assert "median student" in capsys.readouterr().err
    # with the duration raised above the estimate, the same paper passes
    assert timing.check_fits(make_instance(exam_from_dict(_exam(30)), "s1"))["median"] == pytest.approx(median)


def test_the_final_fits_its_duration_and_says_so(final):
    assert final.duration == 120 and final.max_score == 100
    for student in STUDENTS:
        inst = make_instance(final, student)
        est = timing.check_fits(inst)
        assert est["median"] <= final.duration, (student, est)
        assert "sized so that a median student finishes this paper" in rules_markdown(inst)


# Points follow length: each question's points within a factor POINTS_BAND of its share of the
# paper's points by median minutes. Whole points cannot follow closer for short questions (a
# 2-point question with a 1.3-point share is 1.5 over); the audit's complaint was 2.6 (4 points
# for 2 minutes) and 0.4 (5 points for 11). A 1-point question fits whenever its share is under
# the band: a point is the smallest mark.
POINTS_BAND = 1.6


def _off_band(exam, student: str) -> list[str]:
    inst = make_instance(exam, student)
    minutes = [timing.work(v, eq).minutes(timing.MEDIAN) for v, eq in zip(inst.variants, inst.questions)]
    rate = sum(v.points for v in inst.variants) / sum(minutes)
    bad = []
    for v, m in zip(inst.variants, minutes):
        share = rate * m
        if v.points < share / POINTS_BAND or (v.points > POINTS_BAND * share and v.points > 1):
            bad.append(f"{v.id}: {v.points:g} points for {m:.1f} minutes (share {share:.1f})")
    return bad


def test_the_finals_points_follow_its_median_minutes(final, audited):
    for student in STUDENTS:
        assert _off_band(final, student) == []
    # the audited paper did not: the check finds what the audit found
    assert any(b.startswith("rnn.bptt_param_grads: 5 points") for b in _off_band(audited, STUDENTS[0]))


@pytest.mark.bank  # 1000 papers drawn and measured, twice: a few minutes
def test_every_paper_of_1000_fits_the_final_and_the_audited_one_did_not():
    exam, audited = load_exam(DEFAULT_EXAM), load_exam(AUDITED)
    worst = max(timing.estimate(make_instance(exam, f"s{i:05d}"))["median"] for i in range(1000))
    assert worst <= exam.duration
    # the audit timed three papers; over 300, the middle paper is in its ranges and every paper
    # within 2 minutes of them (draws differ by a few numbers to read and key in)
    old = [timing.estimate(make_instance(audited, f"s{i:05d}")) for i in range(300)]
    strong, median = (sorted(e[pace] for e in old) for pace in ("strong", "median"))
    assert 80 <= strong[150] <= 91 and 135 <= median[150] <= 146
    assert strong[0] >= 78 and strong[-1] <= 93 and median[0] >= 133 and median[-1] <= 148
