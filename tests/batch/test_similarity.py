"""`grade-all --similarity`: similar code per function, a lead for a human."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from seqlab import fingerprints, similarity
from seqlab.build import replace_function
from seqlab.cli import main
from seqlab.paths import COURSE_ROOT, EXERCISES_DIR, SOLUTIONS_DIR
from seqlab.regions import strip_markers
from tests.mutants import all_variants

FUNCTION = "attention.scaled_dot_product_attention"

ORIGINAL = """
def scaled_dot_product_attention(q, k, v, mask=None):
    d = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)  # (..., L, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = weights.masked_fill(scores.amax(dim=-1, keepdim=True) == float("-inf"), 0.0)
    return weights @ v, weights
"""

# ORIGINAL with every name renamed, a docstring and comments of its own, other quotes, one-line
# `if`, a `;`, and calls exploded the way a formatter does (trailing commas).
RENAMED_REFORMATTED = '''
def scaled_dot_product_attention(q, k, v, mask=None):
    """Attention, written from scratch."""
    size = q.shape[-1]   # the head size
    att = q @ k.transpose(-2, -1) / math.sqrt(size)
    if mask is not None: att = att.masked_fill(~mask, float('-inf'))
    # softmax over the keys
    p = torch.softmax(
        att,
        dim=-1,
    )
    p = p.masked_fill(
        att.amax(dim=-1, keepdim=True) == float('-inf'),
        0.0,
    ); return p @ v, p
'''


def _alternative(function: str):
    return next(v for v in all_variants("ALTERNATIVES") if v.function == function)


def _stub_submission(root: Path, functions: dict[str, str] | None = None) -> Path:
    """The stubs as handed out, with the given functions (qualname -> def) filled in."""
    shutil.copytree(EXERCISES_DIR, root / "exercises")
    for qualname, source in (functions or {}).items():
        module, name = qualname.split(".", 1)
        path = root / "exercises" / f"{module}.py"
        path.write_text(replace_function(path.read_text(), name, source))
    return root


@pytest.fixture
def small_class(tmp_path) -> dict[str, Path]:
    return {
        "ada": _stub_submission(tmp_path / "ada", {FUNCTION: ORIGINAL}),
        "ben": _stub_submission(tmp_path / "ben", {FUNCTION: RENAMED_REFORMATTED}),
        "cy": _stub_submission(tmp_path / "cy", {FUNCTION: _alternative(FUNCTION).source}),
        "dee": _stub_submission(tmp_path / "dee"),
        "eve": _stub_submission(tmp_path / "eve"),
    }


def _pairs(report: dict, function: str) -> list[dict]:
    return next(f for f in report["functions"] if f["name"] == function)["pairs"]


def test_renamed_reformatted_copy_is_the_top_pair_of_its_function(small_class):
    report = similarity.compare_class(small_class, shown_from=0.0)
    pairs = _pairs(report, FUNCTION)
    assert (pairs[0]["a"], pairs[0]["b"]) == ("ada", "ben")
    # Renaming and reformatting leave the normalised tokens unchanged: every fingerprint is shared.
    assert pairs[0]["score"] == 1.0
    shared_text = "".join(text for text, shared in pairs[0]["b_segments"] if shared)
    assert "masked_fill" in shared_text and "written from scratch" not in shared_text  # the docstring is not code
    for pair in pairs[1:]:  # the independent implementation shares idioms at most
        assert "cy" in (pair["a"], pair["b"]) and pair["score"] < similarity.SHOWN_FROM, pair
    listed = similarity.compare_class(small_class)  # with the report's threshold
    assert [(p["a"], p["b"]) for p in _pairs(listed, FUNCTION)] == [("ada", "ben")]


def test_the_stub_code_alone_makes_no_pair(small_class):
    report = similarity.compare_class(small_class, shown_from=0.0)
    for function in report["functions"]:
        for pair in function["pairs"]:
            assert not {"dee", "eve"} & {pair["a"], pair["b"]}, (function["name"], pair)
    # ada, ben and cy differ from the stubs in one function only: no other function pairs them.
    assert [f["name"] for f in report["functions"] if f["pairs"]] == [FUNCTION]
    assert next(f for f in report["functions"] if f["name"] == FUNCTION)["compared"] == 3


@pytest.mark.parametrize("variant", all_variants("ALTERNATIVES"), ids=lambda v: v.id)
def test_independent_correct_implementations_stay_below_the_listing_threshold(tmp_path, variant):
    """The measurement behind SHOWN_FROM: each alternative-correct implementation of
    tests/mutants against the reference solution."""
    reference = tmp_path / "reference" / "exercises"
    reference.mkdir(parents=True)
    for path in SOLUTIONS_DIR.glob("*.py"):
        (reference / path.name).write_text(strip_markers(path.read_text()))
    other = _stub_submission(tmp_path / "other", {variant.function: variant.source})
    report = similarity.compare_class({"reference": reference.parent, "other": other}, shown_from=0.0)
    for pair in _pairs(report, variant.function):
        assert pair["score"] < similarity.SHOWN_FROM, pair["score"]


def test_scores_are_the_same_in_every_process(small_class, tmp_path):
    """Fingerprints use a keyed hash of their own, not Python's salted hash(): a rerun (another
    process, another PYTHONHASHSEED) gives the same pairs and scores."""
    script = (
        "import json, sys; from pathlib import Path; from seqlab.similarity import compare_class; "
        "subs = {k: Path(v) for k, v in json.loads(sys.argv[1]).items()}; "
        "print(json.dumps(compare_class(subs, shown_from=0.0), sort_keys=True))"
    )
    argument = json.dumps({k: str(v) for k, v in small_class.items()})
    outputs = []
    for seed in ("1", "2"):
        proc = subprocess.run(
            [sys.executable, "-c", script, argument],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=COURSE_ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    assert _pairs(json.loads(outputs[0]), FUNCTION)[0]["score"] == 1.0


def test_unreadable_files_are_named_and_the_rest_still_compared(small_class, tmp_path):
    broken = _stub_submission(tmp_path / "broken", {FUNCTION: ORIGINAL})
    (broken / "exercises" / "rnn.py").write_text("def rnn_cell(:\n")
    (broken / "exercises" / "optimizers.py").write_bytes(b"\xff\xfe not utf-8")
    (broken / "exercises" / "positional.py").write_text("x = 1\n" * (similarity.MAX_SOURCE_BYTES // 6 + 1))
    report = similarity.compare_class({**small_class, "broken": broken, "missing": None}, shown_from=0.0)
    problems = "\n".join(report["problems"])
    assert "broken: rnn.py does not parse (line 1" in problems
    assert "broken: optimizers.py is not UTF-8" in problems
    assert "broken: positional.py is larger than" in problems
    assert ("ada", "broken") in [(p["a"], p["b"]) for p in _pairs(report, FUNCTION)]


def test_normalised_tokens_ignore_names_and_layout_but_not_operations():
    tokens = lambda source: fingerprints.normalise(source)[0]  # noqa: E731
    assert tokens("y = torch.tanh(a @ W.T + b)\n") == tokens("out=torch.tanh( x@ M.T+bias , )  # note\n")
    assert tokens("y = torch.tanh(a)\n") != tokens("y = torch.sigmoid(a)\n")
    assert tokens("a = 1e-8\n") == tokens("a = 1E-08\n")
    assert tokens("s = 'x'\n") == tokens('s = f"{y}"\n')


@pytest.mark.slow
def test_grade_all_lists_similar_pairs_only_when_asked(small_class, tmp_path):
    submissions = tmp_path / "class"
    submissions.mkdir()
    for name in ("ada", "ben", "dee"):
        shutil.move(str(small_class[name]), submissions / name)
    out = tmp_path / "out"

    def grade_all(*extra):
        # In this process: the class report is under test; the workers still grade in their own.
        assert main(["grade-all", str(submissions), "--out", str(out), "--jobs", "2", *extra]) == 0

    grade_all()
    assert "Similar code" not in (out / "class_report.html").read_text()  # off by default
    grade_all("--similarity")  # already graded: only the class report is rebuilt
    html, md = (out / "class_report.html").read_text(), (out / "class_report.md").read_text()
    assert "never a penalty" in html and "never a penalty" in md
    assert f"| `{FUNCTION}` | ada, ben | 100% |" in md
    assert html.count("<mark>") > 0 and 'id="similar-attention.scaled_dot_product_attention"' in html


def test_code_in_the_side_by_side_view_stays_text(tmp_path):
    """Student code is shown, never interpreted: markup in it arrives escaped."""
    hostile = ORIGINAL.replace('float("-inf")', 'float("-inf") if "</pre><script>alert(1)</script>" else 0')
    report = similarity.compare_class(
        {
            "ada": _stub_submission(tmp_path / "ada", {FUNCTION: hostile}),
            "ben": _stub_submission(tmp_path / "ben", {FUNCTION: hostile}),
        }
    )
    assert _pairs(report, FUNCTION)
    from seqlab.batch import write_class_report

    html, md = write_class_report(tmp_path, [], report)
    text = html.read_text()
    assert "<script>" not in text and "&lt;/pre&gt;&lt;script&gt;alert(1)" in text


def test_copies_of_the_reference_are_flagged_in_a_class_of_twenty(tmp_path):
    """Two copies of solutions/ (one with its solution markers left in, one with them stripped)
    among eighteen students who wrote their own code are flagged, and only they; every pair of
    the eighteen identical functions is listed (153, none hidden by a cap)."""
    alternatives = all_variants("ALTERNATIVES")
    subs = {}
    others = [v for v in alternatives if v.function != alternatives[0].function]  # not a second of the same
    for i in range(18):  # all write one function the same way, and one more of their own
        picked = [alternatives[0], others[i % len(others)]]
        own = {v.function: v.source for v in picked}
        subs[f"student{i:02d}"] = _stub_submission(tmp_path / f"student{i:02d}", own)
    marked = tmp_path / "marked" / "exercises"
    stripped = tmp_path / "stripped" / "exercises"
    shutil.copytree(SOLUTIONS_DIR, marked)
    shutil.copytree(SOLUTIONS_DIR, stripped)
    for path in stripped.glob("*.py"):
        path.write_text(strip_markers(path.read_text()))
    subs.update(marked=marked.parent, stripped=stripped.parent)
    report = similarity.compare_class(subs)
    copies = {c["name"]: c for c in report["copies"]}
    assert set(copies) == {"marked", "stripped"}, copies
    assert copies["marked"]["markers"] and not copies["stripped"]["markers"]
    assert copies["stripped"]["functions"] >= 25
    pair = next(p for p in report["pairs"] if {p["a"], p["b"]} == {"marked", "stripped"})
    assert len(pair["functions"]) == pair["of"] >= 25  # the per-pair summary: n of n functions
    # the students who wrote the same alternative are identical in it: every such pair is listed
    names = {f"student{i:02d}" for i in range(18)}
    listed = {(p["a"], p["b"]) for p in _pairs(report, alternatives[0].function) if {p["a"], p["b"]} <= names}
    assert len(listed) == 18 * 17 // 2
