"""Probes of the callee stand-ins, the channel and the reports (tests/attacks/channel_and_oracle.py),
packed into a few submissions with one isolated grading each: every probe gets what it should on
its target, the rest of the pack keeps its score, and the reports of a hostile grading hold.
"""

from __future__ import annotations

import json
from xml.etree import ElementTree

import jsonschema
import pytest

from seqlab.contract import EXERCISES
from seqlab.grading import grade_submission, grading_settings
from seqlab.reports import write_all
from seqlab.reports.render import environment
from tests._helpers import RESULTS_SCHEMA
from tests._recorded import assert_same_grade
from tests.attacks import ATTACKS
from tests.attacks.channel_and_oracle import (
    PACKS,
    PROBES,
    ROUTE_CALLEES,
    ROUTES,
    build_pack,
    oracle_stand_in,
)

# Anything left of an escape or a control character in a report would reach a terminal or a parser.
_UNSAFE = [chr(c) for c in range(32) if chr(c) not in "\t\n"] + ["\x7f", "\ufffe"]


@pytest.fixture(scope="session")
def graded_pack(tmp_path_factory, fast_config, sandbox_mode):
    """Grades each pack once per worker (isolated, the course's graders), on first use. The tests
    of one pack are one xdist group (``_with_its_pack``), so each pack is graded once in all."""
    done = {}

    def grade(pack):
        if pack.name not in done:
            root = tmp_path_factory.mktemp(pack.name)
            submission = build_pack(pack, root)
            out = root / "out"
            result = grade_submission(
                submission,
                grading_settings(
                    isolated=True,
                    seed=5,
                    config=fast_config,
                    only=",".join(sorted({p.module for p in pack.probes})),
                    protected_dirs=(str(out),),
                    sandbox=sandbox_mode,
                    # the probes use os, sys and frames on purpose: they test the
                    # channel and the callees underneath the static policy
                    static_policy=False,
                ),
            )
            done[pack.name] = (result, write_all(result, out))
        return done[pack.name]

    return grade


def _pack_of(probe):
    return next(pack for pack in PACKS if probe in pack.probes)


def _with_its_pack(values, pack_of):
    """Parameters that run on the worker that grades their pack (packs spread over the workers)."""
    return [pytest.param(v, id=v.name, marks=pytest.mark.xdist_group(f"probe-pack-{pack_of(v).name}")) for v in values]


def test_probe_bank_covers_the_families():
    assert len(PROBES) >= 25
    assert len(ATTACKS) + len(PROBES) >= 60
    assert {p.target for p in ROUTES} >= {
        "optimizers.sgd",
        "rnn.rnn_bptt",
        "lstm_gru.lstm_cell",
        "attention.scaled_dot_product_attention",
        "rnn.softmax_cross_entropy",
        "selective_scan.linear_scan",
    }


@pytest.mark.parametrize("probe", _with_its_pack(PROBES, _pack_of))
def test_probe(probe, graded_pack):
    result, _ = graded_pack(_pack_of(probe))
    score, max_score = result.by_function()[probe.target]
    tests = [t for t in result.tests if t.function == probe.target]
    if probe.expect == "zero":
        assert score == 0, f"{probe.name} earned {score} of {max_score}: {[t.name for t in tests if t.score]}"
    elif probe.expect == "full":
        assert score == pytest.approx(max_score), [(t.name, t.output[:300]) for t in tests if t.score < t.max_score]
    elif probe.expect == "module-lost":
        lost = {f: s for f, s in result.by_function().items() if f.startswith(probe.module + ".")}
        assert all(s == 0 for s, _ in lost.values()), lost
        assert any(f"exercises/{probe.module}.py" in e for e in result.errors), result.errors
    elif probe.expect == "chunk-at-least-T":
        # Calling rnn_bptt on the whole sequence is truncated BPTT exactly when chunk >= T.
        for t in tests:
            whole = "chunk == T" in t.name or "chunk > T" in t.name
            assert t.score == pytest.approx(t.max_score if whole else 0), (t.name, t.score, t.output[:300])
    elif probe.expect == "float32-lost":
        for t in tests:
            lost = "float32" in t.name
            assert t.score == pytest.approx(0 if lost else t.max_score), (t.name, t.score, t.output[:300])
            if lost:
                assert "protocol" in t.output or "the call" in t.output, t.output[:300]
    else:
        raise AssertionError(f"unknown expectation {probe.expect}")
    if probe.message:
        said = result.errors if probe.expect == "module-lost" else [t.output for t in tests]
        assert any(probe.message in text for text in said), (probe.message, [text[:300] for text in said])


