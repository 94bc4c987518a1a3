"""The fourth blind bank of realistic lab mistakes: each entry of bank.yaml is an honest hand-in
(tests/student/honest_submissions/<base>) with one snippet of one module replaced.

The same format as the first three banks (tests/labs/blind_slips/README.md), written blind in the
same way but apart from all three, so that a measure of the labs' diagnoses has mistakes that no
earlier bank's writer saw. Every id carries ``b4-`` after its lab's name, so no id can name a
mistake of another bank. This module reuses the first bank's loader (through the second bank's,
which adds the check that ``shows_in`` names configurations prove.py trains) on this folder's
bank.yaml. tests/labs/test_blind_slips_4_wrong.py proves every entry wrong beside its base.
"""

from __future__ import annotations

from pathlib import Path

from tests.labs.blind_slips import HONEST, LABS, BankEntryError, materialise, patched_source
from tests.labs.blind_slips import entry_by_id as _entry_by_id
from tests.labs.blind_slips_2 import CONFIGS
from tests.labs.blind_slips_2 import load_bank as _load_checked_bank

HERE = Path(__file__).resolve().parent
BANK = HERE / "bank.yaml"

# what every id of this bank starts with after its lab's name: the banks are measured together,
# and a prefix of its own keeps an id here from ever naming another bank's mistake
ID_MARK = "-b4-"

__all__ = [
    "BANK",
    "CONFIGS",
    "HONEST",
    "ID_MARK",
    "LABS",
    "BankEntryError",
    "entry_by_id",
    "load_bank",
    "materialise",
    "patched_source",
]


def load_bank(path: Path = BANK) -> list[dict]:
    """Every entry of this bank, checked as the second bank checks its own, and for its id mark."""
    entries = _load_checked_bank(path)
    for entry in entries:
        if not entry["id"].startswith(entry["lab"] + ID_MARK):
            raise BankEntryError(f"{entry['id']}: an id of this bank starts with {entry['lab'] + ID_MARK!r}")
    return entries


def entry_by_id(entry_id: str, entries: list[dict] | None = None) -> dict:
    """The entry of this bank named ``entry_id``."""
    return _entry_by_id(entry_id, entries if entries is not None else load_bank())
