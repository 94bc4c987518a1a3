"""The blind bank of lab mistakes (tests/labs/blind_slips/bank.yaml) is a bank of mistakes, not
of alternative correct loops: every entry, trained beside its honest base on the same inputs,
returns something else, or breaks a property its lab's docstring states.

Each comparison runs tests/labs/blind_slips/prove.py in a process of its own (two ``exercises``
packages imported side by side under two names), so those tests are in the bank. The cheap checks
of the bank's format and of the loader are not.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.labs.blind_slips import (
    HONEST,
    LABS,
    BankEntryError,
    load_bank,
    materialise,
    patched_source,
)

PROVE = Path(__file__).resolve().parent / "blind_slips" / "prove.py"
ENTRIES = load_bank()
STYLES = sorted(path.name for path in HONEST.iterdir() if (path / "exercises").is_dir())
# Two training runs that differ by more than this (in a loss, or in any trained weight) are two
# different trainings. prove.py trains in float64 on one thread: the honest styles, written
# independently, agree to 1.2e-11 on the reverser (its attention sums in different orders, which
# Adam's few steps amplify) and to 4e-16 on the other three labs, measured against functional;
# test_the_honest_styles_agree_within_the_tolerance holds it. 1e-6 leaves four orders of magnitude
# for rounding and still catches a slip whose effect is a millionth of a nat.
TOLERANCE = 1e-6


def _compare(base: Path, other: Path, lab: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(PROVE), str(base), str(other), lab], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _how_wrong(config: dict) -> list[str]:
    """What sets the slip's run apart from its base's in one configuration (empty: nothing)."""
    if config["slip_error"] is not None:
        return [f"raises {config['slip_error']}"]
    found = [v for v in config["slip_violations"] if v not in config["base_violations"]]
    if config["loss_diff"] > TOLERANCE:
        found.append(f"losses differ by {config['loss_diff']:.3g}")
    if config["param_diff"] > TOLERANCE:
        found.append(f"trained weights differ by {config['param_diff']:.3g}")
    return found


def test_the_bank_has_enough_entries_on_every_lab_and_style():
    # the brief of the bank: at least 45 mistakes, at least 8 per lab, and no single style
    # carrying them (a diagnosis tuned to one way of writing a loop would pass unnoticed)
    assert len(ENTRIES) >= 45
    per_lab = {lab: sum(entry["lab"] == lab for entry in ENTRIES) for lab in LABS}
    assert min(per_lab.values()) >= 8, per_lab
    assert {entry["base"] for entry in ENTRIES} == set(STYLES)


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry["id"] for entry in ENTRIES])
def test_every_entry_applies_exactly_once(entry):
    text = patched_source(entry)
    compile(text, entry["module"], "exec")  # a mistake in the logic, never a syntax error
    assert entry["shows_in"], "an entry names the configurations of prove.py where it shows"


def test_materialise_writes_the_base_with_the_patch(tmp_path):
    entry = ENTRIES[0]
    folder = materialise(entry, tmp_path / "submission")
    module = (folder / "exercises" / entry["module"]).read_text(encoding="utf-8")
    assert entry["new"] in module and module.count(entry["old"]) == 0
    base = HONEST / entry["base"] / "exercises"
    for path in base.glob("*.py"):
        if path.name != entry["module"]:
            assert (folder / "exercises" / path.name).read_bytes() == path.read_bytes()


def test_a_snippet_not_found_once_is_refused_before_anything_is_written(tmp_path):
    missing = {**ENTRIES[0], "old": "this text is in no module\n"}
    with pytest.raises(BankEntryError, match="0 times"):
        materialise(missing, tmp_path / "missing")
    twice = {**ENTRIES[0], "old": "\n\ndef "}  # every function of the module
    with pytest.raises(BankEntryError, match="not once"):
        materialise(twice, tmp_path / "twice")
    assert not (tmp_path / "missing").exists() and not (tmp_path / "twice").exists()


@pytest.mark.bank
@pytest.mark.parametrize("entry", ENTRIES, ids=[entry["id"] for entry in ENTRIES])
def test_every_entry_is_wrong_beside_its_base(entry, tmp_path):
    report = _compare(HONEST / entry["base"], materialise(entry, tmp_path / "slip"), entry["lab"])
    for name, config in report.items():
        assert config["base_error"] is None and not config["base_violations"], (name, config)
    shown = {name for name, config in report.items() if _how_wrong(config)}
    assert shown, f"{entry['id']} trains as its base does: {report}"
    assert set(entry["shows_in"]) <= shown, f"{entry['id']} shows only in {sorted(shown)}: {report}"


@pytest.mark.bank
@pytest.mark.parametrize("lab", LABS)
@pytest.mark.parametrize("style", [style for style in STYLES if style != "functional"])
def test_the_honest_styles_agree_within_the_tolerance(style, lab):
    # what makes a difference above TOLERANCE a mistake: two correct loops stay under it
    report = _compare(HONEST / "functional", HONEST / style, lab)
    for name, config in report.items():
        assert not _how_wrong(config), (style, lab, name, config)