@pytest.mark.parametrize("pack", _with_its_pack(PACKS, lambda pack: pack))
def test_pack_leaves_the_rest_alone_and_reports_hold(pack, graded_pack, sandbox_mode):
    result, paths = graded_pack(pack)
    assert_same_grade("probe-packs", pack.name, result, sandbox=sandbox_mode)
    lost_modules = {p.module for p in pack.probes if p.expect == "module-lost"}
    targets = {p.target for p in pack.probes}
    scores = result.by_function()
    assert set(scores) == {f for f in EXERCISES if f.split(".")[0] in {p.module for p in pack.probes}}
    for function, (score, max_score) in scores.items():
        if function in targets or function.split(".")[0] in lost_modules:
            continue
        expected = 0 if pack.base == "stubs" else max_score
        assert score == pytest.approx(expected), f"{pack.name}: {function} has {score} of {max_score}"

    results_json = json.loads(paths["results.json"].read_text(encoding="utf-8"))
    jsonschema.validate(results_json, RESULTS_SCHEMA)
    assert results_json["score"] == pytest.approx(result.score)
    assert paths["results.json"].stat().st_size < 2_000_000, "student text must not bloat the report"
    ElementTree.parse(paths["junit.xml"])  # raises on a control character or broken markup
    summary = paths["summary.md"].read_text(encoding="utf-8")
    headlines = [line for line in summary.splitlines() if line.lstrip().startswith("#")]
    pts = environment().filters["pts"]
    assert headlines == [f"## seqlab: {pts(result.score)} / {pts(result.max_score)} points ({result.percent:.1f}%)"]
    assert summary.count("## seqlab:") == 1
    html = paths["report.html"].read_text(encoding="utf-8")
    raw_json = paths["results.json"].read_text(encoding="utf-8")
    for name, text in (
        ("summary.md", summary),
        ("report.html", html),
        ("results.json", raw_json),
        ("junit.xml", paths["junit.xml"].read_text(encoding="utf-8")),
    ):
        assert not [c for c in _UNSAFE if c in text], f"{name} holds a control character"
        assert not any(0xD800 <= ord(c) <= 0xDFFF for c in text), f"{name} holds a lone surrogate"
        if name != "results.json":  # JSON carries the text as data; Gradescope shows it as plain text
            assert "<script>alert" not in text and "<img src=x" not in text, f"{name} holds the student's raw HTML"
    assert "| forged | 99 / 99 |" not in summary


def test_routes_compute_the_answer_over_correct_callees(tmp_path):
    """The control: the same one-liners over the old grader's oracle (the callee computed by the
    reference on whatever arguments it gets) earn points, so each route is a real one, and the
    zero it gets now is the oracle's absence."""
    pack = next(p for p in PACKS if p.name == "oracle-routes")
    # Routes that would call each other in circles (rnn_cell -> rnn_forward -> birnn_forward ->
    # rnn_forward, softmax_cross_entropy -> rnn_bptt -> truncated_bptt -> rnn_bptt) go apart.
    apart = {"rnn.rnn_forward", "rnn.rnn_bptt"}
    for i, probes in enumerate(
        ([p for p in ROUTES if p.target not in apart], [p for p in ROUTES if p.target in apart])
    ):
        oracles = [oracle_stand_in(ROUTE_CALLEES[p.target]) for p in probes]
        submission = build_pack(pack, tmp_path / str(i), base="reference", probes=probes + oracles)
        # static_policy=False: the control's stand-ins import seqlab to play the old oracle
        result = grade_submission(
            submission,
            grading_settings(
                isolated=False, seed=5, static_policy=False, only=",".join(sorted({p.module for p in probes}))
            ),
        )
        scores = result.by_function()
        for route in probes:
            assert scores[route.target][0] > 0, f"{route.name} is no route: it earns nothing over correct callees"


def test_honest_blocks_over_a_wrong_multi_head_attention_keep_full_marks(tmp_path, fast_config):
    """Charged once: a wrong (not missing) attention costs attention only, in the isolated runner."""
    from tests.mutants import all_variants, make_submission

    wrong = next(
        m
        for m in all_variants("MUTANTS")
        if m.function == "attention.multi_head_attention" and m.description == "interleaved heads"
    )
    submission = make_submission(tmp_path / "wrong-mha", wrong)
    result = grade_submission(
        submission, grading_settings(isolated=True, seed=5, config=fast_config, only="attention,transformer")
    )
    scores = result.by_function()
    assert scores["attention.multi_head_attention"][0] < scores["attention.multi_head_attention"][1]
    for block in ("transformer.encoder_block", "transformer.decoder_block"):
        assert scores[block][0] == pytest.approx(scores[block][1]), (block, scores[block])
