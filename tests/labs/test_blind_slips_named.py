"""What the labs' feedback names on the blind bank of lab mistakes (tests/labs/blind_slips/).

Each entry is graded as a hand-in, in-process (the feedback is the parent's: the replay, the
probes and the held-out test are the same without the sandbox), with the functions the lab runs
that live in the module the entry changes, so that a broken one is charged the way a whole
grading charges it (the others are the honest base's). The diagnosis is every hint the lab's
tests give, and its messages. Which slip each entry *is* was decided by
reading its description alone, before its diagnosis was seen: tests/labs/blind_slips_expected.yaml,
one slip name (a name of seqlab/labs/differential.py's catalogue, of seqlab/labs/slips.py, of the
grader's tables), ``culprit <function>`` (the lab must name the broken function it runs) or
``none`` (nothing in the catalogue is this mistake), each with its one-line reason.

A hint names a mistake when it opens with a name (``name: what to do``); the locating hints
(the first loss or update "is not the protocol's") name nothing. An entry is named right when a
hint names its expected slip, or the lab's message names its culprit; named wrongly when a hint
names anything else. The bar is the issue's: at least 32 named right and none wrongly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from seqlab.grading import grade_submission, grading_settings
from seqlab.labs import LABS
from tests.labs.blind_slips import load_bank, materialise

EXPECTED = Path(__file__).resolve().parent / "blind_slips_expected.yaml"
MODULE_OF = {lab.function.split(".")[1]: lab.function.split(".")[0] for lab in LABS.values()}
# The openings of hints that locate a departure and name no mistake (seqlab/labs/replay.py).
LOCATING = (
    "the first loss is not the protocol's",
    "the first update is not the protocol's",
    "a later update is not the protocol's",
)
NAMED_RIGHT_AT_LEAST = 32  # the bar, on a bank of 40 or more


def diagnosis(entry: dict, workdir: Path, seed: int = 7) -> dict:
    """The lab's tests on the entry as a hand-in: their scores, hints and messages."""
    function = f"{MODULE_OF[entry['lab']]}.{entry['lab']}"
    folder = materialise(entry, workdir / entry["id"])
    # the functions the lab runs that the entry's module holds: a broken one fails its own tests
    # first, and the lab names it (its culprit), as in a whole grading
    module = entry["module"].removesuffix(".py")
    only = ",".join([function, *(f for f in LABS[function].uses if f.startswith(f"{module}."))])
    result = grade_submission(folder, grading_settings(isolated=False, seed=seed, only=only, labs=True))
    tests = [t for t in result.tests if t.function == function]
    return {
        "function": function,
        "lost": sum(t.max_score - t.score for t in tests),
        "hints": [t.hint for t in tests if t.hint],
        "messages": [t.output for t in tests if t.score < t.max_score],
    }


def verdict(expected: str, found: dict) -> str:
    """``right``, ``wrong`` or ``unnamed`` for one entry's diagnosis."""
    names = [h.split(":", 1)[0] for h in found["hints"] if not h.startswith(LOCATING)]
    if expected.startswith("culprit "):
        culprit = expected.split(" ", 1)[1]
        if any(culprit in m and "failed tests of their own" in m for m in found["messages"]):
            return "wrong" if names else "right"
        return "wrong" if names else "unnamed"
    if not names:
        return "unnamed"
    return "right" if expected != "none" and all(n == expected for n in names) else "wrong"


def bank_verdicts(entries: list[dict], mapping: Path, workdir: Path) -> dict[str, str]:
    """Each entry's verdict against its bank's mapping (which must map every entry, and only those)."""
    expected = yaml.safe_load(mapping.read_text(encoding="utf-8"))
    assert sorted(expected) == sorted(e["id"] for e in entries), "every entry mapped, and only the bank's"
    return {e["id"]: verdict(expected[e["id"]]["slip"], diagnosis(e, workdir)) for e in entries}


@pytest.mark.bank
@pytest.mark.measure  # a development bank now (below): make test-measures
def test_the_blind_bank_is_named_right_and_never_wrongly(tmp_path):
    entries = load_bank()
    expected = yaml.safe_load(EXPECTED.read_text(encoding="utf-8"))
    assert sorted(expected) == sorted(e["id"] for e in entries), "every entry mapped, and only the bank's"
    rows = {}
    for entry in entries:
        found = diagnosis(entry, tmp_path)
        rows[entry["id"]] = {"expected": expected[entry["id"]]["slip"], **found}
        rows[entry["id"]]["verdict"] = verdict(expected[entry["id"]]["slip"], found)
    out = os.environ.get("SEQLAB_BLIND_SLIPS_OUT")
    if out:  # the whole table, for the record (the CHANGELOG's figure)
        Path(out).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    wrong = {k: (r["expected"], r["hints"]) for k, r in rows.items() if r["verdict"] == "wrong"}
    right = [k for k, r in rows.items() if r["verdict"] == "right"]
    assert not wrong, wrong
    assert len(right) >= NAMED_RIGHT_AT_LEAST, (len(right), {k: r["hints"] for k, r in rows.items() if k not in right})


