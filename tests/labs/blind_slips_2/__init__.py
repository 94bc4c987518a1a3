"""The second blind bank of realistic lab mistakes: each entry of bank.yaml is an honest hand-in
(tests/student/honest_submissions/<base>) with one snippet of one module replaced.

The same format as the first bank (tests/labs/blind_slips/README.md), written blind in the same
way but later and apart from it, so that a measure of the labs' diagnoses has mistakes that
neither bank's writer saw. This module reuses the first bank's loader on this folder's bank.yaml
and adds one check of its own: ``shows_in`` names configurations that prove.py trains.
tests/labs/test_blind_slips_2_wrong.py proves every entry wrong beside its base.
"""

from __future__ import annotations

from pathlib import Path

from tests.labs.blind_slips import HONEST, LABS, BankEntryError, materialise, patched_source
from tests.labs.blind_slips import entry_by_id as _entry_by_id
from tests.labs.blind_slips import load_bank as _load_bank

HERE = Path(__file__).resolve().parent
BANK = HERE / "bank.yaml"

# the configurations prove.py trains for each lab (its *_configs functions): an entry's
# ``shows_in`` must name some of these, or its proof would check a run that never happens
CONFIGS = {
    "train_char_rnn": ("default",),
    "train_recall": ("gru", "lstm", "rnn"),
    "train_reverser": ("default",),
    "train_selective_copy": ("selective", "time-invariant"),
}

__all__ = [
    "BANK",
    "CONFIGS",
    "HONEST",
    "LABS",
    "BankEntryError",
    "entry_by_id",
    "load_bank",
    "materialise",
    "patched_source",
]


def load_bank(path: Path = BANK) -> list[dict]:
    """Every entry of this bank, checked as the first bank checks its own, and for ``shows_in``."""
    entries = _load_bank(path)
    for entry in entries:
        shows_in = entry.get("shows_in")
        if not isinstance(shows_in, list) or not shows_in:
            raise BankEntryError(f"{entry['id']}: shows_in must be a non-empty list of configurations")
        unknown = [name for name in shows_in if name not in CONFIGS[entry["lab"]]]
        if unknown:
            raise BankEntryError(f"{entry['id']}: shows_in names {unknown}, not configurations of {entry['lab']}")
    return entries


def entry_by_id(entry_id: str, entries: list[dict] | None = None) -> dict:
    """The entry of this bank named ``entry_id``."""
    return _entry_by_id(entry_id, entries if entries is not None else load_bank())
