"""The policies that live in one module each: seeds, tolerance, templates, gradebook writing."""

from __future__ import annotations

import csv
import hashlib
import io
import random

from seqlab import config, templating
from seqlab.exam import model
from seqlab.gradebook import csv_text, write_text_atomic
from seqlab.seeds import derive_seed, derived_rng
from seqlab.tolerance import Tolerance


def test_derived_seeds_are_the_values_handed_out_before_the_move():
    # the exam draws (16 bytes of SHA-256 of "seed:student:question"), the symbolic checks'
    # sample points (8 bytes) and the grader tests' seeds: rendered exams depend on these bytes
    digest = hashlib.sha256(b"20261215:s1234567:opt.adam_steps").digest()
    assert derive_seed(20261215, "s1234567", "opt.adam_steps") == int.from_bytes(digest[:16], "big")
    assert derive_seed(20261215, "s1234567", "opt.adam_steps", nbytes=8) == int.from_bytes(digest[:8], "big")
    expected = random.Random(int.from_bytes(digest[:16], "big")).random()
    assert derived_rng(20261215, "s1234567", "opt.adam_steps").random() == expected
    assert derive_seed("a", "b") != derive_seed("b", "a")


def test_config_and_exam_share_one_tolerance_type():
    assert config.Tolerance is Tolerance and model.Tolerance is Tolerance
    tol = Tolerance(rtol=1e-3, atol=1e-4, why="a reason")
    assert (tol.rel, tol.abs) == (1e-3, 1e-4)
    assert tol == Tolerance(1e-3, 1e-4)  # the reason is not part of what it accepts
    assert tol.accepts(1.001, 1.0) and not tol.accepts(1.0012, 1.0)
    assert tol.describe() == "within 0.1% relative + 0.0001 absolute"
    assert Tolerance(0.0, 0.0).describe() == "exact values"


def test_every_environment_gets_the_shared_filters_and_keeps_its_own_options(tmp_path):
    (tmp_path / "t.md.j2").write_text("{{ a | pts }} {{ b | pts }} {{ c | pct }}\n", encoding="utf-8")
    (tmp_path / "t.html.j2").write_text("{{ s }}", encoding="utf-8")
    env = templating.environment(tmp_path, autoescape=templating.html_autoescape())
    assert env.get_template("t.md.j2").render(a=3.0, b=1 / 3, c=12.345) == "3 0.3333 12.3%\n"
    assert env.get_template("t.html.j2").render(s="<b>") == "&lt;b&gt;"
    plain = templating.environment(tmp_path, keep_trailing_newline=False, filters={"twice": lambda x: 2 * x})
    assert plain.get_template("t.md.j2").render(a=2, b=0.5, c=1) == "2 0.5 1.0%"
    assert plain.filters["twice"](2) == 4


def test_one_csv_policy_and_an_atomic_write(tmp_path):
    text = csv_text(["student", "reason"], [["s1", 'says "hi", twice'], ["s2", ""]])
    assert text == 'student,reason\ns1,"says ""hi"", twice"\ns2,\n'
    assert list(csv.reader(io.StringIO(text)))[1] == ["s1", 'says "hi", twice']
    path = write_text_atomic(tmp_path / "gradebook.csv", text)
    assert path.read_text(encoding="utf-8") == text
    assert [p.name for p in tmp_path.iterdir()] == ["gradebook.csv"]  # no temporary file left
