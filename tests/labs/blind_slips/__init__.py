"""A blind bank of realistic lab mistakes: each entry of bank.yaml is an honest hand-in
(tests/student/honest_submissions/<base>) with one snippet of one module replaced.

Written without looking at the graders, the reference solutions or the known-wrong variants
seqlab already carries, so that a measure of the diagnoses on it is not a measure on mistakes
chosen to fit them. README.md in this folder describes the format; tests/labs/test_blind_slips_wrong.py
proves every entry wrong by training it beside its base.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
BANK = HERE / "bank.yaml"
HONEST = HERE.parent.parent / "student" / "honest_submissions"
LABS = ("train_char_rnn", "train_recall", "train_reverser", "train_selective_copy")
FIELDS = ("id", "base", "module", "old", "new", "lab", "description", "proof")


class BankEntryError(ValueError):
    """An entry of bank.yaml that cannot be applied as written."""


def load_bank(path: Path = BANK) -> list[dict]:
    """Every entry of the bank, checked for its fields, a known base, module and lab, and a unique id."""
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(entries, list):
        raise BankEntryError(f"{path}: expected a list of entries")
    seen: set[str] = set()
    for entry in entries:
        # every field a non-empty string, but ``new``, which is empty where the mistake deletes code
        missing = [
            field for field in FIELDS if not isinstance(entry.get(field), str) or (not entry[field] and field != "new")
        ]
        if missing:
            raise BankEntryError(f"{entry.get('id', '?')}: missing or empty {', '.join(missing)}")
        if entry["id"] in seen:
            raise BankEntryError(f"{entry['id']}: duplicate id")
        seen.add(entry["id"])
        if entry["lab"] not in LABS:
            raise BankEntryError(f"{entry['id']}: lab {entry['lab']!r} is not one of {LABS}")
        if not (HONEST / entry["base"] / "exercises" / entry["module"]).is_file():
            raise BankEntryError(f"{entry['id']}: no module {entry['module']} in base {entry['base']!r}")
        if entry["old"] == entry["new"]:
            raise BankEntryError(f"{entry['id']}: old and new are the same text")
    return entries


def patched_source(entry: dict) -> str:
    """The module of the entry's base with ``old`` replaced by ``new``; ``old`` must occur exactly
    once (a snippet found twice could patch the wrong place, one not found means the base moved)."""
    source = (HONEST / entry["base"] / "exercises" / entry["module"]).read_text(encoding="utf-8")
    count = source.count(entry["old"])
    if count != 1:
        raise BankEntryError(
            f"{entry['id']}: the snippet occurs {count} times in {entry['base']}/exercises/{entry['module']}, not once"
        )
    return source.replace(entry["old"], entry["new"])


def materialise(entry: dict, dest: Path) -> Path:
    """Write the entry as a submission folder at ``dest`` (a copy of its base with the patch
    applied: ``dest/exercises/...``) and return ``dest``. ``dest`` must not exist yet."""
    text = patched_source(entry)  # before copying: a bad entry leaves nothing behind
    dest = Path(dest)
    shutil.copytree(HONEST / entry["base"], dest, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "exercises" / entry["module"]).write_text(text, encoding="utf-8")
    return dest


def entry_by_id(entry_id: str, entries: list[dict] | None = None) -> dict:
    """The entry named ``entry_id``."""
    for entry in entries if entries is not None else load_bank():
        if entry["id"] == entry_id:
            return entry
    raise KeyError(entry_id)