# The second blind bank (tests/labs/blind_slips_2/), written after the catalogue had grown from
# the first, by a writer who read neither; its slips mapped before any diagnosis was seen
# (tests/labs/blind_slips_2_expected.yaml, committed first). Its blind figure, measured once at
# that commit: 27 named right by the mapping, 15 unnamed, and 2 named "loss summed, not averaged"
# where the mapping said "loss scaled by a constant" (a loss multiplied by the batch size, and by
# seq_len: a sum over the batch or the positions, so the name is right and the mapping now says
# it). Since then the bank is a development bank: the catalogue grew from its unnamed kinds
# (by class: the learning rate and clip ignored, the LSTM's cell state, the embeddings scaled
# twice, the encoder fed the wrong input, no teacher forcing, no softplus, the loss on one
# output, overlapping streams) and the graders try every lab argument (seqlab/labs/variants.py:
# kind, float64, lr, clip, a text a multiple of seq_len), so the figure below is a development
# one, held so that a change can only move it up.
EXPECTED_2 = EXPECTED.with_name("blind_slips_2_expected.yaml")
SECOND_RIGHT_AT_LEAST = 43  # measured: 43 right, 0 wrong, 1 unnamed (C from b_B)
SECOND_NAMED_OTHERWISE: set[str] = set()


@pytest.mark.bank
@pytest.mark.slow
@pytest.mark.measure  # a development bank: make test-measures
def test_the_second_blind_bank_keeps_its_blind_figure(tmp_path):
    from tests.labs.blind_slips_2 import load_bank as load_second

    verdicts = bank_verdicts(load_second(), EXPECTED_2, tmp_path)
    wrong = {k for k, v in verdicts.items() if v == "wrong"}
    assert wrong <= SECOND_NAMED_OTHERWISE, wrong - SECOND_NAMED_OTHERWISE
    assert sum(v == "right" for v in verdicts.values()) >= SECOND_RIGHT_AT_LEAST, verdicts


# The third blind bank (tests/labs/blind_slips_3/), 56 mistakes written after the catalogue had
# grown from the first two, by a writer who read neither the catalogue nor the earlier banks; its
# slips mapped from the descriptions before any diagnosis was seen (60ca680). Its blind figure by
# that mapping: 46 named right, 3 named otherwise, 7 unnamed. Two of the three were the mapping's
# errors and one a misleading cause in the feedback's words, fixed (the mapping's header says
# which); this test holds the figure after that: 49 right, none named wrongly.
EXPECTED_3 = EXPECTED.with_name("blind_slips_3_expected.yaml")
THIRD_RIGHT_AT_LEAST = 49


@pytest.mark.bank
@pytest.mark.slow
@pytest.mark.measure  # its three findings were fixed from it: a development bank now, make test-measures
def test_the_third_blind_bank_is_named_right_and_never_wrongly(tmp_path):
    from tests.labs.blind_slips_3 import load_bank as load_third

    verdicts = bank_verdicts(load_third(), EXPECTED_3, tmp_path)
    wrong = {k for k, v in verdicts.items() if v == "wrong"}
    assert not wrong, wrong
    assert sum(v == "right" for v in verdicts.values()) >= THIRD_RIGHT_AT_LEAST, verdicts


# The fourth blind bank (tests/labs/blind_slips_4/), 40 mistakes, ten per lab, written after the
# third bank's fixes by a writer who read neither the catalogue, the diagnoses nor the earlier
# banks' entries, and mapped before any diagnosis was seen (14f73c9). Its blind figure, measured
# once at 14f73c9 (4e98cfb, during the run, changed figures only): 35 named right, none wrongly,
# 5 unnamed. This is the measure (at least 32 right and none wrongly, on 40 or more), and
# the test holds it.
EXPECTED_4 = EXPECTED.with_name("blind_slips_4_expected.yaml")
FOURTH_RIGHT_AT_LEAST = 35


@pytest.mark.bank
@pytest.mark.slow
def test_the_fourth_blind_bank_is_named_right_and_never_wrongly(tmp_path):
    from tests.labs.blind_slips_4 import load_bank as load_fourth

    verdicts = bank_verdicts(load_fourth(), EXPECTED_4, tmp_path)
    wrong = {k for k, v in verdicts.items() if v == "wrong"}
    assert not wrong, wrong
    assert sum(v == "right" for v in verdicts.values()) >= FOURTH_RIGHT_AT_LEAST, verdicts
