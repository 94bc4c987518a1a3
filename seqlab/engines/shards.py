"""A class cut into N shards, one per machine, and the shards' outputs merged into one gradebook.

``seqlab grade-all SUBS --out OUT --shard i/N`` grades the hand-ins of shard ``i`` (1 to N):
those whose safe name (``seqlab.submission.handins.hand_ins``: the name of their results folder
and gradebook row) hashes to it. The hash is SHA-256 of the name's UTF-8 bytes, the first 8
bytes read as a big-endian number, modulo N: the same on every machine, Python and rerun (not
Python's ``hash``, which is salted per process), and independent of the order the class folder
lists its entries, so the N machines of a Slurm array or a CI matrix take every hand-in exactly
once between them. A shard writes each hand-in's folder and ``gradebook-shard-i-of-N.csv``, never
gradebook.csv, the LMS files or the class report: N shards may share one output folder.

``seqlab gradebook OUT [--shard-out DIR ...] --submissions SUBS`` (:func:`merge_shards`) writes
those once, from every shard's folders: gradebook.csv, the LMS files and the class report (with
the similarity of the whole class under ``--similarity``), as one grade-all run writes them.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..gradebook import STATUS_FILE, collect, link_reports, write_class_report, write_gradebook
from ..submission.handins import WORK_DIR, hand_ins, shown


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1 to ``count``) of a class."""

    index: int
    count: int

    def holds(self, name: str) -> bool:
        digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    @property
    def gradebook(self) -> str:
        """The shard's own gradebook file: a name no other shard writes, so shards can share OUT."""
        return f"gradebook-shard-{self.index}-of-{self.count}.csv"


def parse_shard(text: str) -> Shard:
    """``i/N`` with 1 <= i <= N (a Slurm array's ``--array=1-N`` gives i as SLURM_ARRAY_TASK_ID)."""
    index, slash, count = text.partition("/")
    try:
        shard = Shard(int(index), int(count)) if slash else None
    except ValueError:
        shard = None
    if shard is None or not 1 <= shard.index <= shard.count:
        raise argparse.ArgumentTypeError(f"not a shard i/N with 1 <= i <= N: {text!r}")
    return shard


def draw_reports(
    rows: list[dict],
    folders: dict[str, Path | None],
    out: Path,
    similarity: bool,
    where: dict[str, Path],
    write: Callable[..., object] = write_class_report,
) -> None:
    """The class report (and its similarity section, over ``folders``: name -> the copy holding
    exercises/), drawn from the rows already recorded in gradebook.csv, each row linked to its
    report.html in ``where[name]``: a report that fails is an error in the log, and the grades
    stay as written. ``write``: the report's writer (grade-all passes its own name for it)."""
    try:
        from ..similarity import compare_class  # source text only, parsed here and never run

        similar = compare_class(folders) if similarity else None
    except Exception as exc:
        print(f"grade-all: error: the similarity of the class could not be computed: {_failure(exc)}", file=sys.stderr)
        similar = None
    try:
        for folder in dict.fromkeys(where.values()):
            link_reports([r for r in rows if where.get(r["submission"]) == folder], folder, out)
        write(out, rows, similar)
    except Exception as exc:
        print(f"grade-all: error: the class report could not be drawn: {_failure(exc)}", file=sys.stderr)


def _failure(exc: Exception) -> str:
    return f"{type(exc).__name__}: {shown(str(exc))[:300]} (gradebook.csv holds every grade)"


def write_class_lms(out: Path, rows: list[dict], submissions: Path, *, assignment: str, roster: Path | None) -> str:
    """The LMS files of a class's rows (``seqlab.lms``), each row bound to the name its hand-in
    had in the class folder (an LMS bulk download names the student); the line that says so."""
    from ..lms import report, write_lms

    results = [row["result"] for row in rows if row["result"] is not None]
    grades = {row["submission"]: row["result"].score if row["result"] else None for row in rows}
    max_score = max((r.max_score for r in results), default=0.0)
    sources = {name: shown(entry.name) for name, entry in hand_ins(submissions).named.items()}
    return report(*write_lms(out, grades, max_score, assignment=assignment, roster_path=roster, sources=sources))


def merge_shards(
    folders: list[Path],
    submissions: Path,
    out: Path,
    *,
    similarity: bool = False,
    assignment: str = "seqlab",
    roster: Path | None = None,
) -> tuple[list[dict], str]:
    """One gradebook of the class folder ``submissions`` from the shards' output ``folders`` (one
    shared folder, or one per shard): a row per hand-in, in the order and with the reasons one
    grade-all run gives; a hand-in no shard graded is a pending row, never a lost one. Writes
    gradebook.csv, the LMS files and the class report into ``out``; returns the rows and the LMS
    line."""
    names = list(hand_ins(submissions).named)
    where: dict[str, Path] = {}
    for folder in folders:  # a name graded in two folders: the first given wins, as documented
        for name in names:
            if name not in where and (Path(folder) / name / STATUS_FILE).is_file():
                where[name] = Path(folder)
    rows = []
    for name in names:
        (row,) = collect(where.get(name, Path(folders[0])), [name])
        rows.append(row)
    out.mkdir(parents=True, exist_ok=True)
    write_gradebook(out, rows)
    lms = write_class_lms(out, rows, submissions, assignment=assignment, roster=roster)
    copies = {name: _copy(where.get(name), name) for name in names}
    draw_reports(rows, copies, out, similarity, where)
    return rows, lms


def _copy(folder: Path | None, name: str) -> Path | None:
    """The copy of a hand-in its shard read (``OUT/_submissions/<name>``), if there is one."""
    copy = folder / WORK_DIR / name if folder is not None else None
    return copy if copy is not None and (copy / "exercises").is_dir() else None
