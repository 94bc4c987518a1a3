"""Review flags (seqlab/grading/flags.py): each rule fires on a small attack written for it, the
attacks of tests/attacks/ that use those constructs are flagged, every honest source the
repository holds gives none, and the flags reach the instructor's outputs and never the
student's. Reading sources only: nothing here grades."""

from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path

import pytest

from seqlab.grading.flags import (
    AUTOGRAD_FUNCTION,
    AUTOGRAD_HOOK,
    GRAPH_WALK,
    MAX_MODULE_NUMBERS,
    MAX_MODULE_STRING,
    MAX_NUMBERS,
    MAX_STRING,
    PASTED_TABLE,
    SAVED_TENSORS_HOOKS,
    TORCH_OVERRIDE,
    review_flags,
)
from seqlab.results import GradingResult
from seqlab.results import TestResult as Outcome  # a name pytest does not collect


def _flags(source: str, module: str = "rnn"):
    return review_flags({module: textwrap.dedent(source)})


def _rules(source: str) -> set[str]:
    return {f.rule for f in _flags(source)}


# --- each rule on an attack written for it -----------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nclass _G(torch.autograd.Function):\n    pass\n",
        "from torch.autograd import Function as Fn\nclass _G(Fn):\n    pass\n",
        "import torch.autograd as ag\nclass _G(ag.function.InplaceFunction):\n    pass\n",
        "import torch\nBase = torch.autograd.Function\nclass _G(Base):\n    pass\n",
    ],
)
def test_a_subclass_of_autograd_function_is_flagged_through_any_alias(source):
    assert _rules(source) == {AUTOGRAD_FUNCTION}


@pytest.mark.parametrize(
    "source",
    [
        "def f(x, g):\n    x.register_hook(lambda _: g)\n",
        "def f(m):\n    m.register_full_backward_hook(print)\n",
        "def f(x, g):\n    getattr(x, 'register_hook')(lambda _: g)\n",
        "from torch.nn.modules.module import register_module_forward_hook\n",
        "def f(p):\n    p.register_post_accumulate_grad_hook(print)\n",
    ],
)
def test_every_autograd_hook_is_flagged_however_named(source):
    assert _rules(source) == {AUTOGRAD_HOOK}


@pytest.mark.parametrize(
    "source",
    [
        "import torch\ndef f(x):\n    with torch.autograd.graph.saved_tensors_hooks(id, id):\n        return x\n",
        "from torch.autograd.graph import save_on_cpu\n",
        "import torch\nG = torch.autograd.graph\n",
        "import torch\nd = {'saved_tensors_hooks': None}\n",
    ],
)
def test_the_saved_tensor_hooks_of_autograd_graph_are_flagged(source):
    assert _rules(source) == {SAVED_TENSORS_HOOKS}


def test_a_class_that_overrides_torch_calls_is_flagged():
    source = """
        import torch
        class _Liar(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return super().__torch_function__(func, types, args, kwargs or {})
    """
    assert [(f.rule, f.where, f.line) for f in _flags(source)] == [(TORCH_OVERRIDE, "rnn._Liar", 5)]
    assert _rules("class _D:\n    def __torch_dispatch__(self, *a):\n        pass\n") == {TORCH_OVERRIDE}


def test_walking_the_graph_by_hand_is_flagged_at_its_function_and_line():
    flags = _flags("""
        def _backprop(loss):
            node = loss.grad_fn
            return [n for n, _ in node.next_functions]
    """)
    assert [(f.rule, f.where, f.line) for f in flags] == [
        (GRAPH_WALK, "rnn._backprop", 3),
        (GRAPH_WALK, "rnn._backprop", 4),
    ]
    assert "next_functions" in flags[1].evidence


def test_a_variable_is_judged_by_what_it_is_bound_to_not_by_its_name():
    assert _flags("def step(w, grad_fn, register_hook=None):\n    return w - grad_fn(w)\n") == []
    aliased = _flags("import torch\nhooks = torch.autograd.graph.saved_tensors_hooks\ndef f():\n    return hooks\n")
    assert [(f.rule, f.line) for f in aliased] == [(SAVED_TENSORS_HOOKS, 2), (SAVED_TENSORS_HOOKS, 4)]


