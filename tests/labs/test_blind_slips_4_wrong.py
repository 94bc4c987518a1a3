"""The fourth blind bank (tests/labs/blind_slips_4/bank.yaml) is well formed, and every entry is a
mistake: trained beside its honest base by the first bank's prove.py, on the same small float64
inputs, it differs from the base in every configuration its ``shows_in`` names.

The checks of the format are fast and run in ``make test``; the proofs train two loops per
configuration in a subprocess (about two seconds an entry), so they are bank-marked.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.labs import blind_slips, blind_slips_2, blind_slips_3
from tests.labs.blind_slips_4 import CONFIGS, HONEST, ID_MARK, LABS, load_bank, materialise, patched_source

ROOT = Path(__file__).resolve().parents[2]
PROVE = ROOT / "tests" / "labs" / "blind_slips" / "prove.py"
ENTRIES = load_bank()

# Two correct loops on prove.py's float64 inputs agree to about 1e-12 (its docstring; the first
# bank's test holds the honest styles to that). 1e-9 leaves a thousandfold margin for another
# order of the same float64 sums, and is far below the smallest difference an entry here makes
# (thousandths of a nat in the losses): what passes it is the mistake, not rounding.
TOLERANCE = 1e-9

# the brief asked for exactly ten mistakes per lab, 40 in all: a lab with fewer is measured on too
# few to tell a rule that names its mistakes from one that got lucky, and an equal share keeps one
# lab's rows from outweighing another's when this bank is measured on its own
PER_LAB = 10
IN_ALL = 40


def test_every_lab_has_its_share_of_mistakes():
    counts = {lab: sum(entry["lab"] == lab for entry in ENTRIES) for lab in LABS}
    assert all(count == PER_LAB for count in counts.values()), counts
    assert len(ENTRIES) == IN_ALL


def test_no_id_is_taken_from_an_earlier_bank():
    # the banks are measured together: one id naming two mistakes would merge their rows. The
    # earlier banks are read through their loaders only (their entries stay unread here).
    earlier = set()
    for bank in (blind_slips, blind_slips_2, blind_slips_3):
        earlier |= {entry["id"] for entry in bank.load_bank()}
    assert not {entry["id"] for entry in ENTRIES} & earlier
    assert not any(ID_MARK in entry_id for entry_id in earlier)


def test_the_entries_spread_over_the_honest_styles():
    # one style's habits must not make the whole bank: every honest hand-in is the base of some entry
    styles = {path.name for path in HONEST.iterdir() if (path / "exercises").is_dir()}
    assert {entry["base"] for entry in ENTRIES} == styles


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry["id"] for entry in ENTRIES])
def test_the_patched_module_is_still_python(entry):
    # a mistake that does not even import is a syntax slip, not a lab mistake to diagnose
    ast.parse(patched_source(entry))
    assert entry["id"].startswith(entry["lab"] + ID_MARK)
    assert set(entry["shows_in"]) <= set(CONFIGS[entry["lab"]])


def _prove(entry: dict, workdir: Path) -> dict:
    slip = materialise(entry, workdir / "slip")
    done = subprocess.run(
        [sys.executable, str(PROVE), str(HONEST / entry["base"]), str(slip), entry["lab"]],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.bank
@pytest.mark.parametrize("entry", ENTRIES, ids=[entry["id"] for entry in ENTRIES])
def test_the_entry_is_wrong_beside_its_base(entry, tmp_path):
    report = _prove(entry, tmp_path)
    for name, outcome in report.items():
        # the base is an honest hand-in: it must train cleanly, or the comparison proves nothing
        assert outcome["base_error"] is None, (name, outcome["base_error"])
        assert outcome["base_violations"] == [], (name, outcome["base_violations"])
    for name in entry["shows_in"]:
        outcome = report[name]
        differs = (
            outcome["slip_error"] is not None
            or outcome["slip_violations"] != []
            or outcome["loss_diff"] > TOLERANCE
            or outcome["param_diff"] > TOLERANCE
        )
        assert differs, (name, outcome)