def test_pasted_weights_are_flagged_as_one_literal_many_literals_or_a_string():
    one = [[0.1 * i + 0.01 * j for j in range(9)] for i in range(9)]  # 81 numbers, one literal
    flags = _flags(f"W = {one!r}\n")
    assert [(f.rule, f.where, f.line) for f in flags] == [(PASTED_TABLE, "exercises/rnn.py", 1)]
    assert "81 numbers" in flags[0].evidence
    split = "".join(f"W{i} = {[0.5 + i] * 60!r}\n" for i in range(8))  # 480 numbers, none over 64
    assert _rules(split) == {PASTED_TABLE}
    assert _rules(f"BLOB = {'A' * (MAX_STRING + 1)!r}\n") == {PASTED_TABLE}
    pieces = "".join(f"B{i} = {'A' * MAX_STRING!r}\n" for i in range(MAX_MODULE_STRING // MAX_STRING + 1))
    assert _rules(pieces) == {PASTED_TABLE}  # no string over the bound, the module over its own


def test_the_pasted_table_bounds_leave_what_honest_code_writes():
    assert _flags(f"SHAPE = {list(range(MAX_NUMBERS))!r}\n") == []  # exactly the bound
    assert _flags(f'def f():\n    """{"a long docstring " * 400}"""\n    return 1\n') == []
    assert MAX_NUMBERS < MAX_MODULE_NUMBERS


def test_the_pasted_weights_attack_on_the_character_lab_is_flagged():
    """tests/mutants/labs.py's "returns pasted pre-trained weights without training", with
    weights of the lab's own shapes (initial ones: what matters here is the literal)."""
    from seqlab.labs import char_rnn
    from tests.mutants.labs import LAB_ATTACKS

    attack = next(a for a in LAB_ATTACKS if "pasted" in a.description)
    params = char_rnn.draw_task(999)[0]["params"]
    source = attack.source.replace("{pasted}", repr({k: v.tolist() for k, v in params.items()}))
    flags = _flags(source)
    assert [(f.rule, f.where) for f in flags] == [(PASTED_TABLE, "rnn.train_char_rnn")], flags


def test_a_source_that_does_not_parse_or_nests_deeply_gives_no_fault():
    assert _flags("def f(:\n") == []
    deep = "x = " + "(" * 90 + "1" + ")" * 90 + "\n"
    assert _flags(deep) == []


# --- the attacks of tests/attacks/ that use these constructs ------------------------------------

# Which attack of which bank is flagged, and for what; every other attack of these banks is
# flagged by no rule (what holds them is another layer, tests/student/test_attacks.py and the
# banks' own tests). The measure-* and reads-the-reference attacks carry their code as a long
# string for numpy.testing.measure: pasted text.
FLAGGED = {
    ("attacks", "tensor-subclass-with-lying-comparisons"): {TORCH_OVERRIDE},
    ("attacks", "no-op-saved-tensors-hooks-hide-autograd"): {SAVED_TENSORS_HOOKS},
    ("subset", "dunder-class-assignment-liar"): {TORCH_OVERRIDE},
    ("subset", "dunder-duck-tensor-class-property"): {TORCH_OVERRIDE},
    ("subset", "fake-subclass-lying-shape-dtype"): {TORCH_OVERRIDE},
    ("subset", "fs-deep-expression-crashes-visitor"): {PASTED_TABLE},
    ("subset", "path-grad-fn-walk-manual-autograd"): {GRAPH_WALK},
    ("subset", "path-grad-fn-walk-factory-kwarg"): {GRAPH_WALK},
    ("backward", "autograd-function-backward-by-the-layer-norm-kernel"): {AUTOGRAD_FUNCTION},
    ("backward", "tensor-hooks-replace-gradients-from-the-layer-norm-kernel"): {AUTOGRAD_HOOK},
    ("blind", "gradient-hooks-collect-bptt"): {AUTOGRAD_HOOK},
    ("blind", "torch-hooks-replaced-through-module-setstate"): {SAVED_TENSORS_HOOKS},
    ("blind", "numpy-measure-execs-a-helper-at-import"): {PASTED_TABLE},
    ("blind", "lab-copy-torch-adam-defined-by-numpy-measure"): {PASTED_TABLE},
    ("blind", "unrestricted-code-reads-the-reference"): {PASTED_TABLE},
    ("blind", "lazy-tensor-subclass-runs-layer-norm-after-the-watch"): {TORCH_OVERRIDE},
}


def _attack_texts(attack) -> dict[str, str]:
    """The modules of an attack of tests/attacks/ (built on solutions/) as build() writes them."""
    from seqlab.build import replace_function
    from tests.grading.honest_corpus import ROOT

    text = (ROOT / "solutions" / f"{attack.module}.py").read_text(encoding="utf-8")
    if attack.source:
        text = replace_function(text, attack.target.split(".", 1)[1], attack.source)
    if attack.prelude:
        at = text.index("\ndef ")
        text = text[:at] + "\n" + attack.prelude + text[at:]
    texts = {attack.module: text}
    for rel, content in attack.files.items():
        if isinstance(content, str) and rel.startswith("exercises/") and rel.endswith(".py"):
            texts[rel[len("exercises/") : -3]] = content
    return texts


def _blind_texts(attack) -> dict[str, str]:
    """The modules of a blind-bank attack (built on the functional honest style)."""
    from tests.attacks.blind_integrity_bank import patched_module

    texts = {attack.module: patched_module(attack)}
    texts.update({rel[:-3]: body for rel, body in attack.files.items() if rel.endswith(".py")})
    return texts


@pytest.mark.bank  # ~2 s: every attack of four banks built in memory and scanned
def test_the_attacks_that_use_these_constructs_are_flagged_and_no_other():
    from tests.attacks import ATTACKS, SUBSET_ATTACKS
    from tests.attacks.backward_route import ATTACKS as BACKWARD
    from tests.attacks.blind_integrity_bank import BANK

    banks = {
        "attacks": (ATTACKS, _attack_texts),
        "subset": (SUBSET_ATTACKS, _attack_texts),
        "backward": (BACKWARD, _blind_texts),
        "blind": (BANK, _blind_texts),
    }
    found = {}
    for bank, (attacks, texts_of) in banks.items():
        for attack in attacks:
            rules = {f.rule for f in review_flags(texts_of(attack))}
            if rules:
                found[(bank, attack.name)] = rules
    assert found == FLAGGED


# --- honest code: no flag ------------------------------------------------------------------------


@pytest.mark.bank  # ~5 s: 669 honest modules parsed and scanned
def test_no_honest_source_the_repository_holds_is_flagged():
    from tests.grading.honest_corpus import honest_sources

    sources = honest_sources()
    kinds = {label.split("/")[0] for label, _, _ in sources}
    assert len(sources) >= 600 and {"honest", "solutions", "demo", "idiom", "heldout", "blind_slips"} <= kinds
    flagged = [(label, f) for label, module, text in sources for f in review_flags({module: text})]
    assert flagged == [], flagged[:5]


def test_the_honest_functional_style_is_not_flagged():
    """The make-test share of the bank test above: one honest style, whole (a tenth of a second)."""
    from tests.grading.honest_corpus import HONEST

    exercises = HONEST / "functional" / "exercises"
    texts = {p.stem: p.read_text(encoding="utf-8") for p in exercises.glob("*.py") if p.stem != "__init__"}
    assert len(texts) == 7 and review_flags(texts) == []


# --- where the flags go ---------------------------------------------------------------------------

FLAG = {"rule": AUTOGRAD_HOOK, "where": "rnn.rnn_bptt", "line": 12, "evidence": "register_hook: a hook runs this code"}


def _result(flags=(FLAG,)) -> GradingResult:
    tests = [Outcome("rnn.rnn_bptt: gradients", 2.0, 2.0)]
    return GradingResult(tests=tests, submission="ann", seed=3, review_flags=list(flags))


def test_the_flags_are_in_the_results_model_and_survive_its_json():
    result = _result()
    again = GradingResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.review_flags == [FLAG] and again.score == 2.0  # no points taken
    assert GradingResult.from_dict({"tests": []}).review_flags == []  # results written before flags


def test_the_instructor_sees_the_flags_and_the_student_never(tmp_path):
    from seqlab.reports import write_all

    paths = write_all(_result(), tmp_path)
    assert "report_instructor.html" in paths
    copy = (tmp_path / "report_instructor.html").read_text(encoding="utf-8")
    assert "For review" in copy and "rnn.rnn_bptt" in copy and "line 12" in copy and FLAG["evidence"] in copy
    for student in ("report.html", "summary.md", "results.json", "junit.xml"):
        text = (tmp_path / student).read_text(encoding="utf-8")
        assert "register_hook" not in text and "For review" not in text, student
    write_all(_result(flags=()), tmp_path)  # a regrade without flags leaves no stale copy
    assert not (tmp_path / "report_instructor.html").exists()


def test_gradescope_shows_the_flags_to_the_staff_only():
    """The autograder's results.json carries each flag as a hidden test worth nothing (Gradescope
    shows hidden tests to the course's staff, never to the student); the score is untouched and
    ``seqlab grade``'s own results.json, which may reach the student, carries none."""
    import jsonschema

    from seqlab.config import load_config
    from seqlab.gradescope.autograder import graded_results
    from seqlab.reports.gradescope import to_gradescope

    schema = json.loads(
        (Path(__file__).resolve().parents[2] / "schemas" / "gradescope_results.schema.json").read_text()
    )
    data = graded_results(_result(), load_config(), [], started=0.0)
    jsonschema.validate(data, schema)
    (review,) = [t for t in data["tests"] if "review" in t["tags"]]
    assert review["visibility"] == "hidden" and review["score"] == review["max_score"] == 0
    assert review["name"].startswith("review.autograd-hook: rnn.rnn_bptt, line 12")
    from seqlab.escape import markdown_inline

    assert markdown_inline(FLAG["evidence"]) in review["output"] and data["score"] == 2.0
    assert all(t["visibility"] != "hidden" for t in data["tests"] if t is not review)
    assert "register_hook" not in json.dumps(to_gradescope(_result()))


def test_the_gradebook_and_the_class_report_list_the_flags(tmp_path):
    from seqlab.gradebook import RESULT_FILE, gradebook_from_results
    from seqlab.reports import write_all

    for name, flags in (("ann", (FLAG,)), ("bob", ())):
        write_all(_result(flags), tmp_path / "results" / name)
        assert (tmp_path / "results" / name / RESULT_FILE).is_file()
    out = tmp_path / "out"
    gradebook_from_results(tmp_path / "results", ["ann", "bob"], out, missing_reason="none")

    with (out / "gradebook.csv").open(encoding="utf-8") as handle:
        rows = {r["submission"]: r for r in csv.DictReader(handle)}
    assert rows["ann"]["review"] == "autograd-hook at rnn.rnn_bptt:12" and rows["bob"]["review"] == ""
    assert rows["ann"]["total"] == rows["bob"]["total"]
    from seqlab.escape import markdown_inline

    for report, evidence in (
        ("class_report.md", markdown_inline(FLAG["evidence"])),
        ("class_report.html", FLAG["evidence"]),
    ):
        text = (out / report).read_text(encoding="utf-8")
        assert "For review (1)" in text and evidence in text and "ann/report_instructor.html" in text, report
        assert "bob/report_instructor.html" not in text


@pytest.mark.bank
@pytest.mark.slow  # one sandboxed grading of one function, ~3 s
def test_a_grading_carries_the_flags_of_the_sources_it_ran(tmp_path):
    from seqlab.grading import grade_submission, grading_settings
    from tests.attacks.backward_route import ATTACKS
    from tests.attacks.blind_integrity_bank import build

    attack = next(a for a in ATTACKS if a.name == "autograd-function-backward-by-the-layer-norm-kernel")
    result = grade_submission(build(attack, tmp_path), grading_settings(seed=5, only=attack.target, labs=False))
    assert [(f["rule"], f["where"]) for f in result.review_flags] == [(AUTOGRAD_FUNCTION, "transformer._LN")]
    assert "_LN subclasses torch.autograd.Function" in result.review_flags[0]["evidence"]
